"""Evaluation, comparison tables and figures from recorded attempts (no model needed).

The attempts are written by hand (a scripted record of what a loop could have done) and
scored for real on the tiny embedded graph; the test checks the numbers and that a rerun
writes byte-identical tables and figures.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from t2c_lib.agent import Attempt, ErrorType, ValidationResult
from t2c_lib.analysis import analyze_run, write_tables
from t2c_lib.evaluation import evaluate_cell
from t2c_lib.experiment import AttemptLog, Cell
from t2c_lib.plots import FIGURES, export_figures

STEPS = ("guard", "syntax", "schema", "properties", "execution", "non_empty")
WRONG = "MATCH (m:Movie) RETURN m.title"


def recorded(qid: str, iteration: int, query: str, error: ErrorType | None) -> Attempt:
    validations = []
    for step in STEPS:
        failed = error is not None and step == {ErrorType.SYNTAX_ERROR: "syntax", ErrorType.EMPTY_RESULT: "non_empty"}[error]
        validations.append(ValidationResult(step, not failed, error if failed else None, "x" if failed else ""))
        if failed:
            break
    return Attempt(question_id=qid, iteration=iteration, prompt_hash="p", raw_response=query, query=query,
                   validations=validations, ok=error is None, error_type=error, feedback="fb" if error else None,
                   prompt_tokens=100, completion_tokens=20)


def write_cell(run_dir, cell: Cell, questions, plan) -> None:
    log = AttemptLog(cell.directory(run_dir))
    for item in questions:
        attempts = plan(item)
        for attempt in attempts:
            log.append_attempt(attempt)
        log.append_question({"question_id": item.id, "status": "SUCCESS" if attempts[-1].ok else "FAILED"})


@pytest.fixture()
def scored_run(tiny_dataset, tiny_store, tmp_path):
    questions = tiny_dataset.questions
    run_dir = tmp_path / "run"
    for schema_format in ("full_schema", "only_paths"):
        # single-pass: one syntax error, then the gold query right, then a wrong-but-valid query
        def single(item):
            if item.id == "tiny-001":
                return [recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR)]
            if item.id == "tiny-002":
                return [recorded(item.id, 1, item.cypher, None)]
            return [recorded(item.id, 1, WRONG, None)]

        # agentic: recovers question 1 at iteration 2; the rest as single-pass
        def agentic(item):
            if item.id == "tiny-001":
                return [recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR),
                        recorded(item.id, 2, item.cypher, None)]
            return single(item)

        for mode, plan in (("single-pass", single), ("agentic", agentic)):
            cell = Cell(mode, "Zero-Shot", schema_format)
            write_cell(run_dir, cell, questions, plan)
            evaluate_cell(cell, run_dir, questions, tiny_dataset, tiny_store, "kg-axel",
                          1 if mode == "single-pass" else 3, 10.0)
    return run_dir


def test_per_question_metrics_and_comparison(scored_run, tiny_dataset):
    tables = analyze_run(scored_run, tiny_dataset.strata_columns)
    per_q = tables.per_question
    sp = per_q[(per_q["mode"] == "single-pass") & (per_q["configuration"] == "Zero-Shot_Full")].set_index("question_id")
    assert sp["pass_at_1"].tolist() == [0.0, 1.0, 0.0]
    assert sp["kg_valid"].tolist() == [0.0, 1.0, 1.0]
    row = tables.comparison.set_index("configuration").loc["Zero-Shot_Full"]
    assert row["n"] == 3
    assert row["pass_at_1_sp"] == pytest.approx(1 / 3) and row["pass_at_1_ag"] == pytest.approx(2 / 3)
    assert (row["pass_at_1_mcnemar_b"], row["pass_at_1_mcnemar_c"]) == (0, 1)
    assert row["pass_at_1_mcnemar_p_value"] == pytest.approx(1.0)
    assert row["model_calls_per_question_ag"] == pytest.approx(4 / 3)
    agentic = tables.agentic.set_index("configuration").loc["Zero-Shot_Full"]
    assert agentic["recovery_rate"] == pytest.approx(1.0) and agentic["first_attempt_success_rate"] == pytest.approx(2 / 3)
    cumulative = tables.cumulative[tables.cumulative["configuration"] == "Zero-Shot_Full"]["success_rate"].tolist()
    assert cumulative == pytest.approx([2 / 3, 1.0, 1.0])
    strata = tables.strata
    hard = strata[(strata["configuration"] == "ALL") & (strata["value"] == "hard") & (strata["mode"] == "feedback")]  # an old run's agentic folder reads as feedback
    assert hard["n"].tolist() == [2] and hard["pass_at_1"].tolist() == [0.0]


def digest(paths) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def test_tables_and_figures_are_byte_identical_on_rerun(scored_run, tiny_dataset, tmp_path):
    first_tables = analyze_run(scored_run, tiny_dataset.strata_columns)
    first = digest(write_tables(first_tables, scored_run)) | digest(export_figures(first_tables, tmp_path / "f1"))
    second_tables = analyze_run(scored_run, tiny_dataset.strata_columns)
    second = digest(write_tables(second_tables, scored_run)) | digest(export_figures(second_tables, tmp_path / "f2"))
    assert first == second
    assert len([n for n in first if n.endswith(".pdf")]) == len(FIGURES)
    pdf = (tmp_path / "f1" / "pass_kgvalid_by_config.pdf").read_bytes()
    assert b"CreationDate" not in pdf and b"/FontFile2" in pdf  # no timestamp; TrueType (Type 42) embedded
    assert "comparison.tex" in first
    comparison = pd.read_csv(scored_run / "analysis" / "comparison.csv")
    assert list(comparison["configuration"]) == ["Zero-Shot_Full", "Zero-Shot_Only-Paths"]
