"""What a run recorded, without its clock readings, compared across runs; request counts per time window.

Used by `benchmarks/endpoint_workers.py` and `tests/study/test_endpoint_workers.py`: the results of a
run must not depend on how its questions were scheduled (worker count, cells at once, a kill
and a resume), only their timing may.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

RAN_IN = re.compile(r"\bran in \d+(?:\.\d+)? s\b")
"""The execution validator's message quotes the query's time (`ran in 0.006 s, 1 row(s)`)."""


def strip_timing(value: Any) -> Any:
    """A record without its clock readings (keys ending in `_s`, the time in the execution validator's message),
    the part that must not depend on scheduling."""
    if isinstance(value, dict):
        return {k: strip_timing(v) for k, v in value.items() if not k.endswith("_s")}
    if isinstance(value, list):
        return [strip_timing(v) for v in value]
    if isinstance(value, str):
        return RAN_IN.sub("ran in (time) s", value)
    return value


def run_results(run_dir: Path, drop: tuple[str, ...] = ()) -> dict[str, list[Any]]:
    """Every cell's questions and attempts (`<strategy>/<configuration>/*.jsonl`), timing and `drop` keys removed,
    in question order (the line order of a cell run with many workers follows completion)."""
    found: dict[str, list[Any]] = {}
    for path in sorted(run_dir.glob("*/*/*.jsonl")):
        if path.name not in ("questions.jsonl", "attempts.jsonl"):
            continue
        records = [strip_timing(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]
        for record in records:
            for key in drop:
                record.pop(key, None)
        records.sort(key=lambda r: (r["question_id"], r.get("iteration", 0), r.get("kind", "")))
        found[path.relative_to(run_dir).as_posix()] = records
    return found


def differences(a: dict[str, list[Any]], b: dict[str, list[Any]]) -> list[str]:
    """The files that differ between two runs' results (empty: identical)."""
    out = [f"{name}: only in one run" for name in sorted(set(a) ^ set(b))]
    for name in sorted(set(a) & set(b)):
        if a[name] != b[name]:
            pairs = zip(a[name], b[name])
            first = next((i for i, (x, y) in enumerate(pairs) if x != y), min(len(a[name]), len(b[name])))
            out.append(f"{name}: {len(a[name])} vs {len(b[name])} records, first difference at record {first}")
    return out


def max_in_window(times: list[float], window: float = 60.0) -> int:
    """The most of `times` in any half-open window [t, t + window)."""
    ordered = sorted(times)
    best = start = 0
    for end, t in enumerate(ordered):
        while ordered[start] <= t - window:
            start += 1
        best = max(best, end - start + 1)
    return best
