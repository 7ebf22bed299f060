"""benchmarks/warm_overhead.py: the split of a notebook's clock, idle wall time, and the rerun comparison."""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.helpers import ROOT

spec = importlib.util.spec_from_file_location("warm_overhead", ROOT / "benchmarks" / "warm_overhead.py")
warm_overhead = importlib.util.module_from_spec(spec)
sys.modules["warm_overhead"] = warm_overhead  # dataclasses look their module up
spec.loader.exec_module(warm_overhead)


def _cell(source: str, start: str, end: str) -> dict:
    return {"cell_type": "code", "source": [source], "metadata": {"papermill": {"start_time": start, "end_time": end}}}


def test_notebook_clock_splits_into_kernel_start_step_call_display_and_kernel_stop(tmp_path: Path) -> None:
    path = tmp_path / "02_evaluation__feedback__CoT_Full.ipynb"
    cells = [
        _cell("params_file = 'x'", "2026-01-01T00:00:02", "2026-01-01T00:00:02.5"),
        _cell("summary = study.evaluate(params, a, b, c)", "2026-01-01T00:00:02.5", "2026-01-01T00:00:06.5"),
        _cell("study.table(summary['by_scoring'], cols)", "2026-01-01T00:00:06.5", "2026-01-01T00:00:07"),
    ]
    meta = {"papermill": {"start_time": "2026-01-01T00:00:00", "end_time": "2026-01-01T00:00:08"}}
    path.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": "x"}, *cells], "metadata": meta}))
    nb = warm_overhead.notebook_times(path)
    assert (nb.step, nb.total_s, nb.kernel_start_s, nb.step_s, nb.display_s, nb.kernel_stop_s) == (
        "evaluation",
        8.0,
        2.0,
        4.0,
        1.0,
        1.0,
    )


def test_idle_seconds_count_the_wall_time_no_notebook_covers() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    at = lambda s: t0 + timedelta(seconds=s)  # noqa: E731
    spans = [(at(1), at(5)), (at(3), at(8)), (at(10), at(12))]  # two overlap (make -j2)
    assert warm_overhead.idle_seconds(spans, at(0), at(13)) == 1 + 2 + 1


def test_comparison_names_measured_only_and_real_differences(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for root, seconds, pass_at_1, commit in ((old, 0.031, 0.5, "a"), (new, 0.012, 0.5, "b")):
        (root / "cell").mkdir(parents=True)
        (root / "notebooks").mkdir()
        row = {
            "question_id": "q1",
            "validation_s": seconds,
            "message": f"ran in {seconds} s, 6 row(s)",
            "cached": root == new,
        }
        (root / "cell" / "attempts.jsonl").write_text(json.dumps(row) + "\n")
        (root / "cell" / "manifest.json").write_text(json.dumps({"git_commit": commit, "model": "m"}))
        (root / "cell" / "summary.json").write_text(json.dumps({"pass_at_1": pass_at_1 if root == old else 0.25}))
        (root / "cell" / "metrics.csv").write_text("question_id,bleu\nq1,0.5\n")
        (root / "notebooks" / "x.ipynb").write_text(str(seconds))  # executed notebooks are not compared
        (root / "cell" / ".evaluated").write_text(str(seconds))  # nor make's stamps
    (old / "cell" / "gone.csv").write_text("x\n")
    comparison = warm_overhead.Comparison()
    warm_overhead.compare_dirs(old, new, comparison, "results")
    assert comparison.identical == 1
    assert comparison.measured_only == ["results/cell/attempts.jsonl", "results/cell/manifest.json"]
    assert comparison.different == ["results/cell/summary.json"]
    assert comparison.missing == ["results/cell/gone.csv"]
