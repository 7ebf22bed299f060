"""Where a finished study run spent its time: wall, model, validation, overhead; calls, tokens/s, cache hits.

Reads a run directory (`results/<run_id>/`) as `make all` leaves it:

- the executed notebooks (`notebooks/*.ipynb`): papermill's start and end time of each
  run give the wall time (first start to last end) and the busy time (the sum of the
  notebook runs, more than the wall time when make ran jobs in parallel);
- every cell's `attempts.jsonl`: an attempt the model answered (`cached: false`) is a
  model call and its `model_latency_s` is model time; a cached attempt is a cache hit
  (its recorded latency is the original call's, not time spent in this run);
  `validation_s` is the validator chain's time.

Overhead is busy time minus model and validation time: notebook kernels, store
opening, gold screening, evaluation and analysis. Shares are of the busy time. It is a
lower bound: papermill's clock starts after its own process has started and imported its
modules (about 1 s per notebook run, 4 s before `notebook_engine` kept jsonschema's IRI
checker out), so the honest overhead of a grid is the wall time of a rerun whose replies
all come from the cache.

Usage: python benchmarks/study_grid.py results/<run_id> [--json out.json]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path


@dataclass
class GridTimes:
    """The numbers of one run directory."""

    notebooks: int
    wall_s: float
    busy_s: float
    model_s: float
    validation_s: float
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    inference_s: float
    evaluation_s: float
    analysis_s: float

    @property
    def overhead_s(self) -> float:
        return self.busy_s - self.model_s - self.validation_s

    def shares(self) -> dict[str, float]:
        busy = self.busy_s or 1.0
        return {
            "model": self.model_s / busy,
            "validation": self.validation_s / busy,
            "overhead": self.overhead_s / busy,
        }

    @property
    def decode_tok_per_s(self) -> float:
        """Completion tokens per second of model time (prefill included)."""
        return self.completion_tokens / self.model_s if self.model_s else 0.0


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def notebook_spans(run_dir: Path) -> dict[str, tuple[datetime, datetime]]:
    """Start and end of every executed notebook of the run, by file name."""
    spans = {}
    for path in sorted((run_dir / "notebooks").glob("*.ipynb")):
        meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("papermill", {})
        if not meta.get("start_time") or not meta.get("end_time"):
            raise ValueError(f"{path}: no papermill start/end time (not run by papermill, or unfinished)")
        spans[path.name] = (_time(meta["start_time"]), _time(meta["end_time"]))
    if not spans:
        raise FileNotFoundError(f"{run_dir / 'notebooks'}: no executed notebooks; run `make all` first")
    return spans


def measure(run_dir: Path) -> GridTimes:
    """Read the notebooks' times and every attempt of the run."""
    spans = notebook_spans(run_dir)
    seconds = {name: (end - start).total_seconds() for name, (start, end) in spans.items()}
    by_step = {
        step: sum(s for name, s in seconds.items() if name.startswith(prefix))
        for step, prefix in (("inference", "01_"), ("evaluation", "02_"), ("analysis", "03_"))
    }
    model = validation = 0.0
    calls = hits = prompt = completion = 0
    for path in sorted(run_dir.glob("*/*/attempts.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            attempt = json.loads(line)
            validation += float(attempt.get("validation_s", 0.0))
            if attempt.get("cached"):
                hits += 1
                continue
            calls += 1
            model += float(attempt.get("model_latency_s", 0.0))
            prompt += int(attempt.get("prompt_tokens", 0))
            completion += int(attempt.get("completion_tokens", 0))
    wall = (max(e for _, e in spans.values()) - min(s for s, _ in spans.values())).total_seconds()
    return GridTimes(
        len(spans),
        wall,
        sum(seconds.values()),
        model,
        validation,
        calls,
        hits,
        prompt,
        completion,
        by_step["inference"],
        by_step["evaluation"],
        by_step["analysis"],
    )


def report(times: GridTimes) -> str:
    """A short markdown table of the numbers."""
    shares = times.shares()
    rows = [
        ("notebook runs", f"{times.notebooks}"),
        ("wall time", f"{times.wall_s:.1f} s"),
        (
            "busy time (sum of notebook runs)",
            f"{times.busy_s:.1f} s ({times.busy_s / (times.wall_s or 1):.2f}x the wall time)",
        ),
        (
            "  inference / evaluation / analysis notebooks",
            f"{times.inference_s:.1f} / {times.evaluation_s:.1f} / {times.analysis_s:.1f} s",
        ),
        ("model time", f"{times.model_s:.1f} s ({shares['model']:.1%} of busy)"),
        ("validation time", f"{times.validation_s:.1f} s ({shares['validation']:.1%})"),
        ("overhead (busy - model - validation)", f"{times.overhead_s:.1f} s ({shares['overhead']:.1%})"),
        ("model calls / cache hits", f"{times.calls} / {times.cache_hits}"),
        ("prompt / completion tokens of the calls", f"{times.prompt_tokens} / {times.completion_tokens}"),
        ("completion tokens per model second", f"{times.decode_tok_per_s:.1f}"),
    ]
    return "\n".join(["| measure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="results/<run_id>")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    times = measure(args.run_dir)
    print(report(times))
    if args.json:
        data = {
            **asdict(times),
            "overhead_s": times.overhead_s,
            "shares": times.shares(),
            "completion_tok_per_model_s": times.decode_tok_per_s,
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
