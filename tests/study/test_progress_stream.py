"""`make all` says how a running cell stands, and its estimate holds after the first cell (issue 52, item 6).

`make all FRESH=1` on the quick grid printed nothing for 12 min 47 s (per-question progress went only to the
notebooks' logs) and then "about 25 min 42 s left" with about 7 min left: a running cell was priced as if it had
not started, a single-pass cell whose feedback twin was still running as one that asks the model (it is answered
from the cache once the twin is done), and the cells running beside the finished ones did not count towards the
parallelism. Here a running cell writes `.progress.json`; the notebook engine under a make rule prints a line per
cell from it to the terminal's descriptor; the estimate prices what is left of running cells.
"""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import UTC
from pathlib import Path

from t2c_lib.study import progress
from t2c_lib.study.make import make_rules
from t2c_lib.study.params import params_from_dict
from t2c_lib.study.progress import PROGRESS_FILE, cell_line, grid_progress, start_watch, watch

MIN = 60.0


def note(cell: Path, questions: int, done: int, started: float, resumed_at: int = 0) -> None:
    cell.mkdir(parents=True, exist_ok=True)
    data = {"questions": questions, "done": done, "resumed_at": resumed_at, "started": started}
    (cell / PROGRESS_FILE).write_text(json.dumps(data), encoding="utf-8")


def test_a_cell_line_names_the_cell_its_questions_and_its_own_pace(tmp_path):
    cell = tmp_path / "run" / "feedback" / "CoT_Nodes+Paths"
    now = 1_000_000.0
    note(cell, 6, 2, now - 60)
    assert cell_line(cell, now) == (
        "[cell feedback/CoT_Nodes+Paths] 2 of 6 questions, 1 min 00 s so far, about 2 min 00 s left in this cell"
    )
    note(cell, 6, 4, now - 60, resumed_at=3)  # 3 done by an earlier run: 1 question in 60 s
    assert cell_line(cell, now, grid_left_s=600).endswith(
        "about 2 min 00 s left in this cell; the grid: about 10 min 00 s left"
    )
    note(cell, 6, 0, now - 5)
    assert cell_line(cell, now).endswith("0 of 6 questions, 5 s so far, an estimate after its first question")


def test_the_watch_prints_a_line_as_questions_finish_and_none_for_an_earlier_run(tmp_path):
    cell = tmp_path / "run" / "feedback" / "Few-Shot_Full"
    note(cell, 3, 3, time.time() - 3600)  # an earlier run's note: not shown
    lines: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(target=watch, args=(cell, lines.append, stop), kwargs={"every_s": 0.05})
    thread.start()
    try:
        time.sleep(0.3)
        assert lines == []
        started = time.time()
        for done in range(4):
            note(cell, 3, done, started)
            time.sleep(0.3)
    finally:
        stop.set()
        thread.join(5)
    shown = [line.split("] ")[1].split(",")[0] for line in lines]
    assert shown == ["0 of 3 questions", "1 of 3 questions", "2 of 3 questions", "3 of 3 questions"], lines


def test_the_notebook_engine_sends_the_lines_to_the_descriptor_a_make_rule_names(tmp_path, monkeypatch):
    cell = tmp_path / "run" / "single-pass" / "CoT_Full"
    read_end, write_end = os.pipe()
    monkeypatch.setenv("T2C_PROGRESS_CELL", str(cell))
    monkeypatch.setenv("T2C_PROGRESS_FD", str(write_end))
    monkeypatch.setattr(progress, "WATCH_EVERY_S", 0.05)
    watching = start_watch()
    try:
        assert watching is not None
        time.sleep(0.2)
        note(cell, 2, 1, time.time())
        time.sleep(0.4)
        note(cell, 2, 2, time.time())  # the last question, just before the notebook ends
    finally:
        watching.finish() if watching else None
        os.close(write_end)
    text = os.read(read_end, 10_000).decode()
    os.close(read_end)
    assert text.startswith("[cell single-pass/CoT_Full] 1 of 2 questions, "), text
    assert text.splitlines()[-1].startswith("[cell single-pass/CoT_Full] 2 of 2 questions, "), text  # shown on finish
    monkeypatch.delenv("T2C_PROGRESS_CELL")
    assert start_watch() is None  # outside a make rule: no watch


def test_the_make_rules_export_the_watched_cell_and_keep_the_terminal_on_descriptor_3():
    params = params_from_dict({"run_id": "r", "prompt_types": ["CoT"], "schema_formats": ["only_paths"]})
    rules = make_rules(params, "params/x.yaml")
    assert (
        "results/r/feedback/CoT_Only-Paths/.inferred: export T2C_PROGRESS_CELL := results/r/feedback/CoT_Only-Paths"
        in rules
    )
    inference = [line for line in rules.splitlines() if "01_inference.ipynb" in line]
    assert inference and all(" 3>&2 $(call NOTEBOOK_LOG," in line for line in inference)
    assert "export T2C_PROGRESS_FD = 3" in rules and "export T2C_GRID_START = $(GRID_START)" in rules


def executed(run: Path, name: str, seconds: float, at: float) -> None:
    path = run / "notebooks" / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"metadata": {"papermill": {"duration": seconds}}}), encoding="utf-8")
    os.utime(path, (at, at))


def under_way(run: Path, name: str, started: float, now: float) -> None:
    """The executed copy papermill writes when a step starts: its start time, no duration yet."""
    from datetime import datetime

    path = run / "notebooks" / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    start = datetime.fromtimestamp(started, UTC).isoformat()
    path.write_text(json.dumps({"metadata": {"papermill": {"start_time": start, "duration": None}}}), encoding="utf-8")
    os.utime(path, (now, now))


def stamp(cell: Path, name: str, at: float, cached: bool | None = None) -> None:
    cell.mkdir(parents=True, exist_ok=True)
    (cell / name).touch()
    os.utime(cell / name, (at, at))
    if cached is not None:
        (cell / "attempts.jsonl").write_text(json.dumps({"cached": cached}) + "\n", encoding="utf-8")


def test_after_the_first_cell_the_quick_grids_estimate_is_within_half_of_what_is_left(tmp_path):
    """The quick grid asked again, two jobs: both feedback cells ask the model at once (12 min each), then the two
    single-pass cells are answered from the cache (20 s), every evaluation takes 30 s. At 12.5 min the first
    feedback cell is done and evaluated and the second has 5 of its 6 questions: about 2 min are left."""
    since = 1_000_000.0
    now = since + 12.5 * MIN
    run = tmp_path / "quick"
    fb_few, fb_cot = run / "feedback" / "Few-Shot_Nodes+Paths", run / "feedback" / "CoT_Nodes+Paths"
    sp_few, sp_cot = run / "single-pass" / "Few-Shot_Nodes+Paths", run / "single-pass" / "CoT_Nodes+Paths"
    stamp(fb_few, ".inferred", since + 12 * MIN, cached=False)
    executed(run, "01_inference__feedback__Few-Shot_Nodes+Paths", 12 * MIN, since + 12 * MIN)
    stamp(fb_few, ".evaluated", now)
    executed(run, "02_evaluation__feedback__Few-Shot_Nodes+Paths", 30, now)
    under_way(run, "01_inference__feedback__CoT_Nodes+Paths", since + 1, now)  # running since the start
    note(fb_cot, 6, 5, since + 5)  # 5 of its 6 questions done
    cells = [fb_few, fb_cot, sp_few, sp_cot]
    left = grid_progress("quick", cells, run, since, now=now).left_s
    # what is left, by the scenario: the second feedback cell's last question (2 min) and its evaluation, and
    # the single-pass cells (20 s + 30 s each, one of them beside the feedback cell's evaluation)
    truth = 2 * MIN + 30 + 20 + 30 + 20 + 30 - 50
    assert left is not None and 0.5 * truth <= left <= 1.5 * truth, (left, truth)
