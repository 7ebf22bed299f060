"""Run the cells of a grid: one after another, or, against an endpoint with many workers, several at once.

Why several at once: `workers` requests are in flight at the same time, but a cell has only
its own questions (52 in the thesis grid). Run one after another, every cell ends in a tail
with fewer than `workers` requests in flight, and every cell's setup (the store, its query
process, the schema) and every single-pass cell (answered from the response cache, so
validation only) runs while the endpoint idles. `benchmarks/endpoint_workers.py` measures it.
So when `workers` > 1 and the model is an endpoint's, up to `CELLS_AT_ONCE` cells run at the
same time, sharing one `RequestSlots(workers)` (at most `workers` requests at the endpoint in
the whole run, whichever cells they come from; validation runs beside them) and the endpoint's
rate limiter (`requests_per_minute` is the machine's budget for that endpoint, not each cell's:
`t2c_lib.llm.stack.shared_limiter`). The packaged model keeps
one cell at a time.

Pairing is kept: a cell of another strategy starts only after its `feedback` twin (same
configuration) has finished, as `make` orders them, so the twin's first attempts are in
the response cache (single-pass pairs with feedback question by question and costs no call;
`vote` measures its k from the twin). Each question is solved on its own, so what a cell
records does not depend on the schedule (only the order of lines in its JSONL files, as with
any `workers` > 1). A configuration error or an outage in one cell closes the slots: no
request and no question starts after it, the questions under way stop at their next request,
and the first error is raised; a rerun resumes every cell.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from t2c_lib.llm.registry import is_local
from t2c_lib.llm.stack import CellSlots, GridStopped, RequestSlots
from t2c_lib.runs.layout import Cell
from t2c_lib.study.params import StudyParams
from t2c_lib.study.runner import CellReport

CELLS_AT_ONCE = 8
"""The most cells open at the same time (each holds a store and its query process, about 75 MB)."""


def cells_at_once(params: StudyParams, cells: int) -> int:
    """How many cells run at the same time: 1 for the packaged model or one worker, else up to CELLS_AT_ONCE."""
    if params.workers <= 1 or cells <= 1 or is_local(params.model):
        return 1
    return min(CELLS_AT_ONCE, cells)


def run_grid(
    params: StudyParams,
    cells: Sequence[Cell],
    *,
    cache_mode: str = "use",
    progress: bool = True,
    on_report: Callable[[CellReport], None] | None = None,
    replace_run: bool | None = None,
) -> list[CellReport]:
    """Run `cells` (inference), calling `on_report` as each one finishes; the reports in grid order.

    `replace_run`: a run folder bound to other settings is moved aside (`study.run_record`), not refused."""
    from t2c_lib.study.steps import infer

    report = on_report or (lambda _: None)
    if cells_at_once(params, len(cells)) == 1:
        reports = []
        for cell in cells:
            reports.append(
                infer(
                    params,
                    cell.prompt_type,
                    cell.schema_format,
                    cell.strategy,
                    cache_mode=cache_mode,
                    progress=progress,
                    replace_run=replace_run,
                )
            )
            report(reports[-1])
        return reports
    grid = _GridRun(params, cells, cache_mode, report)
    grid.replace_run = replace_run
    return grid.run()


class _GridRun:
    """The cells of one `run_grid` call running at once, and the rules for opening the next one.

    - a feedback cell (one whose strategy waits for no other) opens when no open feedback cell is still setting up (it has not started
      a question yet) and the open ones have fewer than `2 x workers` questions left: the next
      cell's setup then overlaps the others' last questions;
    - any other cell opens as soon as the cell it waits for (`Cell.twin`, its strategy's
      `waits_for`: feedback for the built-ins) has finished (or at once if that is not part of this run);
    - at most `cells_at_once` cells are open (each holds a store and its query process);
    - the first cell opens alone: its setup builds the store and caches the gold screen (once,
      on a first run) before other cells open the same files.
    """

    POLL_S = 0.1

    def __init__(
        self, params: StudyParams, cells: Sequence[Cell], cache_mode: str, report: Callable[[CellReport], None]
    ) -> None:
        self.params = params
        self.cells = list(cells)
        self.cache_mode = cache_mode
        self.report = report
        self.at_once = cells_at_once(params, len(cells))
        self.slots = RequestSlots(params.workers)
        self.futures: dict[Cell, Future] = {}
        self.views: dict[Cell, CellSlots] = {}
        self.waiting = list(cells)
        self._report_lock = threading.Lock()
        self.replace_run: bool | None = None  # run_grid's: move a run bound to other settings aside

    def run(self) -> list[CellReport]:
        first: BaseException | None = None
        with ThreadPoolExecutor(max_workers=self.at_once, thread_name_prefix="t2c-cell") as pool:
            try:
                while self.waiting or self._open():
                    for cell in self._to_open():
                        self.waiting.remove(cell)
                        self.views[cell] = self.slots.cell()
                        self.futures[cell] = pool.submit(self._one, cell)
                    if self._open():
                        wait(self._open(), timeout=self.POLL_S, return_when=FIRST_COMPLETED)
                    first = self._first_error(first)
                    if first is not None:
                        self.slots.close(str(first))
                        self.waiting.clear()  # nothing new opens; open cells stop at their next question
            except BaseException:  # Ctrl-C: no request or question starts; those under way stop at their next request
                self.slots.close("interrupted")
                raise
        if first is not None:
            raise first
        return [self.futures[cell].result() for cell in self.cells]

    def _open(self) -> list[Future]:
        return [f for f in self.futures.values() if not f.done()]

    def _to_open(self) -> list[Cell]:
        if self.futures and not any(f.done() or self.views[c].asking.is_set() for c, f in self.futures.items()):
            return []  # the first cell alone builds the store and caches the gold screen that all of them share
        free = self.at_once - len(self._open())
        chosen: list[Cell] = []
        for cell in self.waiting:
            if len(chosen) >= free:
                break
            twin = cell.twin()
            if twin is not None:
                done = twin in self.futures and self.futures[twin].done()
                if done or (twin not in self.futures and twin not in self.waiting):
                    chosen.append(cell)
            elif not any(c.twin() is None for c in chosen) and self._feedback_hungry():
                chosen.append(cell)
        return chosen if self.futures else chosen[:1]

    def _feedback_hungry(self) -> bool:
        """No open cell that waits for none (feedback) is still setting up, and the open ones have < 2 x workers
        questions left."""
        open_feedback = [c for c, f in self.futures.items() if c.twin() is None and not f.done()]
        if any(not self.views[c].asking.is_set() for c in open_feedback):
            return False
        return sum(self.views[c].demand for c in open_feedback) < 2 * self.slots.size

    def _one(self, cell: Cell) -> CellReport:
        from t2c_lib.study.steps import infer

        try:
            waited = cell.twin()
            twin = self.futures.get(waited) if waited is not None else None
            if waited is not None and twin is not None and twin.exception() is not None:
                raise GridStopped(f"{cell.strategy}/{cell.configuration}: its {waited.strategy} cell stopped")
            if self.slots.closed:
                raise GridStopped(f"{cell.strategy}/{cell.configuration} not started")
            done = infer(
                self.params,
                cell.prompt_type,
                cell.schema_format,
                cell.strategy,
                cache_mode=self.cache_mode,
                progress=False,
                slots=self.views[cell],
                replace_run=self.replace_run,
            )
        except BaseException as exc:
            self.slots.close(f"{type(exc).__name__}: {exc}")
            raise
        with self._report_lock:
            self.report(done)
        return done

    def _first_error(self, first: BaseException | None) -> BaseException | None:
        """The error to raise: the first cell's own error, before any `GridStopped` it caused in the others."""
        for future in self.futures.values():
            exc = future.exception() if future.done() else None
            if exc is not None and (
                first is None or (isinstance(first, GridStopped) and not isinstance(exc, GridStopped))
            ):
                first = exc
        return first
