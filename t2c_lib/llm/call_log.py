"""The model calls of a run that records no prompts: each call's response-cache key, in order (`model_calls.jsonl`).

A study cell records every attempt with its prompt hash and raw reply, so the replies it used can be
found in the response cache afterwards (`publish.publish.replies_used`). A conversation evaluation asks
three kinds of model (router, loop, answer templates) and keeps no prompt; it wraps each model in a
`RecordedModel` instead, which writes down the cache key of every call it passes on (the same key
`CachedModel` computes, `cache.model_request`), and whether the reply came from the cache. The log is
what publishing a conversation run takes its replies by, and what `t2c study reproduced` counts the
model calls of a rerun with.

`model_calls.jsonl`, one line per call in the order the calls were made: `dialogue`, `turn`,
`model_id`, `key` (64 hex digits, the response cache's key) and `cached` (`write_calls`). Only `cached`
changes when the same evaluation runs again from a filled cache. The file is read as hostile input
(`read_calls`): a line that is not one well-formed record, or a line or file over the limits, is one
`CallLogError`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from t2c_lib.errors import T2CError
from t2c_lib.files.outputs import decode_json, jsonl_line
from t2c_lib.llm.base import ChatModel, Completion, Message, ModelWrapper
from t2c_lib.llm.cache import cache_key, model_request

CALLS_FILE = "model_calls.jsonl"
MAX_LINE_BYTES = 64 * 1024
"""A record is a few ids and a key; a longer line is not one."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""About half a million calls: far past any conversation evaluation."""
_KEY = re.compile(r"[0-9a-f]{64}")


class CallLogError(T2CError, ValueError):
    """A `model_calls.jsonl` that is not what `CallLog.write` writes."""


@dataclass(frozen=True)
class ModelCall:
    """One model call: where it was made (dialogue, turn), which model, its cache key, whether the cache answered."""

    dialogue: str
    turn: int
    model_id: str
    key: str
    cached: bool


class CallLog:
    """The calls of every model wrapped by `wrap`, in order; `at(dialogue, turn)` says where the next ones are made."""

    def __init__(self) -> None:
        self.calls: list[ModelCall] = []
        self._where: tuple[str, int] = ("", 0)
        self._lock = threading.Lock()

    def at(self, dialogue: str, turn: int) -> None:
        """The dialogue and turn the following calls belong to."""
        self._where = (dialogue, turn)

    def wrap(self, model: ChatModel) -> ChatModel:
        """`model` with its calls recorded here."""
        return RecordedModel(model, self)

    def add(self, model_id: str, key: str, cached: bool) -> None:
        with self._lock:
            self.calls.append(ModelCall(*self._where, model_id, key, cached))


class RecordedModel(ModelWrapper):
    """A model whose every answered call is written into a `CallLog` with its response-cache key."""

    def __init__(self, model: ChatModel, log: CallLog) -> None:
        super().__init__(model)
        self.log = log

    def complete(
        self,
        messages: Sequence[Message],
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        completion = super().complete(messages, temperature, max_tokens, stop, seed)
        key = cache_key(model_request(self, messages, temperature, max_tokens, stop, seed))
        self.log.add(self.model_id, key, bool(completion.cached))
        return completion


def write_calls(path: Path, calls: Sequence[ModelCall]) -> Path:
    """`model_calls.jsonl` at `path` (replaced, not appended): one sorted-key JSON line per call, in order."""
    Path(path).write_text("".join(jsonl_line(asdict(call)) for call in calls), encoding="utf-8")
    return Path(path)


def read_calls(path: Path) -> list[ModelCall]:
    """Every call of a `model_calls.jsonl`, each checked; a bad file is one `CallLogError` naming file and line."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        raise CallLogError(f"{path}: not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise CallLogError(f"{path}: more than {MAX_FILE_BYTES} bytes")
    calls = []
    with path.open("rb") as stream:
        for number, line in enumerate(iter(lambda: stream.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(line) > MAX_LINE_BYTES:
                raise CallLogError(f"{path} line {number}: longer than {MAX_LINE_BYTES} bytes")
            if line.strip():
                calls.append(_parse(line, f"{path} line {number}"))
    return calls


def _parse(line: bytes, where: str) -> ModelCall:
    try:
        record = decode_json(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CallLogError(f"{where}: not a JSON line ({type(exc).__name__})") from None
    if not isinstance(record, dict) or set(record) != {"dialogue", "turn", "model_id", "key", "cached"}:
        raise CallLogError(f"{where}: not a call record (dialogue, turn, model_id, key, cached)")
    kinds = {"dialogue": str, "turn": int, "model_id": str, "key": str, "cached": bool}
    for name, kind in kinds.items():
        value = record[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise CallLogError(f"{where}: field {name!r} is not a {kind.__name__}")
    if not _KEY.fullmatch(record["key"]):
        raise CallLogError(f"{where}: key is not 64 lowercase hex digits")
    return ModelCall(record["dialogue"], record["turn"], record["model_id"], record["key"], record["cached"])
