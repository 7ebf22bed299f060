"""Progress across a whole grid, for `make all`: cells done of total, time so far, time left.

`make all` runs one notebook per step of every cell (strategy x configuration) and touches a
stamp when a step ends (`.inferred`, `.evaluated`, and the run's `.analyzed`); after each step
it calls `t2c study progress`, which counts those stamps. Stamps older than the start of this
`make` were done by an earlier invocation (a resumed grid) and do not set the pace. The
estimate is the time per cell finished in this invocation times the cells left: inference is
nearly all of a cell's time (see docs/study.md, "Timings and parallelism"), so it is rough at first and firms up.

A grid whose cells differ in cost is estimated cell by cell (issue 39): the executed notebooks
of this invocation (`RUN_DIR/notebooks/`, papermill records each one's duration) give the
seconds of an inference step that called the model, of one answered from the response cache
(every attempt of the cell `cached`), and of an evaluation step; a cell left is priced as what
it will be (evaluation only when inferred; a single-pass cell whose feedback twin has run
repeats that cell's first attempts, so it is answered from the cache; any other cell calls the
model), and the sum is divided by the parallelism this invocation reached (busy seconds per
wall second). Without those records (no executed notebooks) the estimate is the pace above.

`make` itself calls `python -m t2c_lib.study.progress RUN_DIR --since T CELL_DIR...` with the
cell folders its generated rules name (`GRID_CELLS`): this module imports nothing beyond the
standard library, so the line costs a few hundredths of a second of CPU instead of the
0.6 s of `t2c`'s whole command line (which reads the parameter file), 37 times per thesis grid.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

INFERRED, EVALUATED, ANALYZED = ".inferred", ".evaluated", ".analyzed"
PROGRESS_FILE = ".progress.json"
"""In a cell folder while it runs (`study.runner.ProgressNote`): questions done of total, when this run of it started."""


@dataclass(frozen=True)
class GridProgress:
    """Where a grid stands; `line()` is what `make all` prints after every step."""

    run_id: str
    cells: int
    inferred: int
    evaluated: int
    analyzed: bool
    elapsed_s: float
    evaluated_now: int  # cells finished since this `make` started (they set the pace)
    priced_left_s: float | None = None  # the cells left priced one by one (`price_left`), when measured
    cached_left: int = 0  # of the cells left, those that will be answered from the response cache
    inferred_cached: int = 0  # of the cells inferred, those whose every attempt came from the response cache

    @property
    def left_s(self) -> float | None:
        """Seconds left: the cells left priced by kind when this invocation measured them, else at its pace
        per cell; None before its first cell is finished."""
        if self.evaluated >= self.cells:
            return 0.0
        if self.priced_left_s is not None:
            return self.priced_left_s
        if not self.evaluated_now:
            return None
        return self.elapsed_s / self.evaluated_now * (self.cells - self.evaluated)

    def line(self) -> str:
        if self.analyzed:
            state = "analysis done"
        elif self.evaluated >= self.cells:
            state = "analysis next"
        else:
            state = f"{self.inferred} inferred, {self.evaluated} evaluated"
        left = self.left_s
        cache_note = (
            f" ({self.inferred_cached} of the {self.inferred} inferred answered from the cache)"
            if self.inferred_cached
            else ""
        )
        estimate = (
            f"estimate after the first evaluated cell{cache_note}"
            if left is None
            else ""
            if left == 0
            else f"about {duration(left)} left at this pace"
            + (f" ({self.cached_left} of the cells left answered from the cache)" if self.cached_left else "")
        )
        timing = f"{duration(self.elapsed_s)} so far" + (f", {estimate}" if estimate else "")
        return (
            f"[grid {self.run_id}] {self.evaluated} of {self.cells} cells (strategy x configuration) done "
            f"({state}); {timing}"
        )


def duration(seconds: float) -> str:
    """`47 s`, `3 min 05 s`, `1 h 02 min`."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def grid_progress(
    run_id: str, cell_dirs: list[Path], run_dir: Path, since: float | None, now: float | None = None
) -> GridProgress:
    """Count the step stamps of `cell_dirs` (every cell of the grid) and the run's analysis stamp."""
    now = time.time() if now is None else now
    since = now if since is None else since

    def stamped(path: Path) -> tuple[bool, bool]:
        """(exists, made since this make started)"""
        try:
            return True, path.stat().st_mtime >= since
        except FileNotFoundError:
            return False, False

    inferred_dirs = [d for d in cell_dirs if stamped(d / INFERRED)[0]]
    inferred = len(inferred_dirs)
    evaluated = [stamped(d / EVALUATED) for d in cell_dirs]
    all_cached = functools.cache(from_cache)  # each cell's attempt log read once for this line
    priced, cached_left = price_left(cell_dirs, run_dir, since, max(0.0, now - since), all_cached)
    return GridProgress(
        run_id=run_id,
        cells=len(cell_dirs),
        inferred=inferred,
        evaluated=sum(e for e, _ in evaluated),
        analyzed=stamped(run_dir / ANALYZED)[1],
        elapsed_s=max(0.0, now - since),
        evaluated_now=sum(n for _, n in evaluated),
        priced_left_s=priced,
        cached_left=cached_left,
        inferred_cached=sum(bool(all_cached(d)) for d in inferred_dirs),
    )


NOTEBOOKS = "notebooks"
"""In the run folder: the executed copies `make all` writes (`01_inference__<strategy>__<configuration>.ipynb`)."""


def from_cache(cell_dir: Path) -> bool | None:
    """Whether every attempt of a cell came from the response cache (None without attempts)."""
    try:
        lines = (cell_dir / "attempts.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    flags = []
    for line in lines:
        try:
            flags.append(bool(json.loads(line).get("cached")))
        except ValueError:
            continue
    return all(flags) if flags else None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _answered_by(cell: Path) -> Path | None:
    """The folder of the cell whose first requests answer all of `cell`'s (single-pass: its feedback twin), or None."""
    from t2c_lib.agent.strategies import STRATEGIES, load_strategy_modules

    load_strategy_modules()
    name = cell.parent.name
    spec = STRATEGIES.get(name) if name in STRATEGIES else None
    if spec is None or not spec.answered_by_wait or spec.waits_for is None:
        return None
    return cell.parent.parent / spec.waits_for / cell.name


def _step(path: Path, since: float, now: float) -> tuple[float | None, float | None]:
    """(seconds it took, seconds it has run) of a notebook step of this invocation: the first when it finished, the
    second while it runs (papermill writes the executed copy with its start time at once); (None, None) otherwise."""
    try:
        if path.stat().st_mtime < since:
            return None, None
        meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("papermill", {})
    except (OSError, ValueError):
        return None, None
    value = meta.get("duration")
    if isinstance(value, (int, float)):
        return float(value), None
    try:
        started = datetime.fromisoformat(str(meta.get("start_time"))).timestamp()
    except ValueError:
        return None, None
    return None, max(0.0, now - started) if started >= since else None


def _inference_left(cost: float, ran: float | None, note: dict[str, float] | None, now: float) -> float:
    """What is left of a cell's inference step that costs `cost`: all of it before it starts; while it runs, its own
    pace times the questions left once its progress note (this run of it) has one answered, else what its time so
    far leaves of `cost`."""
    if ran is None:
        return cost
    asked = note["done"] - note["resumed_at"] if note is not None and note["started"] >= now - ran else 0
    if note is not None and asked > 0:
        return max(0.0, now - note["started"]) / asked * (note["questions"] - note["done"])
    return max(0.0, cost - ran)


def price_left(
    cell_dirs: list[Path],
    run_dir: Path,
    since: float,
    elapsed_s: float,
    all_cached: Callable[[Path], bool | None] | None = None,
) -> tuple[float | None, int]:
    """(seconds left, cells left answered from the cache), from the steps this invocation ran; None when a kind
    of step the cells left need has not been measured yet.

    A step under way counts what it has left (and its time so far towards the parallelism); a cell whose twin
    answers it (single-pass after feedback) is priced as answered from the cache once the twin is in the grid."""
    notebooks, now, grid = run_dir / NOTEBOOKS, since + elapsed_s, set(cell_dirs)
    model: list[float] = []
    cached: list[float] = []
    evaluation: list[float] = []
    running: dict[tuple[Path, str], float] = {}  # (cell, step) -> seconds it has run so far
    for cell in cell_dirs:
        tag = f"{cell.parent.name}__{cell.name}"
        for step, name in (("infer", f"01_inference__{tag}"), ("score", f"02_evaluation__{tag}")):
            took, ran = _step(notebooks / f"{name}.ipynb", since, now)
            if took is not None:
                kind = evaluation if step == "score" else cached if (all_cached or from_cache)(cell) else model
                kind.append(took)
            elif ran is not None:
                running[(cell, step)] = ran
    busy = sum(model) + sum(cached) + sum(evaluation)
    if not busy:
        return None, 0
    busy += sum(running.values())  # steps under way are busy too
    score = _mean(evaluation)
    answer_cached = _mean(cached) if cached else score  # a step without model calls costs about an evaluation
    answer_model = _mean(model)
    total, cached_left = 0.0, 0
    for cell in cell_dirs:
        if (cell / EVALUATED).exists():
            continue
        if score is None:
            return None, 0
        scoring = max(0.0, score - running.get((cell, "score"), 0.0))
        if (cell / INFERRED).exists():
            total += scoring
            continue
        twin = _answered_by(cell)
        if twin is not None and (twin in grid or (twin / INFERRED).exists()):  # make runs the twin first
            cached_left += 1
            cost = answer_cached
        else:
            cost = answer_model
        if cost is None:
            return None, 0
        total += _inference_left(cost, running.get((cell, "infer")), read_note(cell), now) + scoring
    return total / max(1.0, busy / elapsed_s if elapsed_s else 1.0), cached_left


def read_note(cell_dir: Path) -> dict[str, float] | None:
    """A cell's `.progress.json` (questions, done, resumed_at, started), or None when absent or unreadable."""
    try:
        data = json.loads((cell_dir / PROGRESS_FILE).read_text(encoding="utf-8"))
        return {k: float(data[k]) for k in ("questions", "done", "resumed_at", "started")}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cell_line(cell_dir: Path, now: float | None = None, grid_left_s: float | None = None) -> str | None:
    """`[cell feedback/CoT_Nodes+Paths] 3 of 6 questions, 1 min 02 s so far, about 1 min 02 s left in this cell`.

    The cell's own pace in this run of it (questions resumed from an earlier run cost nothing); None before it
    has written its progress note."""
    note = read_note(cell_dir)
    if note is None:
        return None
    now = time.time() if now is None else now
    elapsed = max(0.0, now - note["started"])
    done, total, asked = int(note["done"]), int(note["questions"]), note["done"] - note["resumed_at"]
    left = (
        ""
        if done >= total
        else f", about {duration(elapsed / asked * (total - done))} left in this cell"
        if asked > 0
        else ", an estimate after its first question"
    )
    grid = f"; the grid: about {duration(grid_left_s)} left" if grid_left_s else ""
    name = f"{cell_dir.parent.name}/{cell_dir.name}"
    return f"[cell {name}] {done} of {total} questions, {duration(elapsed)} so far{left}{grid}"


WATCH_EVERY_S = 20.0
"""How often `make all`'s watcher looks at a running cell: a line when it finished a question since the last one."""
HEARTBEAT_S = 120.0
"""A line at least this often while a cell runs, even when no question finished (a slow first question)."""


@dataclass(frozen=True)
class GridWatch:
    """The grid around a watched cell (`make all`'s `GRID_CELLS`, `GRID_START`), for the grid's estimate."""

    run_dir: Path
    cell_dirs: tuple[Path, ...]
    since: float

    def left_s(self) -> float | None:
        return grid_progress(self.run_dir.name, list(self.cell_dirs), self.run_dir, self.since).left_s


def watch(
    cell_dir: Path,
    write: Callable[[str], None],
    stop: threading.Event,
    grid: GridWatch | None = None,
    every_s: float | None = None,
) -> None:
    """Until `stop` is set: `cell_line` whenever the cell finished another question (at most every `every_s`), at
    least every `HEARTBEAT_S`, and once more when stopped if it moved on; notes older than the watch (an earlier run
    of the cell) are not shown."""
    started = time.time() - 1.0
    shown_done, shown_at = -1.0, 0.0
    while True:
        stopped = stop.wait(every_s or WATCH_EVERY_S)
        note = read_note(cell_dir)
        now = time.time()
        fresh = note is not None and note["started"] >= started
        if (
            fresh
            and note is not None
            and (note["done"] != shown_done or (not stopped and now - shown_at >= HEARTBEAT_S))
        ):
            line = cell_line(cell_dir, now, grid.left_s() if grid is not None else None)
            if line:
                write(line)
                shown_done, shown_at = note["done"], now
        if stopped:  # the notebook ended: its last line was shown (a cell answered from the cache gets one)
            return


PROGRESS_CELL_ENV = "T2C_PROGRESS_CELL"
"""The cell folder a `make all` rule's notebook runs: its progress is watched while the notebook runs."""
PROGRESS_FD_ENV = "T2C_PROGRESS_FD"
"""The open file descriptor the watched cell's lines go to (make's rule: 3, its stderr before the log redirect)."""
GRID_ENV = ("T2C_RUN_DIR", "T2C_GRID_CELLS", "T2C_GRID_START")
"""The run folder, its cell folders and when this make started: the grid's estimate on every cell line."""


class Watch:
    """The thread printing a watched cell's lines; `finish` stops it after its last line (before the process ends)."""

    def __init__(self, thread: threading.Thread, stop: threading.Event) -> None:
        self.thread, self.stop = thread, stop

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


def start_watch() -> Watch | None:
    """A daemon thread printing the watched cell's progress lines (`study.progress.watch`), or None.

    Only under a `make all` rule (both variables set, the descriptor open): the notebook's own output goes to its
    log, and without these lines a cell that runs for minutes would print nothing."""
    cell, fd = os.environ.get(PROGRESS_CELL_ENV, ""), os.environ.get(PROGRESS_FD_ENV, "")
    if not cell or not fd.isdigit():
        return None
    try:
        out = os.fdopen(int(fd), "w", closefd=False)
    except OSError:
        return None

    def write(line: str) -> None:
        try:
            out.write(line + "\n")  # one write: lines of cells running at once do not interleave
            out.flush()
        except OSError:
            pass

    run_dir, cells, since = (os.environ.get(name, "") for name in GRID_ENV)
    grid = None
    if run_dir and cells and since.replace(".", "", 1).isdigit():
        grid = GridWatch(Path(run_dir), tuple(Path(c) for c in cells.split()), float(since))
    stop = threading.Event()
    thread = threading.Thread(target=watch, args=(Path(cell), write, stop, grid), daemon=True, name="t2c-watch")
    thread.start()
    return Watch(thread, stop)


def main(argv: list[str] | None = None) -> None:
    """`python -m t2c_lib.study.progress RUN_DIR --since T CELL_DIR...`: print the line (on stderr, as make's log)."""
    parser = argparse.ArgumentParser(prog="python -m t2c_lib.study.progress", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="results/<run_id>")
    parser.add_argument("cell_dirs", type=Path, nargs="+", help="every cell folder of the grid")
    parser.add_argument("--since", type=float, default=None, help="when this make started (seconds since the epoch)")
    args = parser.parse_args(argv)
    line = grid_progress(args.run_dir.name, args.cell_dirs, args.run_dir, args.since).line()
    # one write of the whole line: under `make -j` two steps end at once, and print's separate write of the
    # newline let their lines run together
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


if __name__ == "__main__":  # pragma: no cover
    main()
