"""The layers of a model stack: a backend, its pacing, the response cache, the stop on outage.

`llm.factory.build_model(spec, ...)` builds the stack in one place, for the study (`study.steps`), `t2c ask`
(`llm.factory.make_cached_model`) and chat (`chat.engine`); from the inside out it is

1. the backend (`llm.factory.make_model`): the packaged model (`lanes` of it decoded together when asked,
   `n_ctx` for chat's short prompts) or an endpoint's, held to a `grammar` when one is given;
2. `PacedModel`, one wrapper for an endpoint's two budgets (absent when neither is set):
   - *rate*: at most `requests_per_minute` calls a minute, a budget per endpoint model shared by every
     thread and process on this machine (`shared_limiter`: `make all` runs its notebooks as separate
     processes, and each paces its calls through the same small file under the cache directory);
   - *in flight*: a run's `RequestSlots`, at most `workers` requests at the endpoint whichever cells they
     come from (`t2c run` against an endpoint runs several cells at once, `study.grid`). Validation,
     prompts and feedback run outside the slots, so the endpoint stays busy while the questions between
     two calls are checked; slots are handed out in arrival order. Each cell counts its own unfinished
     questions (`CellSlots`), so the grid sees when the open cells run short of questions and opens the
     next one. When one cell stops the run (a bad configuration or an outage) the slots close: no request
     and no question starts after that (`GridStopped`), nothing is recorded for them and the resumed run
     asks them;
3. `CachedModel` (`llm.cache`): an answer from the cache takes neither budget;
4. `StopOnOutage`, which a caller wraps around the stack itself (`chat.evaluate`): an outage or a
   configuration error becomes the caller's own error (a conversation evaluation stops instead of scoring the turn).

Every layer declares `complete(messages, temperature, max_tokens, stop, seed)` and says what a caller may
need of the model behind it (`model_id`, `seed`, `fingerprint`, `lane_group`) itself, one layer at a time.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from t2c_lib.llm.base import (
    ChatModel,
    Completion,
    LLMConfigError,
    LLMError,
    LLMUnavailableError,
    ModelWrapper,
)
from t2c_lib.llm.paths import cache_dir

log = logging.getLogger(__name__)

# --- the rate: calls a minute, per endpoint model and machine -------------------------------------

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


# --- in flight: a run's slots at the endpoint ---------------------------------------------------


class GridStopped(LLMUnavailableError):
    """Another cell of the grid stopped the run; this question was not asked (it stops its cell in turn)."""


class RequestSlots:
    """At most `size` requests in flight across the cells sharing this object."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"slots must be at least 1, got {size}")
        self.size = size
        self.held = 0
        self._changed = threading.Condition()
        self._why = ""

    def close(self, why: str) -> None:
        """Nothing starts after this; `why` is the stop's message. Requests waiting for a slot stop now."""
        with self._changed:
            self._why = self._why or why or "the run stopped"
            self._changed.notify_all()

    @property
    def closed(self) -> bool:
        return bool(self._why)

    def check(self) -> None:
        """Raise `GridStopped` once the slots are closed."""
        if self._why:
            raise GridStopped(f"not asked, the run stopped: {self._why}")

    @contextmanager
    def hold(self) -> Iterator[None]:
        """One request's slot, waited for in arrival order; raises `GridStopped` once the slots are closed."""
        with self._changed:
            while self.held >= self.size and not self._why:
                self._changed.wait()
            self.check()
            self.held += 1
        try:
            yield
        finally:
            with self._changed:
                self.held -= 1
                self._changed.notify()

    def cell(self) -> CellSlots:
        """A view for one cell: its own count of unfinished questions, and the shared stop."""
        return CellSlots(self)


class CellSlots:
    """One cell's questions under way (`demand`), whether it began asking, and the run's stop.

    The runner holds it around each question: it waits for nothing (the requests wait for
    their slots), it counts, and it refuses to start a question once the run stopped.
    """

    def __init__(self, shared: RequestSlots) -> None:
        self.shared = shared
        self.demand = 0
        self.asking = threading.Event()
        self._lock = threading.Lock()

    @contextmanager
    def hold(self) -> Iterator[None]:
        self.asking.set()
        self.shared.check()
        with self._lock:
            self.demand += 1
        try:
            yield
        finally:
            with self._lock:
                self.demand -= 1


# --- the wrappers and the builder ---------------------------------------------------------------


class PacedModel(ModelWrapper):
    """An endpoint's budgets around every real call: one of the run's `slots` held while it is answered, and a slot
    of the rate `limiter` taken inside it.

    A model that sends its own retries (an endpoint's: a 429 answered later) takes a rate slot for each
    attempt through its `pace` hook, since the server counts every request it sees.
    """

    def __init__(self, model: ChatModel, limiter: RateLimiter | None = None, slots: RequestSlots | None = None) -> None:
        super().__init__(model)
        self.limiter = limiter
        self.slots = slots
        self._paces_itself = limiter is not None and hasattr(model, "pace")
        if limiter is not None and hasattr(model, "pace"):  # self._paces_itself, as mypy can follow it
            model.pace = limiter.acquire

    def _around(self, call: Callable[[], Completion]) -> Completion:
        if self.slots is None:
            return self._paced(call)
        with self.slots.hold():
            return self._paced(call)

    def _paced(self, call: Callable[[], Completion]) -> Completion:
        if self.limiter is not None and not self._paces_itself:
            self.limiter.acquire()
        return call()


class StopOnOutage(ModelWrapper):
    """Turns an outage or a configuration error (`LLMUnavailableError`, `LLMConfigError`) into `on_outage(exc)`.

    Chat's parts catch `LLMError` to keep an interactive session going; a conversation evaluation gives an
    error that is not one, so it passes through them and stops the evaluation instead of scoring the turn.
    """

    def __init__(self, model: ChatModel, on_outage: Callable[[LLMError], BaseException]) -> None:
        super().__init__(model)
        self.on_outage = on_outage

    def _around(self, call: Callable[[], Completion]) -> Completion:
        try:
            return call()
        except (LLMConfigError, LLMUnavailableError) as exc:
            raise self.on_outage(exc) from exc
