"""benchmarks/study_grid.py: the time split of a run directory, from notebook metadata and attempts."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

spec = importlib.util.spec_from_file_location("study_grid", ROOT / "benchmarks" / "study_grid.py")
study_grid = importlib.util.module_from_spec(spec)
sys.modules["study_grid"] = study_grid  # dataclasses look their module up
spec.loader.exec_module(study_grid)


def _notebook(path: Path, start: str, end: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": [], "metadata": {"papermill": {"start_time": start, "end_time": end}}}))


def _attempts(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")


def test_measure_splits_busy_time(tmp_path: Path) -> None:
    run = tmp_path / "run"
    # two inference notebooks in parallel (10 s each, overlapping), one evaluation (2 s), the analysis (3 s)
    _notebook(
        run / "notebooks" / "01_inference__agentic__a.ipynb", "2026-01-01T00:00:00.000000", "2026-01-01T00:00:10.000000"
    )
    _notebook(
        run / "notebooks" / "01_inference__agentic__b.ipynb", "2026-01-01T00:00:01.000000", "2026-01-01T00:00:11.000000"
    )
    _notebook(
        run / "notebooks" / "02_evaluation__agentic__a.ipynb",
        "2026-01-01T00:00:11.000000",
        "2026-01-01T00:00:13.000000",
    )
    _notebook(
        run / "notebooks" / "03_comparative_analysis.ipynb", "2026-01-01T00:00:13.000000", "2026-01-01T00:00:16.000000"
    )
    _attempts(
        run / "agentic" / "a" / "attempts.jsonl",
        [
            {
                "cached": False,
                "model_latency_s": 4.0,
                "validation_s": 0.5,
                "prompt_tokens": 100,
                "completion_tokens": 40,
            },
            {
                "cached": True,
                "model_latency_s": 9.0,
                "validation_s": 0.25,
                "prompt_tokens": 100,
                "completion_tokens": 40,
            },
        ],
    )
    _attempts(
        run / "single-pass" / "b" / "attempts.jsonl",
        [
            {
                "cached": False,
                "model_latency_s": 6.0,
                "validation_s": 0.25,
                "prompt_tokens": 50,
                "completion_tokens": 60,
            },
        ],
    )
    times = study_grid.measure(run)
    assert (times.notebooks, times.wall_s, times.busy_s) == (4, 16.0, 25.0)
    assert (times.inference_s, times.evaluation_s, times.analysis_s) == (20.0, 2.0, 3.0)
    assert (times.calls, times.cache_hits) == (2, 1)
    assert times.model_s == 10.0  # the cached attempt's latency is the original call's, not this run's
    assert times.validation_s == 1.0
    assert times.overhead_s == 14.0
    assert (times.prompt_tokens, times.completion_tokens) == (150, 100)
    assert times.decode_tok_per_s == 10.0
    assert times.shares()["overhead"] == pytest.approx(14 / 25)
    assert "| model calls / cache hits | 2 / 1 |" in study_grid.report(times)


def test_unfinished_notebook_is_named(tmp_path: Path) -> None:
    path = tmp_path / "run" / "notebooks" / "01_inference__x.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"cells": [], "metadata": {"papermill": {"start_time": "2026-01-01T00:00:00", "end_time": None}}})
    )
    with pytest.raises(ValueError, match="01_inference__x.ipynb: no papermill start/end time"):
        study_grid.measure(tmp_path / "run")
    with pytest.raises(FileNotFoundError, match="no executed notebooks"):
        study_grid.measure(tmp_path / "empty")
