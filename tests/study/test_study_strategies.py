"""The study layer around strategies: vote's measured k, old `agentic` folders and manifests (no model)."""

from __future__ import annotations

import pytest

from t2c_lib.runs.layout import Cell
from t2c_lib.runs.runlog import AttemptLog
from t2c_lib.study.make import make_rules
from t2c_lib.study.manifest import _comparable
from t2c_lib.study.params import params_from_dict
from t2c_lib.study.steps import VoteBudgetUnknown, measured_vote_k


def test_vote_k_is_feedbacks_measured_mean_calls_rounded_up(tmp_path):
    params = params_from_dict({"strategies": ["feedback", "vote"]})
    vote = Cell("vote", "CoT", "full_schema")
    with pytest.raises(VoteBudgetUnknown, match="set vote_k.*run the feedback cell first"):
        measured_vote_k(params, vote, tmp_path)
    log = AttemptLog(Cell("feedback", "CoT", "full_schema").directory(tmp_path))
    for qid, calls in (("a", 1), ("b", 3), ("c", 1)):  # mean 5/3
        log.append_question({"question_id": qid, "llm_calls": calls})
    assert measured_vote_k(params, vote, tmp_path) == 2
    assert measured_vote_k(params.with_overrides(vote_k=5), vote, tmp_path) == 5


def test_vote_k_reads_an_old_agentic_folder_by_its_iterations(tmp_path):
    log = AttemptLog(tmp_path / "agentic" / "CoT_Full")
    (tmp_path / "agentic" / "CoT_Full" / "attempts.jsonl").write_text("{}\n")
    for qid, iterations in (("a", 3), ("b", 3)):
        log.append_question({"question_id": qid, "iterations": iterations})
    assert Cell("feedback", "CoT", "full_schema").directory(tmp_path) == tmp_path / "agentic" / "CoT_Full"
    assert measured_vote_k(params_from_dict({}), Cell("vote", "CoT", "full_schema"), tmp_path) == 3


def test_new_runs_use_the_strategy_folder(tmp_path):
    assert Cell("feedback", "CoT", "full_schema").directory(tmp_path) == tmp_path / "feedback" / "CoT_Full"
    (tmp_path / "feedback" / "CoT_Full").mkdir(parents=True)  # a make stamp folder alone does not switch
    (tmp_path / "agentic" / "CoT_Full").mkdir(parents=True)
    assert Cell("feedback", "CoT", "full_schema").directory(tmp_path) == tmp_path / "feedback" / "CoT_Full"


def test_an_old_agentic_manifest_resumes_as_feedback():
    old = {
        "mode": "agentic",
        "configuration": "CoT_Full",
        "git_commit": "a",
        "signature": "s",
        "parameters": {"modes": ["single-pass", "agentic"], "max_iterations": 3},
    }
    new = {
        "strategy": "feedback",
        "configuration": "CoT_Full",
        "git_commit": "b",
        "signature": "t",
        "parameters": {
            "strategies": ["single-pass", "feedback"],
            "max_iterations": 3,
            "vote_k": None,
            "vote_temperature": 0.7,
        },
    }
    assert _comparable(old) == _comparable(new)
    vote = {**new, "strategy": "vote"}
    assert _comparable({**vote, "parameters": {**new["parameters"], "vote_k": 4}}) != _comparable(vote)


def test_make_rules_run_every_strategy_after_its_feedback_twin():
    params = params_from_dict(
        {
            "run_id": "r",
            "prompt_types": ["CoT"],
            "schema_formats": ["full_schema"],
            "strategies": ["single-pass", "feedback", "vote", "verifier"],
        }
    )
    rules = make_rules(params, "params/s.yaml")
    twin = "results/r/feedback/CoT_Full/.inferred"
    for strategy in ("single-pass", "vote", "verifier"):
        assert f"results/r/{strategy}/CoT_Full/.inferred: params/s.yaml $(STAMP) {twin}" in rules
    assert "results/r/feedback/CoT_Full/.inferred: params/s.yaml $(STAMP) | $(SEED)\n" in rules  # seeded first
    assert "-p strategy vote" in rules
