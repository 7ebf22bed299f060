"""`t2c ask --verbose`: each attempt's validators, what its query changed and whether it repeats a failed one."""

from __future__ import annotations

import pytest

from t2c_lib.cli.agent import AttemptPrinter
from tests.cli.test_agent_cli import cache_dir, t2c  # noqa: F401  (the module's fixture: a loaded kurikulum store)
from tests.helpers import recorded

BAD = "MATCH (m:MK)-[:PURSUED_IN]->(t:topic {nama: 'x'}) RETURN m.sks"
GOOD = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks"


def test_the_printer_names_a_repeat_and_each_change(capsys):
    from t2c_lib.agent import ErrorType

    schema = ErrorType.SCHEMA_ERROR
    printer = AttemptPrinter(verbose=True)
    for a in (
        recorded("q", 1, BAD, schema),
        recorded("q", 2, BAD + " ;", schema),
        recorded("q", 3, "", ErrorType.SYNTAX_ERROR),
        recorded("q", 4, GOOD),
    ):
        printer(a)
    out = capsys.readouterr().out
    blocks = out.split("Attempt ")[1:]
    assert "validators: guard ok -> syntax ok -> schema FAILED" in blocks[0] and "change:    first attempt" in blocks[0]
    assert "change:    none: the same query as attempt 1" in blocks[1]
    assert "REPEATS a failed query: attempt 1's, which failed the chain" in blocks[1]
    assert "change:    no query extracted" in blocks[2] and "repeats a failed query: no" in blocks[2]
    assert "change:    new (attempt 3 had no query)" in blocks[3]
    assert (
        "validators: guard ok -> syntax ok -> schema ok -> properties ok -> execution ok -> non_empty ok" in blocks[3]
    )


def test_without_verbose_the_attempts_print_as_before(capsys):
    printer = AttemptPrinter()
    printer(recorded("q", 1, BAD))
    printer(recorded("q", 2, BAD))
    out = capsys.readouterr().out
    assert "change:" not in out and "validators:" not in out and "repeats" not in out


@pytest.mark.slow
def test_ask_verbose_through_a_loopback_endpoint_shows_the_repeat(cache_dir):  # noqa: F811
    """A real OpenAI-compatible server on 127.0.0.1 answers the same failed query twice, then a good one."""
    from tests.helpers.fault_server import FaultServer, ok

    with FaultServer() as server:
        server.queue(ok(f"<cypher>{BAD}</cypher>"), ok(f"<cypher>{BAD}</cypher>"), ok(f"<cypher>{GOOD}</cypher>"))
        env = {"T2C_LLM_BASE_URL": server.base_url, "T2C_LLM_API_KEY": "test-key", "T2C_MODEL": ""}
        done = t2c(
            "ask",
            "--verbose",
            "--model",
            "loopback-model",
            "--no-cache",
            "Berapa SKS mata kuliah 'Basis Data'?",
            cache_dir=cache_dir,
            extra_env=env,
        )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "validators: guard ok -> syntax ok -> schema FAILED" in out
    assert "change:    none: the same query as attempt 1" in out
    assert "REPEATS a failed query: attempt 1's, which failed the chain" in out
    assert "refinements: 2 model replies, 2 accepted; changes: none 1, edit 0, new 1, no_query 0" in out
    assert "repeat rate, all model replies: 1/2 repeating an already failed query" in out
    assert "repeat rate, accepted refinements: 1/2 repeating an already failed query" in out  # no guard: equal
    assert "SUCCESS after 3 attempt(s)" in out
