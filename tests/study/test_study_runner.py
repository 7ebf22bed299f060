"""The batch runner's bookkeeping: append-only logs, resume, errors recorded, manifests, make rules.

The `solve` functions here are scripted stand-ins for the agent loop (named as such); the
end-to-end resume test with the real model is in test_study_e2e.py.
"""

from __future__ import annotations

import json

from t2c_lib.agent import Attempt, ErrorType, ValidationResult
from t2c_lib.runs.layout import Cell
from t2c_lib.runs.runlog import AttemptLog, read_jsonl
from t2c_lib.study.params import params_from_dict
from t2c_lib.study.runner import run_cell
from tests.helpers import ROOT


def scripted_attempt(question_id: str, iteration: int, ok: bool) -> Attempt:
    check = ValidationResult("guard", ok, None if ok else ErrorType.SYNTAX_ERROR, "" if ok else "bad")
    return Attempt(
        question_id=question_id,
        iteration=iteration,
        prompt_hash="h",
        raw_response="r",
        query="MATCH (n) RETURN n",
        validations=[check],
        ok=ok,
        error_type=None if ok else ErrorType.SYNTAX_ERROR,
        feedback=None if ok else "fix it",
    )


def scripted_solve_stand_in(fail_on: str | None = None, raise_on: str | None = None):
    """A stand-in for the agent loop: two attempts per question (the first fails)."""
    calls: list[str] = []

    def solve(item, on_attempt):
        calls.append(item.id)
        if item.id == raise_on:
            raise RuntimeError("endpoint unreachable")
        on_attempt(scripted_attempt(item.id, 1, False))
        on_attempt(scripted_attempt(item.id, 2, item.id != fail_on))
        return {
            "status": "SUCCESS",
            "success": item.id != fail_on,
            "kg_valid": True,
            "iterations": 2,
            "final_query": "MATCH (n) RETURN n",
            "error": None,
        }

    solve.calls = calls
    return solve


def test_every_question_is_logged_and_an_error_does_not_stop_the_run(tiny_dataset, tmp_path):
    params = params_from_dict({"run_id": "t"})
    cell = Cell("feedback", "Zero-Shot", "full_schema")
    solve = scripted_solve_stand_in(raise_on="tiny-002")
    report = run_cell(cell, params, tiny_dataset.questions, solve, tmp_path, progress=False)
    assert (report.ran, report.failed_with_error, report.model_calls) == (3, 1, 4)
    outcomes = {r["question_id"]: r for r in read_jsonl(report.directory / "questions.jsonl")}
    assert outcomes["tiny-002"]["status"] == "FAILED" and "endpoint unreachable" in outcomes["tiny-002"]["error"]
    assert len(read_jsonl(report.directory / "attempts.jsonl")) == 4


def test_a_corrector_attempt_is_counted_as_neither_a_model_call_nor_a_cache_hit(tiny_dataset, tmp_path):
    from dataclasses import replace

    def solve(item, on_attempt):
        on_attempt(replace(scripted_attempt(item.id, 1, False), cached=True))  # the first reply, from the cache
        on_attempt(replace(scripted_attempt(item.id, 2, True), kind="corrector"))  # the corrector's edit: no call
        return {
            "status": "SUCCESS",
            "success": True,
            "kg_valid": True,
            "iterations": 2,
            "final_query": "",
            "error": None,
        }

    cell = Cell("feedback", "Zero-Shot", "full_schema")
    report = run_cell(cell, params_from_dict({"run_id": "t"}), tiny_dataset.questions, solve, tmp_path, progress=False)
    assert (report.ran, report.model_calls, report.cache_hits) == (3, 0, 3)


def test_resume_skips_finished_and_redoes_interrupted_questions(tiny_dataset, tmp_path):
    params = params_from_dict({"run_id": "t"})
    cell = Cell("feedback", "Zero-Shot", "full_schema")
    log = AttemptLog(cell.directory(tmp_path))
    # a killed run: question 1 finished, question 2 has one attempt and no outcome, and a torn line
    log.append_attempt(scripted_attempt("tiny-001", 1, True))
    log.append_question({"question_id": "tiny-001", "status": "SUCCESS"})
    log.append_attempt(scripted_attempt("tiny-002", 1, False))
    with log.attempts_path.open("a") as handle:
        handle.write('{"question_id": "tiny-002", "iter')
    solve = scripted_solve_stand_in()
    report = run_cell(cell, params, tiny_dataset.questions, solve, tmp_path, progress=False)
    assert solve.calls == ["tiny-002", "tiny-003"]
    assert report.skipped == 1 and report.dropped_partial_attempts == 1
    attempts = read_jsonl(log.attempts_path)
    assert [(a["question_id"], a["iteration"]) for a in attempts] == [
        ("tiny-001", 1),
        ("tiny-002", 1),
        ("tiny-002", 2),
        ("tiny-003", 1),
        ("tiny-003", 2),
    ]
    assert sorted(r["question_id"] for r in read_jsonl(log.questions_path)) == ["tiny-001", "tiny-002", "tiny-003"]
    again = run_cell(cell, params, tiny_dataset.questions, solve, tmp_path, progress=False)
    assert again.ran == 0 and solve.calls == ["tiny-002", "tiny-003"]


def test_lines_are_sorted_json(tmp_path):
    log = AttemptLog(tmp_path)
    log.append_question({"question_id": "q", "b": 1, "a": 2})
    assert log.questions_path.read_text() == json.dumps({"a": 2, "b": 1, "question_id": "q"}) + "\n"


def test_make_rules_chain_single_pass_after_feedback():
    from t2c_lib.study.make import make_rules

    params = params_from_dict({"run_id": "r", "prompt_types": ["CoT"], "schema_formats": ["only_paths"]})
    rules = make_rules(params, "params/x.yaml")
    assert (
        "results/r/single-pass/CoT_Only-Paths/.inferred: params/x.yaml $(STAMP) results/r/feedback/CoT_Only-Paths/.inferred"
        in rules
    )
    assert (
        "\t$(Q)$(PAPERMILL) notebooks/01_inference.ipynb results/r/notebooks/01_inference__feedback__CoT_Only-Paths.ipynb"
        in rules
    )
    assert "-p params_file params/x.yaml -p prompt_type CoT -p schema_format only_paths -p strategy feedback" in rules
    assert "results/r/.analyzed: $(STUDY_EVALUATED)" in rules


# --- faults (issue 17) ------------------------------------------------------------------------


def test_configuration_error_stops_the_run_records_nothing_and_resume_asks_again(tiny_dataset, tmp_path):
    import pytest

    from t2c_lib.llm.base import LLMConfigError

    params = params_from_dict({"run_id": "t"})
    cell = Cell("agentic", "Zero-Shot", "full_schema")
    calls: list[str] = []

    def unauthorised_stand_in(item, on_attempt):
        calls.append(item.id)
        if item.id == "tiny-002":
            raise LLMConfigError("authentication failed: check the API key (HTTP 401)")
        return scripted_solve_stand_in()(item, on_attempt)

    for workers in (1, 2):
        calls.clear()
        directory = tmp_path / f"w{workers}"
        with pytest.raises(LLMConfigError, match="authentication failed"):
            run_cell(
                cell, params, tiny_dataset.questions, unauthorised_stand_in, directory, workers=workers, progress=False
            )
        recorded = {r["question_id"] for r in read_jsonl(cell.directory(directory) / "questions.jsonl")}
        assert "tiny-002" not in recorded
        if workers == 1:
            assert calls == ["tiny-001", "tiny-002"] and recorded == {"tiny-001"}
        fixed = scripted_solve_stand_in()
        report = run_cell(cell, params, tiny_dataset.questions, fixed, directory, workers=workers, progress=False)
        assert "tiny-002" in fixed.calls and report.failed_with_error == 0
        assert sorted(r["question_id"] for r in read_jsonl(cell.directory(directory) / "questions.jsonl")) == [
            "tiny-001",
            "tiny-002",
            "tiny-003",
        ]


WRITER = r"""
import os, signal, sys, time
path = sys.argv[1]
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
os.write(fd, b'{"question_id": "tiny-001", "status": "SUCCESS"}\n')
os.write(fd, b'{"question_id": "tiny-002", "sta')   # killed before the rest of the line
os.fsync(fd)
print("torn", flush=True)
time.sleep(60)
"""


def test_torn_last_line_from_a_killed_writer_is_set_aside_on_resume(tiny_dataset, tmp_path):
    import signal
    import subprocess
    import sys

    params = params_from_dict({"run_id": "t"})
    cell = Cell("agentic", "Zero-Shot", "full_schema")
    directory = cell.directory(tmp_path)
    directory.mkdir(parents=True)
    for name in ("questions.jsonl", "attempts.jsonl"):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(directory / name)], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout.readline().strip() == "torn"
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    solve = scripted_solve_stand_in()
    report = run_cell(cell, params, tiny_dataset.questions, solve, tmp_path, progress=False)
    assert solve.calls == ["tiny-002", "tiny-003"] and report.skipped == 1
    for name in ("questions.jsonl", "attempts.jsonl"):
        text = (directory / name).read_text()
        assert all(json.loads(line) for line in text.splitlines()), name  # every line parses: nothing glued
        assert (directory / (name + ".torn")).read_text() == '{"question_id": "tiny-002", "sta\n'
    questions = [json.loads(line)["question_id"] for line in (directory / "questions.jsonl").read_text().splitlines()]
    assert questions == ["tiny-001", "tiny-002", "tiny-003"]
    assert (
        len(read_jsonl(directory / "attempts.jsonl")) == 1 + 4
    )  # the writer's whole line and two attempts each for 002 and 003


def test_complete_last_record_without_newline_is_kept(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text('{"question_id": "q1"}')
    log = AttemptLog(tmp_path)
    log.append_question({"question_id": "q2"})
    assert [r["question_id"] for r in read_jsonl(path)] == ["q1", "q2"]
    assert not (tmp_path / "questions.jsonl.torn").exists()


# --- progress across the whole grid (issue 28, item 10) ----------------------------------------


def test_grid_progress_counts_cells_of_the_whole_grid_and_estimates_from_this_runs_pace(tmp_path):
    import os

    from t2c_lib.study.progress import grid_progress

    run_dir = tmp_path / "results" / "r"
    cells = [run_dir / s / c for s in ("feedback", "single-pass") for c in ("Few-Shot_Full", "CoT_Full")]
    start = 1_000_000.0
    for d in cells:
        d.mkdir(parents=True)
    (cells[0] / ".inferred").touch()
    (cells[0] / ".evaluated").touch()
    os.utime(cells[0] / ".inferred", (start - 50, start - 50))  # an earlier make: does not set the pace
    os.utime(cells[0] / ".evaluated", (start - 40, start - 40))
    first = grid_progress("r", cells, run_dir, since=start, now=start + 30)
    assert first.line() == (
        "[grid r] 1 of 4 cells (strategy x configuration) done (1 inferred, 1 evaluated); "
        "30 s so far, estimate after the first evaluated cell"
    )
    (cells[1] / "attempts.jsonl").write_text('{"cached": true}\n{"cached": true}\n', encoding="utf-8")
    (cells[1] / ".inferred").touch()
    cached = grid_progress("r", cells, run_dir, since=start, now=start + 40)
    assert cached.line().endswith(
        "(2 inferred, 1 evaluated); 40 s so far, estimate after the first evaluated cell "
        "(1 of the 2 inferred answered from the cache)"
    )
    (cells[1] / ".inferred").unlink()
    for d in cells[1:3]:
        for stamp in (".inferred", ".evaluated"):
            (d / stamp).touch()
            os.utime(d / stamp, (start + 100, start + 100))
    later = grid_progress("r", cells, run_dir, since=start, now=start + 200)
    assert (later.evaluated, later.evaluated_now, later.left_s) == (3, 2, 100.0)
    assert later.line().endswith(
        "done (3 inferred, 3 evaluated); 3 min 20 s so far, about 1 min 40 s left at this pace"
    )
    for stamp in (".inferred", ".evaluated"):
        (cells[3] / stamp).touch()
    (run_dir / ".analyzed").touch()
    done = grid_progress("r", cells, run_dir, since=start, now=start + 4000)
    assert done.line() == "[grid r] 4 of 4 cells (strategy x configuration) done (analysis done); 1 h 06 min so far"


def test_progress_module_prints_the_line_make_shows(tmp_path, capsys):
    """`make` calls `python -m t2c_lib.study.progress RUN_DIR --since T CELL...` (standard library only)."""
    from t2c_lib.study.progress import main

    run_dir = tmp_path / "results" / "r"
    cells = [run_dir / "feedback" / "CoT_Full", run_dir / "single-pass" / "CoT_Full"]
    for d in cells:
        d.mkdir(parents=True)
    (cells[0] / ".inferred").touch()
    main([str(run_dir), "--since", "0", *map(str, cells)])
    line = capsys.readouterr().err
    assert line.startswith("[grid r] 0 of 2 cells (strategy x configuration) done (1 inferred, 0 evaluated); ")


def test_generated_rules_name_every_cell_folder_for_the_progress_line():

    from t2c_lib.study.make import make_rules

    params = params_from_dict(
        {
            "run_id": "g",
            "prompt_types": ["CoT"],
            "schema_formats": ["full_schema"],
            "strategies": ["single-pass", "feedback"],
        }
    )
    rules = make_rules(params, "params/g.yaml")
    assert "GRID_CELLS := results/g/feedback/CoT_Full results/g/single-pass/CoT_Full\n" in rules
    makefile = (ROOT / "Makefile").read_text()
    assert "-m t2c_lib.study.progress $(RUN_DIR) --since $(GRID_START) $(GRID_CELLS)" in makefile


def test_grid_estimate_prices_cells_answered_from_the_cache_as_such(tmp_path):
    """Issue 39 (7): after the feedback cells of the quick grid (model calls), its single-pass cells repeat their
    first attempts from the cache: the estimate prices them as cache cells, not at the model cells' pace."""
    import json
    import os

    from t2c_lib.study.progress import grid_progress

    run_dir = tmp_path / "results" / "quick"
    notebooks = run_dir / "notebooks"
    notebooks.mkdir(parents=True)
    configs = ("Few-Shot_Nodes+Paths", "CoT_Nodes+Paths")
    cells = [run_dir / s / c for s in ("feedback", "single-pass") for c in configs]
    start = 1_000_000.0

    def executed(name: str, seconds: float) -> None:
        path = notebooks / f"{name}.ipynb"
        path.write_text(json.dumps({"metadata": {"papermill": {"duration": seconds}}, "cells": []}))
        os.utime(path, (start + 1, start + 1))

    for cell in cells[:2]:  # the feedback cells: 300 s of inference with the model, 10 s of evaluation
        cell.mkdir(parents=True)
        (cell / "attempts.jsonl").write_text(json.dumps({"question_id": "q", "cached": False}) + "\n")
        for stamp in (".inferred", ".evaluated"):
            (cell / stamp).touch()
            os.utime(cell / stamp, (start + 1, start + 1))
        tag = f"feedback__{cell.name}"
        executed(f"01_inference__{tag}", 300.0)
        executed(f"02_evaluation__{tag}", 10.0)
    for cell in cells[2:]:
        cell.mkdir(parents=True)
    progress = grid_progress("quick", cells, run_dir, since=start, now=start + 620)
    assert progress.left_s == 40.0  # 2 cells x (a step without model calls ~ an evaluation, 10 s, + 10 s); not 620
    assert progress.line().endswith("about 40 s left at this pace (2 of the cells left answered from the cache)")


def test_make_rules_send_each_notebooks_output_to_its_log():
    from t2c_lib.study.make import make_rules

    params = params_from_dict({"run_id": "r", "prompt_types": ["CoT"], "schema_formats": ["only_paths"]})
    runs = [line for line in make_rules(params, "params/x.yaml").splitlines() if "$(PAPERMILL)" in line]
    assert len(runs) == 5  # 2 cells x (inference, evaluation) + the analysis
    for line in runs:
        assert line.startswith("\t$(Q)$(PAPERMILL) notebooks/0"), line
        executed = line.split()[2]
        assert line.endswith(f" $(call NOTEBOOK_LOG,{executed.removesuffix('.ipynb')}.log)"), line
