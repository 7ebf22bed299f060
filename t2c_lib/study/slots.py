"""A run's shared budget of requests in flight at the endpoint, for cells that run at the same time.

`t2c run` against an endpoint runs several cells at once (`t2c_lib.study.grid`); `workers`
still bounds what the endpoint sees: at most that many requests of the whole run are in
flight at any moment, whichever cells and questions they come from (`RequestSlots`, taken by
`SlotModel` around every real model call, so answers from the response cache take none).
Validation, prompts and feedback run outside the slots, so the endpoint stays busy while
the questions between two calls are checked. Slots are handed out in arrival order.

Each cell counts its own unfinished questions (`CellSlots`), so the grid sees when the open
cells run short of questions and opens the next one. When one cell stops the run (a bad
configuration or an outage) the slots close: no request and no question starts after that
(`GridStopped`), so nothing is recorded for them and the resumed run asks them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from t2c_lib.llm.base import ChatModel, Completion, LLMUnavailableError, ModelWrapper


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


class SlotModel(ModelWrapper):
    """Wraps a ChatModel so every real call holds one of the run's `RequestSlots` while it is answered."""

    def __init__(self, model: ChatModel, slots: RequestSlots) -> None:
        super().__init__(model)
        self.slots = slots

    def complete(self, *args: Any, **kwargs: Any) -> Completion:
        with self.slots.hold():
            return self.model.complete(*args, **kwargs)
