"""A shared request budget for remote endpoints: at most N model calls a minute, across threads and processes.

`make all` runs its notebooks as separate processes; each one paces its calls through the same
small file (one per endpoint model, under the cache directory), so `requests_per_minute` is the
budget of everything that talks to that endpoint from this machine, not of each notebook.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from t2c_lib.llm.base import ChatModel, Completion, ModelWrapper
from t2c_lib.llm.paths import cache_dir

log = logging.getLogger(__name__)

MARGIN = 0.02
"""Calls are spaced this much wider than 60 s / per_minute. Exact spacing puts the (N+1)-th call exactly
60 s after the first; a sleep that overshoots for one call and not the next, or a request that takes
a few ms longer on its way, then lets the server count N+1 in one minute. 2% leaves 1.2 s of slack."""

STALE_S = 3600.0
"""A next slot further ahead than this was written under another clock (the wall clock was set back):
ignored, the budget starts again from now."""

RATE_DIR_NAME = "ratelimit"


class RateLimiter:
    """At most `per_minute` acquisitions in any 60 s window, shared by all worker threads (and all cells of a run).

    With `shared_file`, every process that names the same file shares the budget: the next free
    slot lives in that file, read and advanced under an exclusive `flock`.
    """

    def __init__(self, per_minute: float | None, shared_file: Path | None = None) -> None:
        self.interval = 60.0 / per_minute * (1 + MARGIN) if per_minute else 0.0
        self.shared_file = shared_file
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Wait for the next slot; returns the seconds waited."""
        if not self.interval:
            return 0.0
        with self._lock:
            wait = self._take_shared_slot() if self.shared_file else self._take_slot()
        if wait > 0:
            time.sleep(wait)
            return wait
        return 0.0

    def _take_slot(self) -> float:
        now = time.monotonic()
        wait = self._next - now
        self._next = max(now, self._next) + self.interval
        return wait

    def _take_shared_slot(self) -> float:
        assert self.shared_file is not None
        self.shared_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.shared_file, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            now = time.time()  # the wall clock: the one clock every process on the machine reads alike
            try:
                slot = float(raw) if raw else 0.0
            except ValueError:
                slot = 0.0  # a damaged file costs one unpaced call, never a crash
            if slot - now > STALE_S:
                log.warning("rate limiter: ignoring a next slot %.0f s ahead in %s", slot - now, self.shared_file)
                slot = now
            taken = f"{max(now, slot) + self.interval:.6f}".encode("ascii")
            os.ftruncate(fd, 0)
            os.pwrite(fd, taken, 0)
            return slot - now
        finally:
            os.close(fd)  # closing releases the lock


_SHARED: dict[tuple[str, float], RateLimiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_limiter(model_id: str, per_minute: float, directory: Path | None = None) -> RateLimiter:
    """The limiter for `model_id` at `per_minute`: one object per process, one budget per machine (file-backed)."""
    key = (model_id, float(per_minute))
    with _SHARED_LOCK:
        limiter = _SHARED.get(key)
        if limiter is None:
            digest = hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:16]
            path = (directory or cache_dir() / RATE_DIR_NAME) / f"{digest}.next"
            limiter = _SHARED[key] = RateLimiter(per_minute, shared_file=path)
        return limiter


class RateLimitedModel(ModelWrapper):
    """Wraps a ChatModel so every real request first takes a slot of the rate limiter.

    A model that sends its own retries (an endpoint's: a 429 answered later) takes a slot for each
    attempt through its `pace` hook, since the server counts every request it sees.
    """

    def __init__(self, model: ChatModel, limiter: RateLimiter) -> None:
        super().__init__(model)
        self.limiter = limiter
        self._paces_itself = hasattr(model, "pace")
        if self._paces_itself:
            model.pace = limiter.acquire  # type: ignore[attr-defined]

    def complete(self, *args: Any, **kwargs: Any) -> Completion:
        if not self._paces_itself:
            self.limiter.acquire()
        return self.model.complete(*args, **kwargs)
