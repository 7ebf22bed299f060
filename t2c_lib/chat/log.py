"""The interaction log: one JSON line per turn in `results/chat/<session id>/analytics.jsonl`.

Each line is appended, flushed and fsync'ed as the turn ends, so a killed session loses at
most the turn it was in. `TURN_FIELDS` lists what a line holds; `read_log` reads a log back,
skipping a torn last line.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from t2c_lib.files.outputs import jsonl_line, read_jsonl_records

LOG_FILE = "analytics.jsonl"
STEPS = ("route", "generate", "validate", "execute", "answer")
"""The steps of a turn whose durations are logged (seconds)."""


@dataclass
class TurnLog:
    """One turn as logged: who asked what, how it was routed, what it cost, how it ended."""

    session_id: str
    turn: int
    message: str
    intent: str
    intent_source: str
    status: str
    durations: dict[str, float] = field(default_factory=lambda: {step: 0.0 for step in STEPS})
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    labels: list[str] = field(default_factory=list)
    repaired: bool = False
    quality: int | None = None
    error: str | None = None
    query: str = ""
    attempts: int = 0
    rows: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["durations"] = {step: round(float(self.durations.get(step, 0.0)), 6) for step in STEPS}
        return data


TURN_FIELDS = tuple(TurnLog.__dataclass_fields__)


class InteractionLog:
    """Append-only `analytics.jsonl` of one session."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / LOG_FILE

    def append(self, record: TurnLog) -> None:
        """Write one line and make it durable before returning."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = jsonl_line(record.to_dict())
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def read_log(path: Path) -> list[dict[str, Any]]:
    """The records of a log; a torn last line (a kill mid-write) is skipped."""
    return read_jsonl_records(Path(path))  # split on `\n` only: a message may hold U+2028
