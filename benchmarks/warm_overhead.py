"""A warm rerun of a finished grid: `make all` with every model reply cached, its wall time and where it goes.

Everything a warm rerun does is overhead: the model answers from the response cache, so its
wall time is what a grid costs beyond the model (issue 27 asks for at most 3% of a cold grid's
wall). The script needs a finished run (`make all PARAMS=<file>` once, cold):

1. moves `results/<run_id>` and `figures/<run_id>` aside (`<name>.previous`; refuses if
   those exist), keeping `.cache/` (the response cache, the store, the gold screen);
2. runs `make all PARAMS=<file>` and measures its wall time and the CPU time of everything it
   started (make, papermill, kernels, the store's query processes);
3. splits the time by the executed notebooks' papermill clocks: per step (inference,
   evaluation, analysis) the kernel start (papermill's start to the first cell), the step's
   library call (`study.infer`, `study.evaluate`, `study.analyze`), the cells that only show
   results, and the kernel stop (last cell to papermill's end); the wall time during which no
   notebook ran (process starts before papermill's clock, make, the progress lines); the
   validator chain's time from the attempt logs; model calls (0 on a warm rerun);
4. compares the rerun with the previous run file by file (executed notebooks aside): byte for
   byte, else as JSON without measured durations (keys ending in `_s`, "ran in ... s" in
   validator messages), the git commit and the `cached` flag; figures byte for byte.

The previous run stays beside the new one (`--restore` puts it back and drops the rerun).

Usage: python benchmarks/warm_overhead.py --params params/thesis.yaml [--jobs 2] [--cold-wall-s 3532]
       [--json out.json] [--restore] [--make-arg VAR=value ...]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STEP_CALLS = {"inference": "study.infer(", "evaluation": "study.evaluate(", "analysis": "study.analyze("}
PREFIXES = {"01_": "inference", "02_": "evaluation", "03_": "analysis"}
VOLATILE_KEYS = frozenset({"git_commit", "cached"})
MEASURED = re.compile(r"ran in [0-9.]+ s")


@dataclass
class NotebookTimes:
    """One executed notebook's clock, split (seconds)."""

    name: str
    step: str
    start: datetime
    end: datetime
    kernel_start_s: float
    step_s: float
    display_s: float
    kernel_stop_s: float

    @property
    def total_s(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass
class Comparison:
    """The rerun against the previous run: files byte-identical, differing only in measured values, different."""

    identical: int = 0
    measured_only: list[str] = field(default_factory=list)
    different: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass
class WarmRerun:
    params: str
    run_id: str
    wall_s: float
    cpu_s: float
    notebooks: list[NotebookTimes]
    idle_s: float
    validation_s: float
    model_calls: int
    cache_hits: int
    previous_wall_s: float | None
    comparison: Comparison

    def by_step(self) -> dict[str, dict[str, float]]:
        """Per step: notebook runs and the summed seconds of each part of their clocks."""
        steps: dict[str, dict[str, float]] = {}
        for nb in self.notebooks:
            row = steps.setdefault(
                nb.step,
                {
                    "runs": 0,
                    "total_s": 0.0,
                    "kernel_start_s": 0.0,
                    "step_s": 0.0,
                    "display_s": 0.0,
                    "kernel_stop_s": 0.0,
                },
            )
            row["runs"] += 1
            for key in ("total_s", "kernel_start_s", "step_s", "display_s", "kernel_stop_s"):
                row[key] += getattr(nb, key)
        return steps


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def notebook_times(path: Path) -> NotebookTimes:
    """Split one executed notebook's papermill clock."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    meta = nb.get("metadata", {}).get("papermill", {})
    if not meta.get("start_time") or not meta.get("end_time"):
        raise ValueError(f"{path}: no papermill start/end time (not run by papermill, or unfinished)")
    start, end = _time(meta["start_time"]), _time(meta["end_time"])
    step = next((s for p, s in PREFIXES.items() if path.name.startswith(p)), "other")
    cells = [
        c
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code" and c["metadata"].get("papermill", {}).get("start_time")
    ]
    if not cells:
        return NotebookTimes(path.name, step, start, end, (end - start).total_seconds(), 0.0, 0.0, 0.0)
    call = STEP_CALLS.get(step, "\0")
    step_s = display_s = 0.0
    for cell in cells:
        clock = cell["metadata"]["papermill"]
        seconds = (_time(clock["end_time"]) - _time(clock["start_time"])).total_seconds()
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if call in source:
            step_s += seconds
        else:
            display_s += seconds
    first = _time(cells[0]["metadata"]["papermill"]["start_time"])
    last = _time(cells[-1]["metadata"]["papermill"]["end_time"])
    return NotebookTimes(
        path.name,
        step,
        start,
        end,
        (first - start).total_seconds(),
        step_s,
        display_s,
        (end - last).total_seconds(),
    )


def idle_seconds(spans: list[tuple[datetime, datetime]], start: datetime, end: datetime) -> float:
    """Seconds of [start, end] during which none of the spans ran."""
    covered, cursor = 0.0, start
    for s, e in sorted(spans):
        s, e = max(s, cursor), min(e, end)
        if e > s:
            covered += (e - s).total_seconds()
            cursor = e
    return max(0.0, (end - start).total_seconds() - covered)


def attempts_totals(run_dir: Path) -> tuple[float, int, int]:
    """Validator-chain seconds, model calls and cache hits of every attempt log of the run."""
    validation, calls, hits = 0.0, 0, 0
    for path in sorted(run_dir.glob("*/*/attempts.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                attempt = json.loads(line)
                validation += float(attempt.get("validation_s", 0.0))
                hits += bool(attempt.get("cached"))
                calls += not attempt.get("cached")
    return validation, calls, hits


def _scrub(value: Any) -> Any:
    """A JSON value without what a rerun measures anew."""
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in VOLATILE_KEYS and not k.endswith("_s")}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, str):
        return MEASURED.sub("ran in <measured> s", value)
    return value


def _records(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def compare_dirs(previous: Path, rerun: Path, comparison: Comparison, label: str) -> None:
    """Add every file of `previous` (executed notebooks and make's stamps aside) to `comparison`."""
    for old in sorted(p for p in previous.rglob("*") if p.is_file()):
        rel = old.relative_to(previous)
        if rel.parts[0] == "notebooks" or rel.name.startswith("."):
            continue
        name, new = f"{label}/{rel}", rerun / rel
        if not new.is_file():
            comparison.missing.append(name)
        elif filecmp.cmp(old, new, shallow=False):
            comparison.identical += 1
        elif old.suffix in (".json", ".jsonl") and _scrub(_records(old)) == _scrub(_records(new)):
            comparison.measured_only.append(name)
        else:
            comparison.different.append(name)


def run_id_of(params_file: Path) -> str:
    match = re.search(r"^run_id:\s*([^#\s]+)", params_file.read_text(encoding="utf-8"), re.MULTILINE)
    if not match:
        raise SystemExit(f"{params_file}: no run_id")
    return match.group(1)


def warm_rerun(params: str, jobs: int | None, make_args: list[str], log: Path, cold_wall_s: float | None) -> WarmRerun:
    """Move the finished run aside, rerun `make all`, measure, compare."""
    run_id = run_id_of(ROOT / params)
    run_dir, figures = ROOT / "results" / run_id, ROOT / "figures" / run_id
    previous, previous_figures = run_dir.with_name(run_id + ".previous"), figures.with_name(run_id + ".previous")
    if not (run_dir / ".analyzed").is_file():
        raise SystemExit(f"{run_dir}: no finished run (run `make all PARAMS={params}` first; it fills the cache)")
    for path in (previous, previous_figures):
        if path.exists():
            raise SystemExit(f"{path} exists (an earlier warm rerun's previous run): move it away first")
    previous_wall = cold_wall_s
    if previous_wall is None:
        spans = [(nb.start, nb.end) for nb in map(notebook_times, (run_dir / "notebooks").glob("*.ipynb"))]
        previous_wall = (max(e for _, e in spans) - min(s for s, _ in spans)).total_seconds() if spans else None
    run_dir.rename(previous)
    if figures.exists():
        figures.rename(previous_figures)
    command = ["make", "all", f"PARAMS={params}", *([f"JOBS={jobs}"] if jobs else []), *make_args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started, t0 = datetime.now(UTC), time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
    wall = time.perf_counter() - t0
    ended = datetime.now(UTC)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(
            f"`{' '.join(command)}` failed (exit {done.returncode}); see {log}; the previous run is {previous}"
        )
    notebooks = [notebook_times(p) for p in sorted((run_dir / "notebooks").glob("*.ipynb"))]
    validation, calls, hits = attempts_totals(run_dir)
    comparison = Comparison()
    compare_dirs(previous, run_dir, comparison, "results")
    if previous_figures.exists():
        compare_dirs(previous_figures, figures, comparison, "figures")
    return WarmRerun(
        params=params,
        run_id=run_id,
        wall_s=wall,
        cpu_s=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        notebooks=notebooks,
        idle_s=idle_seconds([(nb.start, nb.end) for nb in notebooks], started, ended),
        validation_s=validation,
        model_calls=calls,
        cache_hits=hits,
        previous_wall_s=previous_wall,
        comparison=comparison,
    )


def report(result: WarmRerun, cold_wall_label: str) -> str:
    """A markdown table of the rerun and its split."""
    rows = [
        ("notebook runs", str(len(result.notebooks))),
        ("wall time of `make all`", f"{result.wall_s:.1f} s"),
        ("CPU time of everything it started", f"{result.cpu_s:.1f} s"),
    ]
    if result.previous_wall_s:
        rows.append(
            (
                f"share of {cold_wall_label}",
                f"{result.wall_s / result.previous_wall_s:.1%} of {result.previous_wall_s:.0f} s",
            )
        )
    for step, row in result.by_step().items():
        rows.append(
            (
                f"{step} notebooks ({row['runs']:.0f}), summed",
                f"{row['total_s']:.1f} s: kernel start {row['kernel_start_s']:.1f}, {step} call {row['step_s']:.1f}, "
                f"display cells {row['display_s']:.1f}, kernel stop {row['kernel_stop_s']:.1f}",
            )
        )
    rows += [
        ("wall time with no notebook running (process starts, make, progress lines)", f"{result.idle_s:.1f} s"),
        ("validator chain (in the inference calls)", f"{result.validation_s:.1f} s"),
        (
            "model calls / cache hits",
            f"{result.model_calls} / {result.cache_hits}"
            + ("" if not result.model_calls else " (not warm: the model answered)"),
        ),
        (
            "rerun vs previous run",
            f"{result.comparison.identical} files byte-identical, {len(result.comparison.measured_only)} differ only in "
            f"measured durations / commit / cache flag, {len(result.comparison.different)} different, "
            f"{len(result.comparison.missing)} missing",
        ),
    ]
    lines = ["| measure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]
    for name in result.comparison.different + result.comparison.missing:
        lines.append(f"DIFFERENT OR MISSING: {name}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--params", required=True, help="the parameter file of a finished run (relative to the project root)"
    )
    parser.add_argument("--jobs", type=int, help="JOBS for make (default: the Makefile's, one per core)")
    parser.add_argument(
        "--cold-wall-s",
        type=float,
        help="the cold grid's wall time to take the share of (default: the previous run's notebook span)",
    )
    parser.add_argument("--make-arg", action="append", default=[], help="one more VAR=value for make (repeatable)")
    parser.add_argument("--log", type=Path, help="make's output (default: results/<run_id>.warm.log)")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    parser.add_argument(
        "--restore", action="store_true", help="afterwards put the previous run back and drop the rerun"
    )
    args = parser.parse_args()
    run_id = run_id_of(ROOT / args.params)
    log = args.log or ROOT / "results" / f"{run_id}.warm.log"
    result = warm_rerun(args.params, args.jobs, args.make_arg, log, args.cold_wall_s)
    label = "the given cold wall" if args.cold_wall_s else "the previous run's wall (notebook span)"
    print(report(result, label))
    if args.json:
        data = asdict(result) | {"by_step": result.by_step()}
        args.json.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    run_dir, figures = ROOT / "results" / run_id, ROOT / "figures" / run_id
    if args.restore:
        for new, old in (
            (run_dir, run_dir.with_name(run_id + ".previous")),
            (figures, figures.with_name(run_id + ".previous")),
        ):
            if old.exists():
                shutil.rmtree(new, ignore_errors=True)
                old.rename(new)
        print(f"previous run restored to {run_dir}", file=sys.stderr)
    else:
        print(
            f"previous run kept in {run_dir.with_name(run_id + '.previous')} (and figures/{run_id}.previous)",
            file=sys.stderr,
        )
    if result.comparison.different or result.comparison.missing:
        sys.exit(1)


if __name__ == "__main__":
    main()
