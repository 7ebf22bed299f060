"""A run folder is bound to the settings it was started with (issue 52, items 1 and 2).

Issue 52's reproductions, each by the route it took: a parameter file that kept a finished run's `run_id` and
changed its limit was accepted by `t2c run` and notebook 01 and rewrote the run's manifests; `t2c evaluate` and
`t2c analyze` then described another run; a cell of another grid in the run's folder was pooled by
`t2c analyze --run-id`. Now every route compares its settings with the run's `run.json` and refuses in one line
naming the keys and the two ways out; `--replace-run` moves the old run aside, never deletes it; analysis pools
only the recorded grid's cells and names any other. Real study steps on the embedded curriculum store, the
model a scripted stand-in (named as such) that answers every question with its gold query.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from t2c_lib import config
from t2c_lib.cli import main
from t2c_lib.llm.base import Completion, Usage
from t2c_lib.study.manifest import EvaluationSettingsDiffer
from t2c_lib.study.params import params_from_dict
from t2c_lib.study.run_record import RUN_FILE, RunSettingsDiffer, read_record
from t2c_lib.study.steps import analyze, evaluate, infer

# study steps end to end (infer, evaluate, analyze with figures): `make test` runs them; the fast tier has
# tests/study/test_run_record.py
pytestmark = pytest.mark.slow

GRID = {"prompt_types": ["Zero-Shot"], "schema_formats": ["full_schema"], "strategies": ["feedback", "single-pass"]}
BASE = {"run_id": "bound", "limit": 3, "test_suite_copies": 0, "scoring": "kg-axel", **GRID}


class GoldStandIn:
    """A scripted stand-in: the gold query of the question in the prompt (no model)."""

    model_id = "scripted-stand-in"

    def __init__(self, gold: dict[str, str]) -> None:
        self.gold = gold

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, seed=None) -> Completion:
        text = messages[-1].content
        query = next((c for q, c in self.gold.items() if q in text), "MATCH (m:MKK) RETURN m.nama")
        return Completion(f"<cypher>{query}</cypher>", Usage(10, 5), latency_s=0.0, model=self.model_id)


@pytest.fixture(scope="module")
def stand_in():
    from t2c_lib.datasets import load_dataset

    return GoldStandIn({q.question: q.cypher for q in load_dataset("kurikulum").questions})


def run_grid(results: Path, stand_in, **changes) -> Path:
    """Infer and evaluate every cell of BASE (with `changes`) under `results`; the run's folder."""
    params = params_from_dict({**BASE, **changes})
    for strategy in params.strategies:
        for prompt in params.prompt_types:
            for schema in params.schema_formats:
                infer(params, prompt, schema, strategy, model=stand_in, results_dir=results, progress=False)
                evaluate(params, prompt, schema, strategy, results_dir=results)
    return results / params.run_id


def tree(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.fixture()
def finished(tmp_path, stand_in, monkeypatch):
    """A finished run `bound` (3 questions, 2 cells) under a temporary results/ and figures/."""
    monkeypatch.setattr(config, "RESULTS_DIR", tmp_path / "results")
    monkeypatch.setattr(config, "FIGURES_DIR", tmp_path / "figures")
    run = run_grid(tmp_path / "results", stand_in)
    analyze(params_from_dict(BASE), results_dir=tmp_path / "results", figures_dir=tmp_path / "figures" / "bound")
    return run


def test_the_first_inference_binds_the_run_and_the_same_settings_are_accepted_again(finished, stand_in):
    record = json.loads((finished / RUN_FILE).read_text(encoding="utf-8"))
    assert record["parameters"]["limit"] == 3 and record["model_id"] == "scripted-stand-in"
    assert set(record) == {"parameters", "dataset_hash", "model_id", "llama_build"}  # no clock, no commit
    before = (finished / RUN_FILE).read_bytes()
    run_grid(finished.parent, stand_in)  # `make all` again over the finished run: the same settings
    assert (finished / RUN_FILE).read_bytes() == before


def test_a_changed_limit_under_the_same_run_id_is_refused_by_every_step_and_rewrites_nothing(finished, stand_in):
    before = tree(finished)
    changed = params_from_dict({**BASE, "limit": 2})
    with pytest.raises(RunSettingsDiffer) as refused:
        infer(changed, "Zero-Shot", "full_schema", "feedback", model=stand_in, results_dir=finished.parent)
    message = str(refused.value)
    assert "\n" not in message and "(limit differ;" in message
    assert "give a new run_id, or --replace-run" in message and "results/bound.replaced-<n>/" in message
    with pytest.raises((RunSettingsDiffer, EvaluationSettingsDiffer), match="limit"):
        evaluate(changed, "Zero-Shot", "full_schema", "feedback", results_dir=finished.parent)
    with pytest.raises(RunSettingsDiffer, match=r"\(limit differ;"):
        analyze(changed, results_dir=finished.parent, figures_dir=finished.parent.parent / "figures" / "x")
    assert tree(finished) == before  # no manifest, log, metric or table rewritten


def test_t2c_run_and_makes_check_refuse_a_parameter_file_that_kept_the_run_id(finished, tmp_path):
    copy = tmp_path / "copy.yaml"
    copy.write_text(json.dumps({**BASE, "limit": 2}), encoding="utf-8")  # JSON is YAML
    done = CliRunner().invoke(main, ["run", "--params", str(copy), "--model", "local"])
    assert done.exit_code != 0 and "RunSettingsDiffer" not in done.output, done.output
    last = done.output.strip().splitlines()[-1]  # after the run's header line, the refusal in one line
    assert last.startswith("t2c: error: ") and "limit" in last and "--replace-run" in last
    check = CliRunner().invoke(main, ["study", "check-run", "--params", str(copy)])  # `make all`'s first step
    assert check.exit_code != 0 and "limit" in check.output and "REPLACE_RUN=1" in check.output
    same = CliRunner().invoke(main, ["study", "check-run", "--params", str(tmp_path / "same.yaml")])
    assert same.exit_code != 0  # no such file: refused too
    (tmp_path / "same.yaml").write_text(json.dumps(BASE), encoding="utf-8")
    assert CliRunner().invoke(main, ["study", "check-run", "--params", str(tmp_path / "same.yaml")]).exit_code == 0


def test_replace_run_moves_the_old_run_aside_and_deletes_nothing(finished, stand_in, tmp_path):
    before = tree(finished)
    figures = tmp_path / "figures" / "bound"
    assert figures.is_dir()
    changed = params_from_dict({**BASE, "limit": 2})
    infer(
        changed, "Zero-Shot", "full_schema", "feedback", model=stand_in, results_dir=finished.parent, replace_run=True
    )
    aside = finished.parent / "bound.replaced-1"
    assert tree(aside) == before  # every file of the old run, byte for byte
    assert (tmp_path / "figures" / "bound.replaced-1").is_dir() and not figures.exists()
    assert read_record(finished).parameters["limit"] == 2
    lines = (finished / "feedback" / "Zero-Shot_Full" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2


def test_make_all_replace_run_moves_the_run_aside_once(finished, tmp_path, monkeypatch):
    copy = tmp_path / "copy.yaml"
    copy.write_text(json.dumps({**BASE, "limit": 2}), encoding="utf-8")
    monkeypatch.setenv("T2C_REPLACE_RUN", "1")  # what `make all REPLACE_RUN=1` exports
    done = CliRunner().invoke(main, ["study", "check-run", "--params", str(copy)])
    assert done.exit_code == 0, done.output
    assert "moved aside to" in done.output and (finished.parent / "bound.replaced-1").is_dir()
    assert not finished.exists()
    again = CliRunner().invoke(main, ["study", "check-run", "--params", str(copy)])
    assert again.exit_code == 0 and not (finished.parent / "bound.replaced-2").exists()


def test_a_foreign_cell_in_the_run_folder_is_never_pooled_by_analyze_run_id(finished, stand_in, tmp_path):
    import shutil

    other = run_grid(tmp_path / "other", stand_in, prompt_types=["Few-Shot"], strategies=["feedback"])
    shutil.copytree(other / "feedback" / "Few-Shot_Full", finished / "feedback" / "Few-Shot_Full")
    done = CliRunner().invoke(main, ["analyze", "--run-id", "bound"])
    assert done.exit_code == 0, done.output
    assert "not pooled: feedback/Few-Shot_Full" in done.output
    comparison = (finished / "analysis" / "comparison.csv").read_text(encoding="utf-8")
    assert "Few-Shot" not in comparison and "Zero-Shot_Full" in comparison
    tables = [p for p in (finished / "analysis").glob("*.csv") if p.name != "reference.csv"]  # the thesis's numbers
    assert tables and not [p.name for p in tables if "Few-Shot" in p.read_text(encoding="utf-8")]
    evaluated = CliRunner().invoke(main, ["evaluate", "--run-id", "bound"])
    assert evaluated.exit_code == 0 and "Few-Shot" not in evaluated.output, evaluated.output


def test_a_run_made_before_run_json_is_bound_to_what_most_of_its_cells_record(finished):
    (finished / RUN_FILE).unlink()
    record = read_record(finished)
    assert record is not None and record.parameters["limit"] == 3 and record.model_id == "scripted-stand-in"
    with pytest.raises(RunSettingsDiffer, match="limit"):
        analyze(params_from_dict({**BASE, "limit": 2}), results_dir=finished.parent)


def test_notebook_01_takes_replace_run_and_passes_it_to_the_step():
    notebook = json.loads((config.PROJECT_ROOT / "notebooks" / "01_inference.ipynb").read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert any(s.startswith("# Parameters") and "\nreplace_run = None" in s for s in sources)
    assert any("study.infer(" in s and "replace_run=replace_run" in s for s in sources)
