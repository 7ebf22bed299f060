"""Agentic metrics against hand-computed values on a recorded-attempts fixture (attempts.jsonl).

The fixture: 9 questions, max_iterations 3, every ErrorType; q8 was redone by a resumed
run (its abandoned first attempt sits earlier in the file and must be ignored).

  q1 ok                          q6 ok
  q2 SYNTAX, ok                  q7 EMPTY_RESULT, ok
  q3 SCHEMA, PROPERTIES, ok      q8 SYNTAX, SYNTAX, ok
  q4 NO_QUERY, UNSAFE, TIMEOUT   q9 TIMEOUT, TIMEOUT, SCHEMA
  q5 EXECUTION, EMPTY, EMPTY
"""

from __future__ import annotations

import json

import pytest

from t2c_lib.agent import Attempt, ErrorType
from t2c_lib.metrics.agentic import agentic_metrics, group_attempts, refinements
from t2c_lib.records import EDIT_SIMILARITY, Change, Revision, normalized_query, revisions, token_similarity
from tests.helpers import FIXTURES

FIXTURE = FIXTURES / "metrics" / "attempts.jsonl"


def records() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def m():
    return agentic_metrics(records(), max_iterations=3)


def test_fixture_has_every_error_type():
    seen = {r["error_type"] for r in records() if r["error_type"]}
    assert seen == {e.value for e in ErrorType}


def test_rates(m):
    assert m.n_questions == 9
    assert m.success_rate == pytest.approx(6 / 9)  # q1 q2 q3 q6 q7 q8
    assert m.first_attempt_success_rate == pytest.approx(2 / 9)  # q1 q6
    assert m.mean_iterations == pytest.approx(21 / 9)  # 1+2+3+3+3+1+2+3+3


def test_recovery(m):
    assert (m.n_initially_failed, m.n_recovered) == (7, 4)  # q2 q3 q7 q8 of q2 q3 q4 q5 q7 q8 q9
    assert m.recovery_rate == pytest.approx(4 / 7)


def test_error_distribution_over_all_failed_attempts(m):
    assert m.n_failed_attempts == 15
    assert m.error_counts == {
        "NO_QUERY": 1,
        "UNSAFE_QUERY": 1,
        "SYNTAX_ERROR": 3,
        "SCHEMA_ERROR": 2,
        "PROPERTIES_ERROR": 1,
        "EXECUTION_ERROR": 1,
        "TIMEOUT": 2,
        "RESOURCE_LIMIT": 1,
        "EMPTY_RESULT": 3,
    }
    assert m.error_distribution["SYNTAX_ERROR"] == pytest.approx(3 / 15)
    assert m.error_distribution["NO_QUERY"] == pytest.approx(1 / 15)
    assert sum(m.error_distribution.values()) == pytest.approx(1.0)


def test_recovery_per_first_error_type(m):
    assert m.first_error_counts == {
        "NO_QUERY": 1,
        "UNSAFE_QUERY": 0,
        "SYNTAX_ERROR": 2,
        "SCHEMA_ERROR": 1,
        "PROPERTIES_ERROR": 0,
        "EXECUTION_ERROR": 1,
        "TIMEOUT": 1,
        "RESOURCE_LIMIT": 0,
        "EMPTY_RESULT": 1,
    }
    assert m.recovery_by_error_type == {
        "NO_QUERY": 0.0,
        "UNSAFE_QUERY": None,
        "SYNTAX_ERROR": 1.0,
        "SCHEMA_ERROR": 1.0,
        "PROPERTIES_ERROR": None,
        "EXECUTION_ERROR": 0.0,
        "TIMEOUT": 0.0,
        "RESOURCE_LIMIT": None,
        "EMPTY_RESULT": 1.0,
    }


def test_cumulative_success(m):
    assert m.cumulative_success == pytest.approx([2 / 9, 4 / 9, 6 / 9])


def test_cumulative_success_extends_to_max_iterations():
    m5 = agentic_metrics(records(), max_iterations=5)
    assert m5.cumulative_success == pytest.approx([2 / 9, 4 / 9, 6 / 9, 6 / 9, 6 / 9])


def test_attempt_objects_and_dicts_agree(m):
    objs = [Attempt.from_dict(r) for r in records()]
    assert agentic_metrics(objs, max_iterations=3) == m
    assert json.loads(json.dumps(m.to_dict()))["recovery_rate"] == pytest.approx(4 / 7)


def test_resumed_question_keeps_only_its_last_run():
    q8 = group_attempts(records())["q8"]
    assert [a.prompt_hash for a in q8] == ["h-q8-1", "h-q8-2", "h-q8-3"]


def test_recovery_rate_is_undefined_when_nobody_failed_first():
    firsts = [r for r in records() if r["question_id"] in ("q1", "q6")]
    m = agentic_metrics(firsts, max_iterations=1)
    assert m.recovery_rate is None and m.n_initially_failed == 0
    assert m.success_rate == 1.0 and m.cumulative_success == [1.0]
    assert all(v is None for v in m.error_distribution.values())


def test_single_pass_view_of_first_attempts():
    firsts = [r for r in records() if r["iteration"] == 1 and r["prompt_hash"] != "h-q8-abandoned-1"]
    m = agentic_metrics(firsts, max_iterations=1)
    assert m.success_rate == pytest.approx(2 / 9) and m.recovery_rate == 0.0
    assert m.mean_iterations == 1.0


def test_failed_attempt_without_error_type_counts_as_unknown():
    r = dict(records()[1], error_type=None)  # q2 iteration 1, failed
    m = agentic_metrics([r], max_iterations=3)
    assert m.error_counts["UNKNOWN"] == 1 and m.recovery_by_error_type["UNKNOWN"] == 0.0


def test_too_many_iterations_fail():
    with pytest.raises(ValueError, match="more than max_iterations=2"):
        agentic_metrics(records(), max_iterations=2)


def test_gaps_in_iterations_fail():
    rs = [r for r in records() if not (r["question_id"] == "q3" and r["iteration"] == 2)]
    with pytest.raises(ValueError, match="question q3"):
        agentic_metrics(rs, max_iterations=3)


def test_no_attempts_fail():
    with pytest.raises(ValueError, match="no attempts"):
        agentic_metrics([], max_iterations=3)
    with pytest.raises(ValueError, match="max_iterations"):
        agentic_metrics(records(), max_iterations=0)


# --- what refinements did: repeats of a failed query and the change from the attempt before ------------------

BROKEN = "MATCH (p:MK)-[:PURSUED_IN]->(m:MK) RETURN DISTINCT m.jalur"


def attempt(iteration: int, query: str, ok: bool = False, mode: str = "feedback", qid: str = "q") -> Attempt:
    """A hand-made attempt: only the fields the revision rules read (query, order, verdict, strategy)."""
    return Attempt(
        question_id=qid,
        iteration=iteration,
        prompt_hash=f"h{iteration}",
        raw_response=query,
        query=query,
        validations=[],
        ok=ok,
        error_type=None if ok else ErrorType.SCHEMA_ERROR,
        feedback=None,
        mode=mode,
    )


def run_of(*steps: tuple[str, bool], mode: str = "feedback") -> list[Attempt]:
    return [attempt(i, q, ok, mode) for i, (q, ok) in enumerate(steps, start=1)]


def test_a_repeat_is_the_same_failed_query_whitespace_and_a_trailing_semicolon_aside():
    run = run_of((BROKEN, False), ("  MATCH (p:MK)-[:PURSUED_IN]->(m:MK)\n\tRETURN DISTINCT m.jalur ;", False))
    first, second = revisions(run)
    assert first is None  # a first attempt revises nothing
    assert second == Revision(Change.NONE, True, 1)
    assert normalized_query(" RETURN  1 ;; ") == "RETURN 1"
    r = refinements(run)
    assert (r.n_refinements, r.n_repeated_refinements, r.refinement_repeat_rate) == (1, 1, 1.0)
    assert r.change_counts() == {"none": 1, "edit": 0, "new": 0, "no_query": 0} and r.only_repeats


def test_an_edit_a_new_query_and_no_query():
    flipped = "MATCH (p:MK)<-[:PURSUED_IN]-(m:MK) RETURN DISTINCT m.jalur"  # one direction flipped
    other = "MATCH (s:SO) RETURN count(s) AS n"
    run = run_of((BROKEN, False), (flipped, False), ("", False), (other, False), (flipped, True))
    assert [r.change if r else None for r in revisions(run)] == [
        None,
        Change.EDIT,
        Change.NO_QUERY,
        Change.NEW,  # after an attempt with no query, any query is new
        Change.NEW,
    ]
    # the last one repeats attempt 2's failed query although attempt 4 came between
    assert [r.repeats_failed if r else None for r in revisions(run)] == [None, False, False, False, True]
    assert revisions(run)[-1].repeats_iteration == 2
    r = refinements(run)
    assert (r.n_refinements, r.n_repeated_refinements) == (4, 1) and not r.only_repeats
    assert r.change_counts() == {"none": 0, "edit": 1, "new": 2, "no_query": 1}
    assert token_similarity(BROKEN, flipped) >= EDIT_SIMILARITY > token_similarity(BROKEN, other)


def test_only_a_failed_query_is_repeated_and_case_and_literals_count():
    run = run_of(
        ("MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", True),
        ("MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", True),
    )
    assert revisions(run)[1] == Revision(Change.NONE, False, None)  # same query, but it never failed
    lower = run_of(
        ("MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", False),
        ("MATCH (m:MK {nama: 'basis data'}) RETURN m.sks", False),
    )
    assert revisions(lower)[1].change is Change.EDIT and not revisions(lower)[1].repeats_failed
    empty = run_of(("", False), ("  ", False))
    assert revisions(empty)[1] == Revision(Change.NO_QUERY, False, None)  # no query is never a repeat


def test_a_query_the_lexer_refuses_still_compares():
    run = run_of(
        ("MATCH (m:MK {nama: 'Basis Data}) RETURN m.sks", False),
        ("MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", False),
    )
    assert revisions(run)[1].change is Change.EDIT


def test_vote_samples_are_not_refinements():
    run = run_of((BROKEN, False), (BROKEN, False), (BROKEN, True), mode="vote")
    assert revisions(run)[1].repeats_failed  # the fact is recorded ...
    assert refinements(run, samples=True).n_refinements == 0  # ... but independent samples revise nothing
    assert refinements(run, samples=True).refinement_repeat_rate is None
    assert refinements(run).n_refinements == 2  # the declaration decides, not the name in the records


def test_old_attempts_files_are_rescored_from_their_queries(m):
    """The fixture predates `change`/`repeats_failed`: every later attempt repeats the first query (q4 aside)."""
    assert "change" not in records()[0] and "repeats_failed" not in records()[0]
    assert (m.n_refinements, m.n_repeated_refinements) == (12, 10)
    assert m.refinement_repeat_rate == pytest.approx(10 / 12)
    assert m.refinement_changes == {"none": 10, "edit": 0, "new": 2, "no_query": 0}  # q4: '' -> CREATE -> MATCH
    assert (m.n_refined_questions, m.n_questions_only_repeats) == (7, 6)


def test_recorded_fields_do_not_override_the_queries():
    wrong = [dict(r, change="new", repeats_failed=False) for r in records()]
    assert agentic_metrics(wrong, max_iterations=3).n_repeated_refinements == 10


def test_recovered_counts_per_first_error_type(m):
    recovered = m.first_error_recovered
    assert recovered["SYNTAX_ERROR"] == 2 and recovered["SCHEMA_ERROR"] == 1 and recovered["EMPTY_RESULT"] == 1
    assert recovered["NO_QUERY"] == recovered["TIMEOUT"] == recovered["EXECUTION_ERROR"] == 0
    assert sum(recovered.values()) == m.n_recovered


def test_very_long_queries_compare_on_their_first_tokens():
    long = "RETURN " + " + ".join(["1"] * 2000)
    run = run_of((long, False), (long + " + 2", False))
    assert revisions(run)[1] == Revision(Change.EDIT, False, None)  # equal up to COMPARED_TOKENS, yet not the same
    assert token_similarity(long, long + " + 2") == 1.0
