"""Content-addressed response cache (SQLite, WAL) and the `CachedModel` wrapper.

A request is keyed by a sha256 over model id (plus the model's fingerprint), messages,
temperature, max_tokens, stop and seed. A packaged model's fingerprint names the llama.cpp
build that runs it (`llm.build`: llama-cpp-python version and instruction-set features), so
a cache filled by one build is never served to another; rows of another build simply miss. The cache stores the text, token usage and the
latency of the original call. Many threads and processes may read and write one file:
each thread has its own connection, a busy timeout waits out other writers, and every
write is one short `INSERT OR IGNORE` / `INSERT OR REPLACE` transaction.

`T2C_RESPONSE_CACHE` names another cache file (`make all FRESH=1` uses a private one, so a
replication asks the model again and no earlier reply is served). `rows()` and `put_rows()` are
what a published run's replies are cut from and seeded back with (`publish.published`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from t2c_lib.files.outputs import decode_json
from t2c_lib.llm.base import ChatModel, Completion, Message, ModelWrapper, Usage, seed_kwargs
from t2c_lib.llm.paths import cache_dir

CACHE_FILENAME = "llm_cache.sqlite"
KEY_VERSION = 1
BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    request TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


class CacheMode(str, Enum):
    """USE reads and writes (default); REFRESH always calls and overwrites; OFF bypasses the cache."""

    USE = "use"
    REFRESH = "refresh"
    OFF = "off"

    @classmethod
    def from_flags(cls, no_cache: bool = False, refresh: bool = False) -> CacheMode:
        """Map the CLI's `--no-cache` / `--refresh` onto a mode (`--no-cache` wins)."""
        if no_cache:
            return cls.OFF
        return cls.REFRESH if refresh else cls.USE


CACHE_ENV = "T2C_RESPONSE_CACHE"


def default_cache_path() -> Path:
    """`T2C_RESPONSE_CACHE` when set, else <project>/.cache/llm_cache.sqlite."""
    env = os.environ.get(CACHE_ENV, "").strip()
    return Path(env) if env else cache_dir() / CACHE_FILENAME


def request_payload(
    model_id: str,
    messages: Sequence[Message],
    temperature: float,
    max_tokens: int,
    stop: Sequence[str] | None,
    seed: int | None,
    fingerprint: str = "",
) -> dict:
    """The canonical request a cache key is computed from."""
    return {
        "v": KEY_VERSION,
        "model": model_id,
        "fingerprint": fingerprint,
        "messages": [[m.role, m.content] for m in messages],
        "temperature": float(temperature),
        "max_tokens": int(max_tokens),
        "stop": list(stop or []),
        "seed": seed,
    }


def model_request(
    model: ChatModel,
    messages: Sequence[Message],
    temperature: float,
    max_tokens: int,
    stop: Sequence[str] | None,
    seed: int | None,
) -> dict:
    """The request payload of one call to `model`: its id, fingerprint and, unless `seed` is given, its own seed.

    `CachedModel` keys its rows with it, and `llm.call_log` records the same key for a call seen from outside
    the cache (every layer of a stack says the inner model's id, seed and fingerprint, `ModelWrapper`).
    """
    own_seed = getattr(model, "seed", None)
    return request_payload(
        model.model_id,
        messages,
        temperature,
        max_tokens,
        stop,
        own_seed if seed is None else seed,
        getattr(model, "fingerprint", ""),
    )


def cache_key(payload: dict) -> str:
    """sha256 of the canonical JSON of a request payload."""
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheRow:
    """One stored completion with the request its key was computed from."""

    key: str
    model: str
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    request: dict


@dataclass(frozen=True)
class CacheStats:
    """How many rows a cache holds."""

    entries: int
    models: dict[str, int]


class ResponseCache:
    """A SQLite file of completions, safe for concurrent threads and processes."""

    def __init__(self, path: str | Path | None = None, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._init_db()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (a forked child opens its own)."""
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = self._connect()
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _init_db(self) -> None:
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                conn = self._conn()
                # Switching to WAL needs a moment of exclusive access; retry if another process holds it.
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                conn.execute(_SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise sqlite3.OperationalError(f"response cache {self.path} stayed locked: {exc}") from exc
                time.sleep(0.05)
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(f"response cache {self.path}: could not enable WAL (got {mode})")

    def get(self, key: str) -> Completion | None:
        """The cached completion for `key`, marked `cached=True`, or None."""
        row = (
            self._conn()
            .execute(
                "SELECT model, text, prompt_tokens, completion_tokens, latency_s FROM responses WHERE key = ?",
                (key,),
            )
            .fetchone()
        )
        if row is None:
            return None
        model, text, prompt_tokens, completion_tokens, latency_s = row
        return Completion(
            text=text,
            usage=Usage(prompt_tokens, completion_tokens),
            latency_s=latency_s,
            model=model,
            cached=True,
        )

    def put(self, key: str, completion: Completion, request: dict | None = None, replace: bool = False) -> None:
        """Store a completion; keeps an existing row unless `replace`."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        self._conn().execute(
            f"{verb} INTO responses (key, model, text, prompt_tokens, completion_tokens, latency_s, request, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                completion.model,
                completion.text,
                completion.usage.prompt_tokens,
                completion.usage.completion_tokens,
                completion.latency_s,
                json.dumps(request or {}, sort_keys=True, ensure_ascii=False),
                time.time(),
            ),
        )

    def rows(self, model: str | None = None) -> Iterator[CacheRow]:
        """Every row (of one model id when given, read from the stored request), in key order."""
        cursor = self._conn().execute(
            "SELECT key, model, text, prompt_tokens, completion_tokens, latency_s, request FROM responses ORDER BY key"
        )
        for key, stored_model, text, prompt_tokens, completion_tokens, latency_s, request in cursor:
            try:
                payload = decode_json(request)
            except ValueError:
                payload = {}
            if model is not None and (not isinstance(payload, dict) or payload.get("model") != model):
                continue
            yield CacheRow(key, stored_model, text, prompt_tokens, completion_tokens, latency_s, payload)

    def put_rows(self, rows: Iterable[CacheRow], replace: bool = False) -> None:
        """Store many rows in one transaction: all of them or, on any error, none."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                f"{verb} INTO responses (key, model, text, prompt_tokens, completion_tokens, latency_s, request, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        r.key,
                        r.model,
                        r.text,
                        r.prompt_tokens,
                        r.completion_tokens,
                        r.latency_s,
                        json.dumps(r.request, sort_keys=True, ensure_ascii=False),
                        time.time(),
                    )
                    for r in rows
                ],
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def texts(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored text of each of `keys` that the cache holds."""
        conn, found = self._conn(), {}
        for key in keys:
            row = conn.execute("SELECT text FROM responses WHERE key = ?", (key,)).fetchone()
            if row is not None:
                found[key] = row[0]
        return found

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def stats(self) -> CacheStats:
        rows = self._conn().execute("SELECT model, COUNT(*) FROM responses GROUP BY model ORDER BY model").fetchall()
        return CacheStats(sum(n for _, n in rows), {m: n for m, n in rows})

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class CachedModel(ModelWrapper):
    """A `ChatModel` that answers from the cache when it can and records what the model says.

    The inner model's `seed` and `fingerprint` (both part of every cache key), `packaged` and
    `lane_group` come from `ModelWrapper`.
    """

    def __init__(
        self,
        model: ChatModel,
        cache: ResponseCache | None = None,
        mode: CacheMode | str = CacheMode.USE,
    ) -> None:
        super().__init__(model)
        self.mode = mode if isinstance(mode, CacheMode) else CacheMode(mode)
        self.cache = None if self.mode is CacheMode.OFF else (cache if cache is not None else ResponseCache())
        self.hits = 0
        self.misses = 0
        self._count_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CachedModel({self.model!r}, mode={self.mode.value})"

    def complete(
        self,
        messages: Sequence[Message],
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Serve from the cache (mode USE), else call the model and store its answer.

        `seed` overrides the model's sampling seed for this call (the `vote` strategy's
        samples); it is passed on only when given, so models without the argument still work.
        """
        extra = seed_kwargs(seed)
        if self.cache is None:
            return self.model.complete(messages, temperature=temperature, max_tokens=max_tokens, stop=stop, **extra)
        payload = model_request(self, messages, temperature, max_tokens, stop, seed)
        key = cache_key(payload)
        if self.mode is CacheMode.USE:
            hit = self.cache.get(key)
            if hit is not None:
                with self._count_lock:
                    self.hits += 1
                return hit
        with self._count_lock:
            self.misses += 1
        completion = self.model.complete(messages, temperature=temperature, max_tokens=max_tokens, stop=stop, **extra)
        self.cache.put(key, completion, payload, replace=self.mode is CacheMode.REFRESH)
        return completion
