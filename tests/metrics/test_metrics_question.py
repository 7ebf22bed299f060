"""`metrics.question.score_attempts`: one question's attempts scored under every preset, on the real store."""

from __future__ import annotations

from t2c_lib.metrics.question import chosen_attempts, score_attempts
from t2c_lib.metrics.scores import score_question
from t2c_lib.metrics.scoring import scoring_names
from t2c_lib.records import Attempt

GOLD = "MATCH (m:MK) RETURN m.nama"
WRONG = "MATCH (m:MK) RETURN m.sks"


def attempt(iteration: int, query: str) -> Attempt:
    return Attempt("q1", iteration, "h", f"<cypher>{query}</cypher>", query, [], True, None, None)


def test_every_preset_first_final_oracle_harm_and_each_attempt(kurikulum_store) -> None:
    presets = ["kg-axel", *(n for n in scoring_names() if n != "kg-axel")]
    group = [attempt(1, WRONG), attempt(2, GOLD), attempt(3, WRONG)]
    result = score_attempts(
        GOLD, group, 3, kurikulum_store, presets=presets, weights="kg-axel", timeout_s=10.0, question_id="q1"
    )
    assert list(result.presets) == presets and result.headline == "kg-axel"
    assert result.first is group[0] and result.final is group[2] and result.final_query == WRONG
    assert [a.pass_at_1 for a in result.attempts] == [0.0, 1.0, 0.0]
    assert result.oracle == 1.0 and result.harmed == 1  # a right attempt, a wrong final one
    for name in presets:  # the same numbers as scoring the final query alone
        alone = score_question(GOLD, WRONG, kurikulum_store, [], weights="kg-axel", scoring=name, question_id="q1")
        assert result.presets[name].final == alone and result.presets[name].pass_at_1_first == 0.0
    chosen = score_attempts(
        GOLD, group, 2, kurikulum_store, presets=presets, weights="kg-axel", timeout_s=10.0, question_id="q1"
    )
    assert chosen.final is group[1] and chosen.harmed == 0 and chosen.headline_scores.pass_at_1 == 1.0  # vote's pick


def test_no_attempt_scores_nothing_right() -> None:
    assert chosen_attempts([], None) == (None, None)
    group = [attempt(1, GOLD), attempt(2, WRONG)]
    assert chosen_attempts(group, 5) == (group[0], group[1])  # an iteration past the attempts: the last
