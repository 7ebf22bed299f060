"""A shared request budget for remote endpoints: at most N model calls a minute, across threads."""

from __future__ import annotations

import threading
import time
from typing import Any

MARGIN = 0.02
"""Calls are spaced this much wider than 60 s / per_minute. Exact spacing puts the (N+1)-th call exactly
60 s after the first; a sleep that overshoots for one call and not the next, or a request that takes
a few ms longer on its way, then lets the server count N+1 in one minute. 2% leaves 1.2 s of slack."""


class RateLimiter:
    """At most `per_minute` acquisitions in any 60 s window, shared by all worker threads (and all cells of a run)."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute * (1 + MARGIN) if per_minute else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            wait = self._next - now
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            time.sleep(wait)


class RateLimitedModel:
    """Wraps a ChatModel so every real call first takes a slot of the rate limiter."""

    def __init__(self, model: Any, limiter: RateLimiter) -> None:
        self.model = model
        self.model_id = model.model_id
        self.limiter = limiter

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        self.limiter.acquire()
        return self.model.complete(*args, **kwargs)
