"""One-at-a-time decoding against lanes, side by side in one run, on the study's real request mix.

Both engines run the same cells of the thesis grid with the feedback loop (first attempts
and the refinements the validator chain's feedback asks for), the response cache off, on
the same machine in the same process, configuration by configuration in alternation
(single, lanes, single, lanes, ...) so that a change in the machine's load falls on both.
Reported per engine: wall, model calls, prompt and completion tokens, completion tokens
per second of wall; the wall ratio; and how many replies are byte-identical between the
engines (lanes change llama.cpp's arithmetic, so they need not be). With `--repeat` the
lanes run is done twice and must give the same bytes (its schedule is fixed by the work).

Usage: python benchmarks/lanes_throughput.py [--configurations Few-Shot_Nodes+Paths,Zero-Shot_Full]
           [--limit 8] [--lanes 4] [--threads N] [--max-tokens 256] [--repeat] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from t2c_lib.runs.runlog import read_jsonl
from t2c_lib.study.params import params_from_dict


@dataclass
class EngineRun:
    """What one engine did on the benchmark's cells."""

    name: str
    wall_s: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replies: dict[str, str] = field(default_factory=dict)

    @property
    def completion_tokens_per_s(self) -> float:
        return self.completion_tokens / self.wall_s if self.wall_s else 0.0


def run_cell(engine: EngineRun, raw: dict, configuration: str, workers: int, root: Path) -> None:
    """One feedback cell through `infer` (cache off), its attempts added to `engine`."""
    from t2c_lib.study.steps import infer

    prompt_type, schema_label = configuration.split("_", 1)
    params = params_from_dict({**raw, "workers": workers}, source="benchmark")
    schema_format = {"Full": "full_schema", "Nodes+Paths": "nodes_paths", "Only-Paths": "only_paths"}[schema_label]
    t0 = time.perf_counter()
    report = infer(params, prompt_type, schema_format, "feedback", cache_mode="off", progress=False, results_dir=root)
    engine.wall_s += time.perf_counter() - t0
    for attempt in read_jsonl(report.directory / "attempts.jsonl"):
        engine.calls += 1
        engine.prompt_tokens += int(attempt.get("prompt_tokens") or 0)
        engine.completion_tokens += int(attempt.get("completion_tokens") or 0)
        engine.replies[f"{configuration}/{attempt['question_id']}/{attempt['iteration']}"] = attempt["raw_response"]


def identical(a: EngineRun, b: EngineRun) -> tuple[int, int]:
    """Replies present in both runs and byte-identical, of those in `a`."""
    return sum(b.replies.get(k) == v for k, v in a.replies.items()), len(a.replies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configurations", default="Few-Shot_Nodes+Paths,Zero-Shot_Full")
    parser.add_argument("--limit", type=int, default=8, help="questions per configuration (stratified, sample_seed 13)")
    parser.add_argument("--lanes", type=int, default=4)
    parser.add_argument("--model", default="local")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--repeat", action="store_true", help="run the lanes engine twice and compare the bytes")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    raw = {
        "run_id": "lanes-benchmark",
        "dataset": "kurikulum",
        "store": "ladybug",
        "model": args.model,
        "prompt_types": ["Zero-Shot", "Few-Shot", "CoT"],
        "schema_formats": ["full_schema", "nodes_paths", "only_paths"],
        "strategies": ["feedback"],
        "max_iterations": 3,
        "limit": args.limit,
        "sample_seed": 13,
        "max_tokens": args.max_tokens,
    }
    single, lanes, again = EngineRun("one at a time"), EngineRun(f"{args.lanes} lanes"), EngineRun("lanes, again")
    with tempfile.TemporaryDirectory() as tmp:
        for configuration in args.configurations.split(","):
            run_cell(single, raw, configuration, 1, Path(tmp) / "single")
            run_cell(lanes, raw, configuration, args.lanes, Path(tmp) / "lanes")
            if args.repeat:
                run_cell(again, raw, configuration, args.lanes, Path(tmp) / "again")
            print(f"{configuration}: single {single.wall_s:.0f} s, lanes {lanes.wall_s:.0f} s so far", flush=True)
    same, total = identical(single, lanes)
    for run in (single, lanes, *([again] if args.repeat else [])):
        print(
            f"{run.name:>14}: wall {run.wall_s:7.1f} s, {run.calls} calls, {run.prompt_tokens} prompt + "
            f"{run.completion_tokens} completion tokens, {run.completion_tokens_per_s:.1f} completion tokens/s"
        )
    print(f"wall ratio (one at a time / lanes): {single.wall_s / lanes.wall_s:.2f}x")
    print(f"replies identical between the engines: {same}/{total}")
    result = {
        "configurations": args.configurations,
        "limit": args.limit,
        "lanes": args.lanes,
        "ratio": single.wall_s / lanes.wall_s,
        "identical": [same, total],
        "runs": [
            {k: v for k, v in asdict(r).items() if k != "replies"}
            for r in (single, lanes, *([again] if args.repeat else []))
        ],
    }
    if args.repeat:
        same_again, total_again = identical(lanes, again)
        result["lanes_rerun_identical"] = [same_again, total_again]
        print(f"lanes rerun byte-identical: {same_again}/{total_again}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
