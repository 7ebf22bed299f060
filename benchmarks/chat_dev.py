"""Chat designs side by side on the development dialogues (`data/<dataset>/dev/conversations.yaml`).

Each design is a name and `ChatSettings` fields as JSON; every design plays the same dialogues through
`run_conversations(split="dev")` and prints the numbers a design is chosen by: follow-ups right (after a right
and a wrong previous turn), new questions right, dialogues right at every turn, intent accuracy. Replies go
through the response cache (`T2C_RESPONSE_CACHE`), so designs that share requests pay for them once. This is
how issue 53's candidates were measured (docs/chat.md); the test dialogues are never played here.

Usage: python benchmarks/chat_dev.py DATASET NAME='{"schema_format": "retrieved"}' [NAME=JSON ...]
       [--out DIR] [--json rows.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from t2c_lib.chat.evaluate import run_conversations
from t2c_lib.chat.settings import ChatSettings

KEYS = (
    "follow_up_turns",
    "follow_up_success",
    "follow_up_right_by_previous",
    "new_question_pass_at_1",
    "dialogues_right_at_every_turn",
    "intent_accuracy",
    "follow_ups_made_by_edit",
    "follow_up_right_by_kind",
)


def design(text: str) -> tuple[str, dict[str, Any]]:
    """`NAME=JSON` (or a bare NAME: today's defaults) as a name and its ChatSettings fields."""
    name, _, options = text.partition("=")
    fields = json.loads(options) if options else {}
    if not name or not isinstance(fields, dict):
        raise SystemExit(f"a design is NAME or NAME=JSON object of ChatSettings fields, got {text!r}")
    return name, fields


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("designs", nargs="+", help="NAME or NAME=JSON (ChatSettings fields)")
    parser.add_argument("--out", type=Path, default=Path("results/chat_dev"), help="one folder per design under it")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    rows = []
    for name, fields in map(design, args.designs):
        started = time.perf_counter()
        report = run_conversations(ChatSettings(dataset=args.dataset, **fields), args.out / name, split="dev")
        summary = report.summary()
        row = {"design": name, "settings": fields, "wall_s": round(time.perf_counter() - started, 1)}
        row.update({key: summary.get(key) for key in KEYS})
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
