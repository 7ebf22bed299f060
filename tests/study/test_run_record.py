"""`run.json` and its checks on hand-written run folders (issue 52, items 1 and 2; the study steps themselves are
in tests/study/test_run_binding.py): which keys bind, the one-line refusal, moving a run aside, a legacy run's record,
and `--run-id` taking only the recorded grid's cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from t2c_lib.runs.layout import MANIFEST_FILE, RUN_FILE
from t2c_lib.study.manifest import recorded_cells
from t2c_lib.study.params import params_from_dict
from t2c_lib.study.run_record import (
    RunSettingsDiffer,
    bind_run,
    check_run,
    differing,
    move_aside,
    read_record,
    record_for,
    replace_wanted,
)

GRID = {"prompt_types": ["Zero-Shot"], "schema_formats": ["full_schema"], "strategies": ["feedback", "single-pass"]}


def record(**changes):
    return record_for(params_from_dict({"run_id": "r", "limit": 6, **GRID, **changes}), "h" * 64, "local/m", "b1")


def test_the_keys_that_bind_a_run_and_those_that_do_not():
    base = record()
    assert differing(base, record(limit=10), with_model=True) == ["limit"]
    assert differing(base, record(prompt_types=["Zero-Shot", "CoT"]), with_model=True) == ["prompt_types"]
    assert differing(base, record(repeat_guard=True), with_model=True) == ["repeat_guard", "repeat_guard_retries"]
    assert differing(base, record(description="mine", workers=4, requests_per_minute=30.0), with_model=True) == []
    other_model = record_for(params_from_dict({"run_id": "r", "limit": 6, **GRID}), "h" * 64, "local/n", "b2")
    assert differing(base, other_model, with_model=True) == ["llama_build", "model_id"]
    assert differing(base, other_model, with_model=False) == []  # evaluation and analysis ask no model
    unknown = record_for(params_from_dict({"run_id": "r", "limit": 6, **GRID}), "h" * 64)  # not known before the model
    assert differing(base, unknown, with_model=True) == []
    other_data = record_for(params_from_dict({"run_id": "r", "limit": 6, **GRID}), "g" * 64)
    assert differing(base, other_data, with_model=False) == ["dataset_hash"]


def test_a_bound_run_refuses_other_settings_in_one_line_naming_keys_and_ways_out(tmp_path):
    run = tmp_path / "r"
    bind_run(run, record())
    written = (run / RUN_FILE).read_bytes()
    bind_run(run, record(limit=10))  # a bound run keeps its file
    assert (run / RUN_FILE).read_bytes() == written and written.endswith(b"\n")
    check_run(run, record(), with_model=True)  # the same settings: fine
    with pytest.raises(RunSettingsDiffer) as refused:
        check_run(run, record(limit=10, max_iterations=2), with_model=True)
    message = str(refused.value)
    assert "\n" not in message and "(limit, max_iterations differ; recorded in run.json)" in message
    assert "give a new run_id, or --replace-run" in message and "REPLACE_RUN=1" in message
    assert "results/r.replaced-<n>/" in message


def test_replace_moves_the_run_and_its_figures_aside_to_the_first_free_name(tmp_path):
    run, figures = tmp_path / "results" / "r", tmp_path / "figures"
    bind_run(run, record())
    (run / "feedback").mkdir()
    (run / "feedback" / "x.txt").write_text("kept", encoding="utf-8")
    (figures / "r").mkdir(parents=True)
    (tmp_path / "results" / "r.replaced-1").mkdir()  # taken
    moved = move_aside(run, figures)
    assert moved == tmp_path / "results" / "r.replaced-2" and not run.exists()
    assert (moved / "feedback" / "x.txt").read_text(encoding="utf-8") == "kept"
    assert (figures / "r.replaced-2").is_dir() and not (figures / "r").exists()
    assert check_run(run, record(limit=1), with_model=True) is None  # nothing there any more


def test_replace_is_asked_by_the_flag_or_the_environment(monkeypatch):
    monkeypatch.delenv("T2C_REPLACE_RUN", raising=False)
    assert replace_wanted() is False and replace_wanted(True) is True
    monkeypatch.setenv("T2C_REPLACE_RUN", "1")
    assert replace_wanted() is True and replace_wanted(False) is False


def write_manifest(cell: Path, params: dict) -> None:
    cell.mkdir(parents=True)
    manifest = {"parameters": params, "dataset_hash": "h" * 64, "model_id": "local/m", "signature": "s"}
    (cell / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")


def test_a_legacy_run_is_bound_to_most_of_its_cells_and_run_id_takes_only_its_grid(tmp_path):
    run = tmp_path / "r"
    own = params_from_dict({"run_id": "r", "limit": 6, **GRID}).to_dict()
    foreign = params_from_dict({"run_id": "r", "limit": 6, **GRID, "prompt_types": ["CoT"]}).to_dict()
    write_manifest(run / "feedback" / "Zero-Shot_Full", own)
    write_manifest(run / "single-pass" / "Zero-Shot_Full", own)
    write_manifest(run / "feedback" / "CoT_Full", foreign)  # a cell another grid wrote into the folder
    legacy = read_record(run)
    assert legacy is not None and legacy.parameters["prompt_types"] == ["Zero-Shot"]
    cells = recorded_cells("r", tmp_path)
    assert sorted(f"{c.strategy}/{c.configuration}" for c, _ in cells) == [
        "feedback/Zero-Shot_Full",
        "single-pass/Zero-Shot_Full",
    ]
    bind_run(run, legacy)
    assert read_record(run) == legacy


def test_run_id_of_a_run_moved_aside_names_its_own_folder(tmp_path):
    run = tmp_path / "r"
    write_manifest(run / "feedback" / "Zero-Shot_Full", params_from_dict({"run_id": "r", **GRID}).to_dict())
    moved = move_aside(run)
    ((_, params),) = recorded_cells(moved.name, tmp_path)[:1]
    assert params.run_id == "r.replaced-1"
