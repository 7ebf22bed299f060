"""A grid's shared budget of questions in flight, for cells that run at the same time.

`t2c run` against an endpoint runs several cells at once (`t2c_lib.study.grid`); `workers`
still means what it says: at most that many questions of the whole grid are being solved at
any moment, whichever cells they belong to. A question takes a slot for as long as it is
being solved; slots are handed out first come, first served. Each cell holds a `CellSlots`
view that counts its own questions waiting or in flight, so the grid can see when the open
cells run out of questions and open the next one. When one cell stops the run (a bad
configuration or an outage) the slots close: questions not yet started are not started
(`GridStopped`), so nothing is recorded for them and the resumed run asks them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from t2c_lib.llm.base import LLMUnavailableError


class GridStopped(LLMUnavailableError):
    """Another cell of the grid stopped the run; this question was not asked (it stops its cell in turn)."""


class QuestionSlots:
    """At most `size` questions in flight across the cells sharing this object."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"slots must be at least 1, got {size}")
        self.size = size
        self.held = 0
        self._changed = threading.Condition()
        self._why = ""

    def close(self, why: str) -> None:
        """No question starts after this; `why` is the stop's message. Questions waiting for a slot stop now."""
        with self._changed:
            self._why = self._why or why or "the run stopped"
            self._changed.notify_all()

    @property
    def closed(self) -> bool:
        return bool(self._why)

    @contextmanager
    def hold(self) -> Iterator[None]:
        """One question's slot, waited for in arrival order; raises `GridStopped` once the slots are closed."""
        with self._changed:
            while self.held >= self.size and not self._why:
                self._changed.wait()
            if self._why:
                raise GridStopped(f"not asked, the run stopped: {self._why}")
            self.held += 1
        try:
            yield
        finally:
            with self._changed:
                self.held -= 1
                self._changed.notify()

    def cell(self) -> CellSlots:
        """A view for one cell: the same slots, with that cell's own counts."""
        return CellSlots(self)


class CellSlots:
    """One cell's use of the shared slots: how many of its questions wait or are in flight, and whether it began."""

    def __init__(self, shared: QuestionSlots) -> None:
        self.shared = shared
        self.demand = 0
        self.asking = threading.Event()
        self._lock = threading.Lock()

    @contextmanager
    def hold(self) -> Iterator[None]:
        self.asking.set()
        with self._lock:
            self.demand += 1
        try:
            with self.shared.hold():
                yield
        finally:
            with self._lock:
                self.demand -= 1
