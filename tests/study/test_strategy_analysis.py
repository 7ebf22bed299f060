"""Strategy tables, error transitions, the validator audit and the gold audit, from recorded attempts (no model).

The attempts are written by hand (a scripted record of what strategies could have done)
and scored for real on the tiny embedded graph.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from t2c_lib.agent import ErrorType
from t2c_lib.metrics import columns
from t2c_lib.records import Change
from t2c_lib.report.analysis import STRATEGY_SUMMARY, analyze_run, readable_summary, write_tables
from t2c_lib.report.plots import FIGURES, export_figures
from t2c_lib.runs.layout import ATTEMPT_SCORES_FILE, GOLD_AUDIT_FILE, Cell
from t2c_lib.runs.runlog import AttemptLog
from t2c_lib.study.evaluation import evaluate_cell, write_gold_audit
from tests.helpers import WRONG, recorded

BROKEN = "MATCH (p:Person RETURN p"
SYNTAX, SCHEMA = ErrorType.SYNTAX_ERROR, ErrorType.SCHEMA_ERROR


@pytest.fixture()
def strategy_run(tiny_dataset, tiny_store, tmp_path):
    q1, q2, q3 = tiny_dataset.questions
    run_dir = tmp_path / "run"
    plans = {
        # single-pass: q1 broken, q2 right, q3 wrong
        "single-pass": {
            q1.id: [recorded(q1.id, 1, BROKEN, SYNTAX)],
            q2.id: [recorded(q2.id, 1, q2.cypher)],
            q3.id: [recorded(q3.id, 1, WRONG)],
        },
        # feedback: recovers q1 at attempt 2
        "feedback": {
            q1.id: [recorded(q1.id, 1, BROKEN, SYNTAX), recorded(q1.id, 2, q1.cypher)],
            q2.id: [recorded(q2.id, 1, q2.cypher)],
            q3.id: [recorded(q3.id, 1, WRONG)],
        },
        # verifier: on q2 "corrects" the right query into a wrong one (harm); the schema
        # validator wrongly rejects q3's right query (a false rejection)
        "verifier": {
            q1.id: [recorded(q1.id, 1, BROKEN, SYNTAX)],
            q2.id: [recorded(q2.id, 1, q2.cypher), recorded(q2.id, 2, WRONG, kind="verify")],
            q3.id: [recorded(q3.id, 1, q3.cypher, SCHEMA), recorded(q3.id, 2, q3.cypher, SCHEMA, kind="verify")],
        },
        # vote: 3 samples; q1's answer is sample 2 (the winner), not the last
        "vote": {
            q1.id: [recorded(q1.id, 1, WRONG), recorded(q1.id, 2, q1.cypher), recorded(q1.id, 3, WRONG)],
            q2.id: [recorded(q2.id, i, q2.cypher) for i in (1, 2, 3)],
            q3.id: [recorded(q3.id, i, WRONG) for i in (1, 2, 3)],
        },
    }
    finals = {"vote": {q1.id: 2}}
    for strategy, plan in plans.items():
        cell = Cell(strategy, "Zero-Shot", "full_schema")
        log = AttemptLog(cell.directory(run_dir))
        for qid, attempts in plan.items():
            for a in attempts:
                a.mode = strategy
                log.append_attempt(a)
            record = {"question_id": qid, "status": "x", "llm_calls": len(attempts)}
            if qid in finals.get(strategy, {}):
                record["final_iteration"] = finals[strategy][qid]
            log.append_question(record)
        evaluate_cell(cell, run_dir, tiny_dataset.questions, tiny_dataset, tiny_store, "kg-axel", 3, 10.0)
    write_gold_audit(run_dir, tiny_dataset.questions, tiny_store, 10.0)
    return run_dir


def test_evaluation_scores_every_attempt_and_follows_the_chosen_one(strategy_run, tiny_dataset):
    q1 = tiny_dataset.questions[0].id
    vote = pd.read_csv(strategy_run / "vote" / "Zero-Shot_Full" / "metrics.csv").set_index("question_id")
    assert (
        vote.loc[q1, "final_iteration"] == 2
        and vote.loc[q1, "pass_at_1_final__t2c"] == 1.0
        and vote.loc[q1, "llm_calls"] == 3
    )
    attempts = pd.read_csv(strategy_run / "verifier" / "Zero-Shot_Full" / ATTEMPT_SCORES_FILE)
    assert list(attempts["kind"]) == ["generate", "generate", "verify", "generate", "verify"]
    assert list(attempts["result_correct"]) == [0, 1, 0, 1, 1]


def test_strategy_table(strategy_run, tiny_dataset):
    table = analyze_run(strategy_run, tiny_dataset.strata_columns).strategies
    rows = table[table["configuration"] == "Zero-Shot_Full"].set_index("strategy")
    assert rows.loc["single-pass", "pass_at_1_final"] == pytest.approx(1 / 3)
    assert rows.loc["feedback", "pass_at_1_first"] == pytest.approx(1 / 3)
    assert rows.loc["feedback", "pass_at_1_final"] == pytest.approx(2 / 3)
    assert rows.loc["feedback", "llm_calls"] == pytest.approx(4 / 3)
    assert rows.loc["feedback", "tokens"] == pytest.approx(4 / 3 * 120)
    assert rows.loc["verifier", "pass_at_1_final"] == pytest.approx(
        1 / 3
    )  # q3 is right but rejected: counts as correct rows
    assert rows.loc["verifier", "harm_rate"] == pytest.approx(1 / 3)  # q2: right at attempt 1, wrong at the end
    assert rows.loc["verifier", "oracle_at_n"] == pytest.approx(2 / 3)
    assert rows.loc["verifier", "kg_valid_structural"] == pytest.approx(1 / 3)
    assert rows.loc["vote", "pass_at_1_final"] == pytest.approx(2 / 3) and rows.loc["vote", "llm_calls"] == 3
    # feedback vs single-pass: one discordant pair in feedback's favour
    assert (
        rows.loc["feedback", "pass_at_1_final_mcnemar_b"] == 0
        and rows.loc["feedback", "pass_at_1_final_mcnemar_c"] == 1
    )
    assert rows.loc["feedback", "pass_at_1_final_mcnemar_p_value"] == pytest.approx(1.0)
    assert pd.isna(rows.loc["single-pass", "pass_at_1_final_mcnemar_p_value"])
    assert (table["pass_at_1_final_mcnemar_p_holm"].dropna() >= table["pass_at_1_final_mcnemar_p_value"].dropna()).all()
    pooled = table[table["configuration"] == "ALL"].set_index("strategy")
    assert pooled.loc["vote", "n"] == 3


def test_error_transitions(strategy_run, tiny_dataset):
    moves = analyze_run(strategy_run, tiny_dataset.strata_columns).transitions
    fb = moves[moves["strategy"] == "feedback"]
    assert fb[["from", "to", "count"]].values.tolist() == [["SYNTAX_ERROR", "OK", 1]]
    ver = moves[moves["strategy"] == "verifier"].set_index(["from", "to"])["count"]
    assert ver[("OK", "OK")] == 1 and ver[("SCHEMA_ERROR", "SCHEMA_ERROR")] == 1


def test_validator_audit_counts_false_and_gold_rejections(strategy_run, tiny_dataset):
    audit = analyze_run(strategy_run, tiny_dataset.strata_columns).validator_audit
    ver = audit[audit["strategy"] == "verifier"].set_index("validator")
    assert ver.loc["schema", "rejections"] == 2 and ver.loc["schema", "false_rejections"] == 2
    assert ver.loc["syntax", "false_rejections"] == 0
    gold = pd.read_csv(strategy_run / GOLD_AUDIT_FILE, keep_default_na=False)
    assert len(gold) == 3 and (gold["failed_validator"] == "").all()  # the real chain accepts every tiny gold query
    assert (audit["gold_rejections"] == 0).all() and (audit["gold_n"] == 3).all()


@pytest.mark.slow
def test_strategy_figure_and_tables_are_written(strategy_run, tiny_dataset, tmp_path):
    tables = analyze_run(strategy_run, tiny_dataset.strata_columns)
    names = {p.name for p in write_tables(tables, strategy_run)}
    assert {"strategies.csv", "transitions.csv", "validator_audit.csv"} <= names
    assert "strategy_cost_effectiveness" in FIGURES
    written = {p.name for p in export_figures(tables, tmp_path / "figs")}
    assert "strategy_cost_effectiveness.pdf" in written


def test_what_the_refinements_did_is_in_every_table(strategy_run, tiny_dataset):
    """Repeats of a failed query, changes and per-error recovery: metrics.csv, attempt scores, summary, tables."""
    verifier = strategy_run / "verifier" / "Zero-Shot_Full"
    q1, q2, q3 = (q.id for q in tiny_dataset.questions)
    metrics = pd.read_csv(verifier / "metrics.csv").set_index("question_id")
    # q3: the verifier kept the query that failed the schema check: a refinement repeating a failed query
    assert metrics.loc[q3, ["n_refinements", "n_repeated_refinements", "n_change_none"]].tolist() == [1, 1, 1]
    assert metrics.loc[q2, ["n_refinements", "n_repeated_refinements"]].tolist() == [1, 0]  # q2's query had passed
    assert metrics.loc[q1, "n_refinements"] == 0
    scores = pd.read_csv(verifier / ATTEMPT_SCORES_FILE, keep_default_na=False)
    assert list(scores["change"]) == ["", "", "edit", "", "none"]  # q2: count(m) -> m.title is a small edit
    assert [str(v) for v in scores["repeats_failed"]] == ["", "", "0", "", "1"]
    summary = json.loads((verifier / "summary.json").read_text())
    assert summary["refinement_repeat_rate"] == 0.5 and summary["accepted_refinement_repeat_rate"] == 0.5
    assert summary["agentic"]["refinement_changes"] == {"none": 1, "edit": 1, "new": 0, "no_query": 0}
    assert summary["agentic"]["first_error_recovered"]["SCHEMA_ERROR"] == 0

    tables = analyze_run(strategy_run, tiny_dataset.strata_columns)
    rows = tables.strategies[tables.strategies["configuration"] == "ALL"].set_index("strategy")
    assert rows.loc["verifier", ["n_refinements", "n_repeated_refinements", "refinement_repeat_rate"]].tolist() == [
        2,
        1,
        0.5,
    ]
    assert rows.loc["feedback", "refinement_repeat_rate"] == 0.0
    # no repeat guard rejected anything here: every refinement stood, so the two repeat rates are equal
    for rate in columns.REPEAT_RATES[1:]:
        assert rows[rate.refinements].tolist() == rows["n_refinements"].tolist()
        assert rows[rate.repeats].tolist() == rows["n_repeated_refinements"].tolist()
        assert rows[rate.name].equals(rows[columns.REFINEMENT_REPEAT_RATE])
    assert pd.isna(rows.loc["vote", "refinement_repeat_rate"]) and rows.loc["vote", "n_refinements"] == 0
    assert pd.isna(rows.loc["single-pass", "refinement_repeat_rate"])
    assert rows.loc["feedback", ["n_initially_failed", "n_recovered", "recovery_rate"]].tolist() == [1, 1, 1.0]
    assert {columns.change_column(c) for c in Change} <= set(tables.strategies.columns)
    assert set(STRATEGY_SUMMARY) <= set(tables.strategies.columns)

    by_error = tables.recovery_by_strategy.set_index(["strategy", "configuration", "error_type"])
    assert by_error.loc[("feedback", "ALL", "SYNTAX_ERROR"), ["n_first", "n_recovered"]].tolist() == [1, 1]
    assert by_error.loc[("verifier", "Zero-Shot_Full", "SCHEMA_ERROR"), ["n_first", "n_recovered"]].tolist() == [1, 0]

    overview = tables.agentic.set_index("configuration")  # the feedback cells
    assert overview.loc["Zero-Shot_Full", ["n_refinements", "n_repeated_refinements"]].tolist() == [1, 0]
    assert overview.loc["Zero-Shot_Full", "refinement_repeat_rate"] == 0.0
    recovery = tables.recovery.set_index(["configuration", "error_type"])
    assert recovery.loc[("Zero-Shot_Full", "SYNTAX_ERROR"), ["n_first", "n_recovered"]].tolist() == [1, 1]

    shown = readable_summary(tables).iloc[0]
    assert shown["fb repeat rate, all model replies"] == "0/1"
    assert shown["fb repeat rate, accepted refinements"] == "0/1"  # no repeat guard: the two rates are equal
    assert shown["fb chain-invalid first attempts made valid"] == "1/1"
    assert "recovery_by_strategy.csv" in {p.name for p in write_tables(tables, strategy_run)}
