"""Per-question review (issue 39, item 8): `metrics.csv` carries the question, gold and final query, and
`t2c failures` lists each wrong or invalid question with its question, gold query and every attempt's query,
error and feedback. A run recorded by hand (`scored_run`) and scored for real on the tiny graph: no model.
"""

from __future__ import annotations

import csv

from click.testing import CliRunner

from t2c_lib import config
from t2c_lib.cli import main
from t2c_lib.report.failures import INVALID, WRONG, run_failures, shown


def test_metrics_csv_carries_the_question_the_gold_and_the_final_query(scored_run, tiny_dataset):
    with (scored_run / "feedback" / "Zero-Shot_Full" / "metrics.csv").open(encoding="utf-8") as f:
        rows = {r["question_id"]: r for r in csv.DictReader(f)}
    first = tiny_dataset.questions[0]
    assert rows[first.id]["question"] == first.question == "Who acted in The Matrix?"
    assert rows[first.id]["gold_query"] == first.cypher
    assert rows[first.id]["final_query"] == first.cypher  # repaired at the second attempt
    assert rows["tiny-003"]["final_query"] == "MATCH (m:Movie) RETURN m.title"


def test_failures_are_the_invalid_and_the_wrong_answers_with_every_attempt(scored_run):
    failures, answers = run_failures(scored_run)
    assert answers == 12  # 4 cells x 3 questions
    verdicts = {(f.cell, f.question_id): f.verdict for f in failures}
    assert verdicts[("single-pass/Zero-Shot_Full", "tiny-001")] == INVALID  # a syntax error
    assert verdicts[("single-pass/Zero-Shot_Full", "tiny-003")] == WRONG  # valid, another result
    assert ("feedback/Zero-Shot_Full", "tiny-001") not in verdicts  # repaired: right
    assert all(f.question_id != "tiny-002" for f in failures)  # the gold query itself: right
    assert len(failures) == 6  # per schema format: single-pass 001 and 003, feedback 003
    only, n = run_failures(scored_run, "Zero-Shot_Full")  # a configuration: every strategy's cell of it
    assert n == 6 and {f.cell for f in only} == {"feedback/Zero-Shot_Full", "single-pass/Zero-Shot_Full"}


def test_t2c_failures_prints_question_gold_attempts_errors_and_feedback(scored_run, monkeypatch):
    monkeypatch.setattr(config, "RESULTS_DIR", scored_run.parent)
    done = CliRunner().invoke(main, ["failures", "--run-id", "run", "--cell", "single-pass/Zero-Shot_Full"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0].startswith("cell single-pass/Zero-Shot_Full: 2 of 3 answers failed (1 invalid")
    block = done.output.split("== single-pass/Zero-Shot_Full (single-pass) · tiny-001 · invalid\n", 1)[1]
    block = block.split("\n\n")[0]
    assert block.splitlines() == [
        "question: Who acted in The Matrix?",
        "gold:     MATCH (p:Person)-[:ACTED_IN]->(m:Movie {title: 'The Matrix'}) RETURN p.name ORDER BY p.name",
        "attempt 1: MATCH (p:Person RETURN p",
        "  error:    SYNTAX_ERROR syntax: x",
        "  feedback: fb",
    ]
    assert "== single-pass/Zero-Shot_Full (single-pass) · tiny-003 · wrong" in done.output
    assert "  passed the validator chain" in done.output


def test_an_unknown_cell_is_refused_in_one_line_naming_the_cells(scored_run, monkeypatch):
    monkeypatch.setattr(config, "RESULTS_DIR", scored_run.parent)
    done = CliRunner().invoke(main, ["failures", "--run-id", "run", "--cell", "feedback/CoT_Full"])
    assert done.exit_code == 1
    assert done.output.strip().count("\n") == 0
    assert "no evaluated cell of the run has that name (cells: feedback/Zero-Shot_Full" in done.output
    refused = CliRunner().invoke(main, ["failures", "--run-id", "../etc"])
    assert refused.exit_code == 1 and "run_id" in refused.output


def test_recorded_text_cannot_steer_the_terminal():
    assert shown("MATCH (n)\x1b[2J\x1b]0;title\x07 RETURN n\nLIMIT 1") == (
        "MATCH (n)\\x1b[2J\\x1b]0;title\\x07 RETURN n\nLIMIT 1"
    )
