"""Issue 54, item 4: one vocabulary — attempt kinds, the legacy strategy name, the few-shot example.

Attempts are written to published files, so the enum must write exactly the strings the bare kinds
wrote (`generate`, `verify`, `rejected_repeat`, `corrector`), through every writer: the record's
dict, `json.dumps`, an f-string and a pandas CSV.
"""

from __future__ import annotations

import json

import pandas as pd

from t2c_lib import datasets, prompts
from t2c_lib.agent.names import LEGACY_STRATEGY_NAMES, canonical_strategy
from t2c_lib.metrics.agentic import EXTRA_KINDS
from t2c_lib.records import NO_MODEL_CALL, Attempt, AttemptKind
from tests.helpers import recorded


def test_the_kinds_are_the_strings_the_attempt_logs_hold() -> None:
    assert [k.value for k in AttemptKind] == ["generate", "verify", "rejected_repeat", "corrector", "follow_up_edit"]
    for kind in AttemptKind:
        assert str(kind) == f"{kind}" == kind.value and json.dumps(kind) == f'"{kind.value}"'
    frame = pd.DataFrame({"kind": list(AttemptKind)})
    assert frame.to_csv(index=False).split() == [
        "kind",
        "generate",
        "verify",
        "rejected_repeat",
        "corrector",
        "follow_up_edit",
    ]


def test_an_attempt_writes_its_kind_as_a_plain_string_and_reads_it_back_equal() -> None:
    attempt = Attempt.from_dict({**recorded("q1", 2, "RETURN 1").to_dict(), "kind": AttemptKind.CORRECTOR})
    written = attempt.to_dict()
    assert type(written["kind"]) is str and written["kind"] == "corrector"
    back = Attempt.from_dict(json.loads(json.dumps(written)))
    assert back.kind == AttemptKind.CORRECTOR and not back.called_model
    assert (
        "corrector" in NO_MODEL_CALL
        and "follow_up_edit" in NO_MODEL_CALL
        and {"rejected_repeat", "corrector"} == EXTRA_KINDS
    )
    assert Attempt.from_dict({**written, "kind": "generate"}).kind is not AttemptKind.GENERATE  # the string it holds
    assert Attempt.from_dict({**written, "kind": "generate"}).kind == AttemptKind.GENERATE


def test_one_legacy_name_map_and_one_example() -> None:
    assert LEGACY_STRATEGY_NAMES == {"agentic": "feedback"}
    assert canonical_strategy("agentic") == "feedback" and canonical_strategy("vote") == "vote"
    assert prompts.Example is datasets.Example
