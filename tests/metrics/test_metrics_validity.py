"""KG-valid from validator verdicts (CyVer: syntax ok, schema score 1, properties 1 or n/a)."""

from __future__ import annotations

from t2c_lib.agent import Attempt, ErrorType, ValidationResult
from t2c_lib.metrics.output import kg_valid


def chain(*oks: bool, names=("guard", "syntax", "schema", "properties", "execution", "non_empty")):
    return [ValidationResult(n, ok, None if ok else ErrorType.SYNTAX_ERROR) for n, ok in zip(names, oks)]


def test_all_kg_steps_passing_is_valid_even_if_execution_fails():
    assert kg_valid(chain(True, True, True, True, False)) == 1.0
    assert kg_valid(chain(True, True, True, True, True, False)) == 1.0


def test_a_failing_kg_step_is_invalid():
    assert kg_valid(chain(True, False)) == 0.0
    assert kg_valid(chain(True, True, False)) == 0.0
    assert kg_valid(chain(True, True, True, False)) == 0.0


def test_a_step_that_never_ran_is_invalid():
    assert kg_valid(chain(True, True, True)) == 0.0
    assert kg_valid([]) == 0.0


def test_properties_not_applicable_counts_as_ok():
    vals = chain(True, True, True) + [ValidationResult("properties", True, details={"applicable": False})]
    assert kg_valid(vals) == 1.0


def test_agrees_with_attempt_kg_valid():
    for oks in [(True,) * 6, (True, True, True, False), (True, False), (True, True, True, True, False)]:
        vals = chain(*oks)
        a = Attempt("q", 1, "h", "", "MATCH (n) RETURN n", vals, all(oks), None, None)
        assert kg_valid(vals) == float(a.kg_valid)


def test_accepts_attempts_jsonl_dicts():
    assert kg_valid([v.to_dict() for v in chain(True, True, True, True)]) == 1.0
    assert kg_valid([v.to_dict() for v in chain(True, True, False)]) == 0.0
