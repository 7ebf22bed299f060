"""parse_response against fixture cases: each fallback, trailing prose, and garbage."""

from __future__ import annotations

import pytest
import yaml

from t2c_lib.llm.parse import ParsedResponse, QuerySource, parse_response
from tests.helpers import FIXTURES

CASES = yaml.safe_load((FIXTURES / "llm" / "parse_cases.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_parse_case(case: dict) -> None:
    parsed = parse_response(case["input"])
    assert parsed.query == case["query"]
    assert parsed.source == QuerySource(case["source"])
    if "reasoning" in case:
        assert parsed.reasoning == case["reasoning"]
    if case["query"]:
        assert parsed.ok and parsed.reason == ""
    else:
        assert not parsed.ok and parsed.reason, "an empty query must come with a reason"


def test_fixture_covers_every_source() -> None:
    assert {QuerySource(c["source"]) for c in CASES} == set(QuerySource)


@pytest.mark.parametrize("junk", [b"MATCH (n) RETURN n", 42, ["MATCH"], {"q": 1}, "\x00\x01<cypher", "```", "<think>"])
def test_never_raises_on_junk(junk: object) -> None:
    parsed = parse_response(junk)
    assert isinstance(parsed, ParsedResponse)
    assert isinstance(parsed.query, str)


def test_reason_names_the_problem() -> None:
    assert "not text" in parse_response(None).reason
    assert "empty" in parse_response("").reason
    assert "<cypher>" in parse_response("<cypher></cypher>").reason
