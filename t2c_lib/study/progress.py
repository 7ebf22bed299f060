"""Progress across a whole grid, for `make all`: cells done of total, time so far, time left.

`make all` runs one notebook per step of every cell (strategy x configuration) and touches a
stamp when a step ends (`.inferred`, `.evaluated`, and the run's `.analyzed`); after each step
it calls `t2c study progress`, which counts those stamps. Stamps older than the start of this
`make` were done by an earlier invocation (a resumed grid) and do not set the pace. The
estimate is the time per cell finished in this invocation times the cells left: inference is
nearly all of a cell's time (see README, "Timings"), so it is rough at first and firms up.

`make` itself calls `python -m t2c_lib.study.progress RUN_DIR --since T CELL_DIR...` with the
cell folders its generated rules name (`GRID_CELLS`): this module imports nothing beyond the
standard library, so the line costs a few hundredths of a second of CPU instead of the
0.6 s of `t2c`'s whole command line (which reads the parameter file), 37 times per thesis grid.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

INFERRED, EVALUATED, ANALYZED = ".inferred", ".evaluated", ".analyzed"


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

    @property
    def left_s(self) -> float | None:
        """Seconds left at this invocation's pace, None before its first cell is finished."""
        if self.evaluated >= self.cells:
            return 0.0
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
        estimate = (
            "estimate after the first cell"
            if left is None
            else ""
            if left == 0
            else f"about {duration(left)} left at this pace"
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

    inferred = sum(stamped(d / INFERRED)[0] for d in cell_dirs)
    evaluated = [stamped(d / EVALUATED) for d in cell_dirs]
    return GridProgress(
        run_id=run_id,
        cells=len(cell_dirs),
        inferred=inferred,
        evaluated=sum(e for e, _ in evaluated),
        analyzed=stamped(run_dir / ANALYZED)[1],
        elapsed_s=max(0.0, now - since),
        evaluated_now=sum(n for _, n in evaluated),
    )


def main(argv: list[str] | None = None) -> None:
    """`python -m t2c_lib.study.progress RUN_DIR --since T CELL_DIR...`: print the line (on stderr, as make's log)."""
    parser = argparse.ArgumentParser(prog="python -m t2c_lib.study.progress", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="results/<run_id>")
    parser.add_argument("cell_dirs", type=Path, nargs="+", help="every cell folder of the grid")
    parser.add_argument("--since", type=float, default=None, help="when this make started (seconds since the epoch)")
    args = parser.parse_args(argv)
    print(grid_progress(args.run_dir.name, args.cell_dirs, args.run_dir, args.since).line(), file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    main()
