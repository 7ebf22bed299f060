"""Notebooks and `t2c analyze` cannot corrupt a run (issue 39, items 1-3): a cell outside the run's grid is
refused by the notebooks and not pooled by the analysis (which names it); a papermill parameter the notebook
does not take is refused; an evaluation under other settings than the cell's inference recorded is refused.
Runs are recorded by hand (`tests.helpers.write_cell`) and scored for real on the tiny graph: no model.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from t2c_lib import config
from t2c_lib.records import ErrorType
from t2c_lib.report.analysis import analyze_run
from t2c_lib.runs.layout import MANIFEST_FILE, Cell, expand_grid
from t2c_lib.runs.runlog import write_json
from t2c_lib.study.evaluation import evaluate_cell
from t2c_lib.study.manifest import EvaluationSettingsDiffer, check_evaluation_settings
from t2c_lib.study.notebook_params import PARAMETERS_MARK, UnknownParameter, check_parameters
from t2c_lib.study.params import load_params, params_from_dict
from t2c_lib.study.steps import OutsideGrid, evaluate, grid_cell
from tests.helpers import FIXTURES, ROOT, WRONG, recorded, write_cell

NOTEBOOKS = ROOT / "notebooks"
QUICK = ROOT / "params" / "quick.yaml"


def notebook_parameters(name: str) -> dict[str, object]:
    """The values the notebook's `parameters` cell assigns (what "Run All" uses)."""
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    source = next("".join(c["source"]) for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
    }


def tiny_params(grid_formats: list[str]) -> dict[str, object]:
    return {
        "run_id": "grid",
        "dataset": str(FIXTURES / "tiny"),
        "prompt_types": ["Zero-Shot"],
        "schema_formats": grid_formats,
        "strategies": ["single-pass", "feedback"],
        "test_suite_copies": 0,
        "scoring": "kg-axel",
    }


def recorded_run(run_dir: Path, tiny_dataset, tiny_store, recorded_grid: list[str], formats: list[str]) -> None:
    """Cells of every `formats` x strategy scored for real; each manifest records the grid `recorded_grid`."""
    params = params_from_dict(tiny_params(recorded_grid))

    def single(item):
        if item.id == "tiny-001":
            return [recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR)]
        return [recorded(item.id, 1, item.cypher if item.id == "tiny-002" else WRONG, None)]

    def feedback(item):
        if item.id == "tiny-001":
            return [
                recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR),
                recorded(item.id, 2, item.cypher, None),
            ]
        return single(item)

    for schema_format in formats:
        for strategy, plan in (("single-pass", single), ("feedback", feedback)):
            cell = Cell(strategy, "Zero-Shot", schema_format)
            write_cell(run_dir, cell, tiny_dataset.questions, plan)
            write_json(
                cell.directory(run_dir) / MANIFEST_FILE,
                {
                    "parameters": params.to_dict(),
                    "strategy": strategy,
                    "prompt_type": "Zero-Shot",
                    "schema_format": schema_format,
                    "configuration": cell.configuration,
                    "max_iterations": cell.max_iterations(params),
                    "signature": f"hand-written:{strategy}/{cell.configuration}",
                    "dataset_hash": tiny_dataset.hash,  # what every real manifest records (the run's binding reads it)
                },
            )
            evaluate_cell(
                cell,
                run_dir,
                tiny_dataset.questions,
                tiny_dataset,
                tiny_store,
                "kg-axel",
                cell.max_iterations(params),
                10.0,
                scoring="kg-axel",
            )


# --- item 1: a cell outside the run's grid ------------------------------------------------------


@pytest.mark.parametrize("notebook", ["01_inference.ipynb", "02_evaluation.ipynb"])
def test_run_all_with_the_notebooks_defaults_takes_a_cell_of_the_parameter_files_grid(notebook):
    values = notebook_parameters(notebook)
    params = load_params(ROOT / str(values["params_file"]))
    cell = grid_cell(params, values["prompt_type"], values["schema_format"], values["mode"] or values["strategy"])
    assert cell in expand_grid(params)


def test_a_cell_outside_the_grid_is_refused_in_one_line():
    quick = load_params(QUICK)
    with pytest.raises(OutsideGrid) as refused:
        grid_cell(quick, "Zero-Shot", "full_schema", "feedback")
    message = str(refused.value)
    assert "\n" not in message
    assert "Zero-Shot is not in run quick's grid (prompt_types: Few-Shot, CoT)" in message
    with pytest.raises(OutsideGrid, match="Full_Schema|full_schema is not in run quick's grid"):
        grid_cell(quick, "CoT", "Full", "single-pass")
    assert grid_cell(quick, "cot", "Nodes+Paths", "agentic") == Cell("feedback", "CoT", "nodes_paths")
    assert grid_cell(quick) == Cell("feedback", "Few-Shot", "nodes_paths")  # the grid's first, in run order


def test_the_analysis_pools_the_grid_only_and_names_the_cells_outside_it(tmp_path, tiny_dataset, tiny_store):
    run_dir = tmp_path / "grid"
    recorded_run(run_dir, tiny_dataset, tiny_store, ["full_schema"], ["full_schema", "only_paths"])
    grid = expand_grid(params_from_dict(tiny_params(["full_schema"])))
    tables = analyze_run(run_dir, ["level"], folders=[cell.directory(run_dir) for cell in grid])
    assert set(tables.per_question["configuration"]) == {"Zero-Shot_Full"}
    assert tables.comparison["configuration"].tolist() == ["Zero-Shot_Full"]
    assert set(tables.strategies["n"]) == {len(tiny_dataset.questions)}  # the pooled ALL rows: one cell's questions
    assert tables.outside_grid == ("feedback/Zero-Shot_Only-Paths", "single-pass/Zero-Shot_Only-Paths")
    assert "not pooled: feedback/Zero-Shot_Only-Paths, single-pass/Zero-Shot_Only-Paths" in tables.grid_note()
    whole = analyze_run(run_dir, ["level"])  # no grid given: every cell, as before
    assert set(whole.per_question["configuration"]) == {"Zero-Shot_Full", "Zero-Shot_Only-Paths"}


@pytest.mark.slow  # infers, evaluates and analyzes a small run: `make test` runs it
def test_t2c_analyze_by_run_id_refuses_to_pool_a_cell_its_manifests_grid_lacks(
    tmp_path, tiny_dataset, tiny_store, monkeypatch
):
    from t2c_lib.cli import main

    results = tmp_path / "results"
    recorded_run(results / "grid", tiny_dataset, tiny_store, ["full_schema"], ["full_schema", "only_paths"])
    monkeypatch.setattr(config, "RESULTS_DIR", results)
    monkeypatch.setattr(config, "FIGURES_DIR", tmp_path / "figures")
    done = CliRunner().invoke(main, ["analyze", "--run-id", "grid"])
    assert done.exit_code == 0, done.output
    assert "not pooled: feedback/Zero-Shot_Only-Paths, single-pass/Zero-Shot_Only-Paths" in done.output
    comparison = (results / "grid" / "analysis" / "comparison.csv").read_text(encoding="utf-8")
    assert "Zero-Shot_Full" in comparison and "Only-Paths" not in comparison


# --- item 2: a papermill parameter the notebook does not take --------------------------------------


def parameters_cell(name: str) -> str:
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))


@pytest.mark.parametrize("notebook", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_every_notebook_checks_its_papermill_parameters_first(notebook):
    cells = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", [])
    assert parameters_cell(notebook).startswith(PARAMETERS_MARK)
    assert "study.check_parameters()" in "".join(code[1]["source"])


@pytest.mark.parametrize("typo, hint", [("limt", "limit"), ("max_iteration", "max_iterations")])
def test_a_misspelt_papermill_parameter_is_refused_in_one_line_with_the_name_meant(typo, hint):
    injected = f"# Parameters\nprompt_type = 'CoT'\n{typo} = 2\n"  # what papermill injects for -p NAME VALUE
    history = ["", parameters_cell("01_inference.ipynb"), injected]
    with pytest.raises(UnknownParameter) as refused:
        check_parameters(history)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"unknown notebook parameter(s) {typo} (did you mean {hint}?)")
    assert "this notebook takes params_file, dataset, store, model, prompt_type" in message
    check_parameters(["", parameters_cell("01_inference.ipynb"), "# Parameters\nlimit = 2\nmax_iterations = 1\n"])
    check_parameters(["", parameters_cell("01_inference.ipynb")])  # no -p at all: nothing injected, nothing to check


@pytest.mark.slow
def test_papermill_with_a_misspelt_parameter_fails_with_one_line_before_anything_runs(tmp_path):
    done = papermill(tmp_path, "02_evaluation.ipynb", "-p", "limt", "2")
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "02_evaluation.ipynb: UnknownParameter: unknown notebook parameter(s) limt (did you mean limit?)"
    )
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results" / "quick").exists()


# --- item 3: an evaluation under other settings than the cell's inference recorded ---------------------


def quick_cell_run_with(results: Path, **recorded) -> Path:
    """A quick-grid feedback cell whose manifest records `recorded` over the file's parameters."""
    params = load_params(QUICK).with_overrides(**recorded)
    cell = Cell("feedback", "Few-Shot", "nodes_paths")
    folder = cell.directory(results / "quick")
    write_json(folder / MANIFEST_FILE, {"parameters": params.to_dict(), "strategy": "feedback", "max_iterations": 2})
    return folder


def test_an_evaluation_under_other_settings_than_the_inference_recorded_is_refused(tmp_path):
    folder = quick_cell_run_with(tmp_path, max_iterations=2, limit=4)
    quick = load_params(QUICK)  # -p max_iterations 2 and -p limit 4 left out: the file says 3 and 6
    with pytest.raises(EvaluationSettingsDiffer) as refused:
        evaluate(quick, "Few-Shot", "nodes_paths", "feedback", results_dir=tmp_path)
    message = str(refused.value)
    assert "\n" not in message
    assert "max_iterations 2 there, 3 here" in message and "limit 4 there, 6 here" in message
    assert not (folder / "summary.json").exists()
    same = quick.with_overrides(
        max_iterations=2, limit=4, weights="agentic-doc", scoring="kg-axel", workers=2, model="another"
    )
    check_evaluation_settings(folder / MANIFEST_FILE, same, Cell("feedback", "Few-Shot", "nodes_paths"))
    # single-pass never iterates: the file's max_iterations does not matter to it
    check_evaluation_settings(
        folder / MANIFEST_FILE, quick.with_overrides(limit=4), Cell("single-pass", "Few-Shot", "nodes_paths")
    )


@pytest.mark.slow
def test_notebook_02_refuses_settings_its_cell_was_not_run_with_in_one_line(tmp_path):
    quick_cell_run_with(tmp_path / "results", max_iterations=2, limit=4)
    cell = ("-p", "prompt_type", "Few-Shot", "-p", "schema_format", "nodes_paths", "-p", "strategy", "feedback")
    done = papermill(tmp_path, "02_evaluation.ipynb", *cell, "-p", "max_iterations", "2")
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("02_evaluation.ipynb: EvaluationSettingsDiffer: ")
    assert last.endswith(
        "(limit 4 there, 6 here); evaluate with the recorded ones (notebook 02: -p NAME VALUE; or `t2c evaluate --run-id`, which reads them)"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_notebook_01_refuses_a_cell_outside_the_grid_before_anything_runs(tmp_path):
    """papermill with the quick grid and a cell it lacks: one line, exit 1, no cell folder written."""
    done = papermill(
        tmp_path, "01_inference.ipynb", "-p", "prompt_type", "Zero-Shot", "-p", "schema_format", "full_schema"
    )
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("01_inference.ipynb: OutsideGrid: Zero-Shot is not in run quick's grid")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results" / "quick").exists()


def papermill(tmp_path: Path, notebook: str, *args: str) -> subprocess.CompletedProcess:
    """A notebook run as `make all` runs it (the IPC engine), results and cache under `tmp_path`."""
    env = {
        **os.environ,
        "T2C_RESULTS_DIR": str(tmp_path / "results"),
        "T2C_FIGURES_DIR": str(tmp_path / "figures"),
        "T2C_CACHE_DIR": str(tmp_path / "cache"),
        "T2C_MODEL": "",
        "T2C_LLM_BASE_URL": "",
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "t2c_lib.study.notebook_engine",
            "--no-progress-bar",
            "-k",
            "python3",
            "--cwd",
            str(ROOT),
            str(NOTEBOOKS / notebook),
            str(tmp_path / notebook),
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
