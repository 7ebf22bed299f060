"""The persistent log of one cell: append-only JSONL files that survive a kill, and atomic JSON.

Each attempt is appended to `attempts.jsonl` as it happens (flush + fsync), each finished
question to `questions.jsonl`. A torn last line (a writer killed mid-line) is moved to
`<file>.torn` before anything is appended. An outage that an older t2c recorded as a failed
answer is set aside to `questions.outage.jsonl` on resume and asked again.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from t2c_lib.errors import IncompatibleResults
from t2c_lib.files.outputs import decode_json, jsonl_line, read_jsonl_records, to_json
from t2c_lib.records import Attempt
from t2c_lib.runs.layout import ATTEMPTS_FILE, OUTAGES_FILE, QUESTIONS_FILE


class AttemptLog:
    """Append-only JSONL files of one cell, safe against kills: every line is fsync'ed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.attempts_path = directory / ATTEMPTS_FILE
        self.questions_path = directory / QUESTIONS_FILE
        self._lock = threading.Lock()
        self.torn = {path.name: set_aside_torn_tail(path) for path in (self.attempts_path, self.questions_path)}

    def finished_ids(self) -> set[str]:
        return {rec["question_id"] for rec in read_jsonl(self.questions_path)}

    def set_aside_outages(self) -> int:
        """Move question records that are an outage, not an answer, to `questions.outage.jsonl`; return how many.

        Older versions recorded a question whose model call failed after every retry (refused
        connection, timeout, 5xx) as a finished FAILED answer; set aside, it is asked again.
        """
        records = read_jsonl(self.questions_path)
        outages = [r for r in records if is_outage_record(r)]
        if outages:
            with self._lock, (self.directory / OUTAGES_FILE).open("a", encoding="utf-8") as handle:
                for record in outages:
                    handle.write(_json_line(record))
                handle.flush()
                os.fsync(handle.fileno())
            _rewrite(self.questions_path, [r for r in records if not is_outage_record(r)])
        return len(outages)

    def drop_unfinished_attempts(self) -> int:
        """Remove attempts of questions that never finished (a killed run); return how many."""
        finished = self.finished_ids()
        attempts = read_jsonl(self.attempts_path)
        keep = [a for a in attempts if a["question_id"] in finished]
        if len(keep) != len(attempts):
            _rewrite(self.attempts_path, keep)
        return len(attempts) - len(keep)

    def append_attempt(self, attempt: Attempt) -> None:
        self._append(self.attempts_path, attempt.to_dict())

    def append_question(self, record: dict[str, Any]) -> None:
        self._append(self.questions_path, record)

    def _append(self, path: Path, record: dict[str, Any]) -> None:
        """Write the line whole under the lock; fsync after it (before returning), so threads of a cell
        do not queue behind each other's disk flushes and concurrent ones share a journal commit."""
        line = _json_line(record)
        with path.open("a", encoding="utf-8") as handle:
            with self._lock:
                handle.write(line)
                handle.flush()
            os.fsync(handle.fileno())


def _rewrite(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace a JSONL file by `records`, atomically (temporary file, fsync, rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(_json_line(record))
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


_OUTAGE_ERROR = re.compile(r"^LLM(?:Unavailable)?Error: model .* failed after \d+ attempt\(s\): ")
"""The error text of a model call that failed after every retry (what older runs recorded as an answer)."""


def is_outage_record(record: dict[str, Any]) -> bool:
    """A question record whose 'answer' is an endpoint outage (no reply after the retries), not a model answer."""
    return record.get("status") == "FAILED" and bool(_OUTAGE_ERROR.match(str(record.get("error") or "")))


TORN_SUFFIX = ".torn"


def set_aside_torn_tail(path: Path) -> int:
    """Move an unterminated, unparsable last line (a writer killed mid-line) to `<path>.torn`; return its bytes.

    Without this the next append would glue its record onto the torn bytes and both would be lost.
    A complete record that only lacks its newline gets the newline instead.
    """
    if not path.is_file():
        return 0
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return 0
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    try:
        complete = isinstance(decode_json(tail.decode("utf-8")), dict)
    except (UnicodeDecodeError, json.JSONDecodeError):
        complete = False
    with path.open("r+b") as handle:
        if complete:
            handle.seek(0, os.SEEK_END)
            handle.write(b"\n")
        else:
            with path.with_name(path.name + TORN_SUFFIX).open("ab") as torn:
                torn.write(tail + b"\n")
                torn.flush()
                os.fsync(torn.fileno())
            handle.truncate(cut)
        handle.flush()
        os.fsync(handle.fileno())
    return 0 if complete else len(tail)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Records of a JSONL file; a torn last line (killed mid-write) is ignored."""
    return read_jsonl_records(path)  # split on `\n` only: a query may hold U+2028


def read_json(path: Path) -> Any:
    """A JSON file a step wrote (manifest, summary); a damaged one is a one-line error naming it."""
    try:
        return decode_json(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IncompatibleResults(
            f"{path}: not readable JSON ({exc}); write it again with the step that made it"
        ) from exc


def _json_line(record: dict[str, Any]) -> str:
    return jsonl_line(record)


def write_json(path: Path, data: Any) -> None:
    """Write JSON with sorted keys and a trailing newline, atomically (same data, same bytes; NaN as null)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(to_json(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
