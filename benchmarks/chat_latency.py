"""How long a chat turn takes, from a conversation run's own records (no model call, nothing replayed).

Reads `sessions/*/analytics.jsonl` (seconds per step of every turn) and `model_calls.jsonl` (which requests the
model answered and which came from the response cache) of a run made by `make conversations`, and prints, per kind
of turn, how many turns every model request of which the model itself answered, and their median and slowest wall
seconds (route + generate + validate + execute + answer) and model requests. Turns with a cached request are left
out: their seconds are not the model's. The numbers are the run machine's, on the day the run was played.

Usage: python benchmarks/chat_latency.py results/published/conversations [--json rows.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from t2c_lib.files.outputs import read_jsonl_records
from t2c_lib.llm.call_log import read_calls

KINDS = ("new question", "follow-up by token edit", "follow-up written by the model", "no query")


def turn_kind(record: dict) -> str:
    """What a turn was, by what the session did: a new query, an edit of the previous one, or no query at all."""
    if not record.get("query"):
        return "no query"
    if record.get("intent") != "REQUEST_MODIFICATION":
        return "new question"
    edited = not _durations(record).get("generate")
    return "follow-up by token edit" if edited else "follow-up written by the model"


def _durations(record: dict) -> dict[str, float]:
    steps = record.get("durations")
    if not isinstance(steps, dict):
        return {}
    return {k: float(v) for k, v in steps.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def _records(path: Path) -> list[dict]:
    return [r for r in read_jsonl_records(path) if isinstance(r, dict)]


def rows(run_dir: Path) -> list[dict]:
    """One row per kind of turn: turns counted, median and slowest wall seconds, median model requests."""
    cached: dict[tuple[object, object], bool] = defaultdict(bool)
    for call in read_calls(run_dir / "model_calls.jsonl"):  # checked: a bad log is one error naming its line
        cached[(call.dialogue, call.turn)] |= call.cached
    seconds: dict[str, list[float]] = defaultdict(list)
    requests: dict[str, list[int]] = defaultdict(list)
    left_out = 0
    for path in sorted(run_dir.glob("sessions/*/analytics.jsonl")):
        for record in _records(path):
            if cached[(record.get("session_id"), record.get("turn"))]:
                left_out += 1
                continue
            kind = turn_kind(record)
            seconds[kind].append(sum(_durations(record).values()))
            calls = record.get("llm_calls")
            requests[kind].append(calls if isinstance(calls, int) else 0)
    out: list[dict] = [
        {
            "kind": kind,
            "turns": len(seconds[kind]),
            "median_s": round(statistics.median(seconds[kind]), 1),
            "slowest_s": round(max(seconds[kind]), 1),
            "median_model_requests": statistics.median(requests[kind]),
        }
        for kind in KINDS
        if seconds[kind]
    ]
    out.append({"kind": "left out: a request came from the cache", "turns": left_out})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    if not (args.run_dir / "model_calls.jsonl").is_file():
        raise SystemExit(f"{args.run_dir}: no model_calls.jsonl; give a conversation run's folder")
    found = rows(args.run_dir)
    for row in found:
        print(json.dumps(row, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(found, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
