"""The batch runner: run every question of one cell, keep every attempt.

Each attempt is appended to `attempts.jsonl` as it happens (flush + fsync), each finished
question to `questions.jsonl`. A rerun resumes: finished questions are skipped and the
partial attempts of an interrupted question are dropped and redone (the response cache
makes the redo free and identical). A question that raises is recorded as failed with its
error and the run goes on, except for a configuration error (`LLMConfigError`: bad key,
unknown model, malformed URL), which no question can get past, and an outage
(`LLMUnavailableError`: the endpoint refused, timed out or answered 429/5xx after every
retry), which says nothing about the question: the run stops at once, keeps what finished and
records nothing for that question, so a run resumed after the fix asks it. An outage that an
older t2c recorded as a failed answer is set aside to `questions.outage.jsonl` on resume and
asked again. A torn last line
(a writer killed mid-line) is moved to `<file>.torn` before anything is appended. Layout:
`results/<run_id>/<strategy>/<configuration>/` (a run made before strategies keeps its
`agentic/` folders: they are the `feedback` strategy's).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from t2c_lib.datasets import GroundTruthItem
from t2c_lib.llm.base import STOPS_THE_RUN
from t2c_lib.llm.lanes import LaneGroup, split_for_lanes
from t2c_lib.records import NO_MODEL_CALL, Attempt
from t2c_lib.runs.layout import Cell
from t2c_lib.runs.runlog import AttemptLog
from t2c_lib.study.params import StudyParams
from t2c_lib.study.progress import PROGRESS_FILE

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.llm.stack import CellSlots


@dataclass
class CellReport:
    """What one call of `run_cell` did."""

    cell: Cell
    directory: Path
    questions: int
    skipped: int
    ran: int
    failed_with_error: int
    dropped_partial_attempts: int
    model_calls: int
    cache_hits: int
    seconds: float
    outages_set_aside: int = 0
    model_id: str = ""

    def line(self) -> str:
        again = (
            f" ({self.outages_set_aside} outage(s) an older run recorded as answers, asked again)"
            if self.outages_set_aside
            else ""
        )
        model = f", model {self.model_id}" if self.model_id else ""
        return (
            f"{self.cell.strategy}/{self.cell.configuration}: {self.ran} run{again}, {self.skipped} already done, "
            f"{self.failed_with_error} raised, model calls {self.model_calls}, cache hits {self.cache_hits}, "
            f"{self.seconds:.1f} s{model}"
        )


def run_cell(
    cell: Cell,
    params: StudyParams,
    questions: list[GroundTruthItem],
    solve: Callable[[GroundTruthItem, Callable[[Attempt], None]], dict[str, Any]],
    run_dir: Path,
    workers: int = 1,
    progress: bool = True,
    model_id: str = "",
    lanes: LaneGroup | None = None,
    slots: CellSlots | None = None,
) -> CellReport:
    """Run `solve` on every unfinished question, persisting attempts and outcomes as they happen.

    `solve(item, on_attempt)` runs the agent loop for one question, calls `on_attempt` for
    each attempt and returns the question's outcome record. With `lanes` (a local model
    decoding several replies together) question k goes to lane k mod lanes, each lane's
    thread asks its questions in order: a split fixed by the question list, not by timing.
    With `slots` (cells run at the same time, `t2c_lib.study.grid`) every question starts at
    once on its own thread: the model's requests wait for the run's slots, and the grid sees
    how many questions the cell has left.
    """
    started = time.perf_counter()
    log = AttemptLog(cell.directory(run_dir))
    outages = log.set_aside_outages()
    dropped = log.drop_unfinished_attempts()
    done = log.finished_ids()
    todo = [q for q in questions if q.id not in done]
    counters = {"calls": 0, "hits": 0, "raised": 0, "finished": 0}
    counter_lock = threading.Lock()
    note = ProgressNote(log.directory, len(questions), len(questions) - len(todo))

    def on_attempt(attempt: Attempt) -> None:
        log.append_attempt(attempt)
        with counter_lock:
            if attempt.called_model:
                counters["calls"] += 1
            elif attempt.kind not in NO_MODEL_CALL:
                counters["hits"] += 1

    def one(item: GroundTruthItem) -> None:
        try:
            with slots.hold() if slots is not None else nullcontext():
                record = solve(item, on_attempt)
        except STOPS_THE_RUN:
            raise  # a bad configuration or an outage: no answer to record; stop, and the resumed run asks it
        except Exception as exc:  # a question that raises is recorded, the run goes on
            with counter_lock:
                counters["raised"] += 1
            record = _raised_record(exc)
        record = {
            "question_id": item.id,
            "mode": cell.strategy,
            "strategy": cell.strategy,
            "configuration": cell.configuration,
            **record,
        }
        log.append_question(record)
        with counter_lock:
            counters["finished"] += 1
            note.write(len(questions) - len(todo) + counters["finished"])

    bar = tqdm(
        total=len(questions),
        initial=len(questions) - len(todo),
        desc=f"{cell.strategy}/{cell.configuration}",
        unit="q",
        disable=not progress,
        dynamic_ncols=True,
    )
    try:
        _ask_all(todo, one, bar, workers, lanes, threads_for_all=slots is not None)
    except STOPS_THE_RUN as exc:
        kept = len(questions) - len(todo) + counters["finished"]
        raise type(exc)(
            f"{exc} -- {cell.strategy}/{cell.configuration} stopped: {kept} of {len(questions)} questions "
            f"finished and kept, none recorded from the failure; run the same command again to ask "
            f"the other {len(questions) - kept}"
        ) from exc
    finally:
        bar.close()
    return CellReport(
        cell=cell,
        directory=log.directory,
        questions=len(questions),
        skipped=len(questions) - len(todo),
        ran=len(todo),
        failed_with_error=counters["raised"],
        dropped_partial_attempts=dropped,
        model_calls=counters["calls"],
        cache_hits=counters["hits"],
        seconds=time.perf_counter() - started,
        outages_set_aside=outages,
        model_id=model_id,
    )


class ProgressNote:
    """`.progress.json` (`study.progress.PROGRESS_FILE`) of one running cell, rewritten atomically after every
    finished question: questions done of total and when this run of the cell started (wall clock). Hidden, so never
    published or compared: `make all`'s watch (`study.progress.watch`) prints a line per cell from it while the
    notebook runs, and the grid's estimate prices a running cell by its own pace."""

    def __init__(self, directory: Path, questions: int, done: int) -> None:
        self.path = directory / PROGRESS_FILE
        self.questions = questions
        self.resumed = done
        self.started = time.time()
        self.write(done)

    def write(self, done: int) -> None:
        data = {"questions": self.questions, "done": done, "resumed_at": self.resumed, "started": self.started}
        tmp = self.path.with_name(f"{PROGRESS_FILE}.{threading.get_ident()}.tmp")
        try:
            tmp.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
            tmp.replace(self.path)
        except OSError:  # a progress note never stops a run
            pass


def _raised_record(exc: Exception) -> dict[str, Any]:
    """The outcome recorded for a question whose solving raised (not an outage: that stops the run)."""
    return {
        "status": "FAILED",
        "success": False,
        "kg_valid": False,
        "iterations": 0,
        "final_query": "",
        "error": f"{type(exc).__name__}: {exc}",
    }


def _ask_all(
    todo: list[GroundTruthItem],
    one: Callable[[GroundTruthItem], None],
    bar: Any,
    workers: int,
    lanes: LaneGroup | None,
    threads_for_all: bool,
) -> None:
    """Every question of `todo` through `one`: in the model's lanes, one after another, or on `workers` threads
    (`threads_for_all`: one thread per question, their requests waiting for the run's slots)."""
    if lanes is not None:
        _run_in_lanes(lanes, todo, one, bar)
    elif workers <= 1:
        for item in todo:
            one(item)
            bar.update(1)
    else:
        pool = ThreadPoolExecutor(max_workers=max(1, len(todo)) if threads_for_all else workers)
        try:
            for future in as_completed([pool.submit(one, item) for item in todo]):
                future.result()
                bar.update(1)
        finally:  # on a stop, questions not yet started are not started
            pool.shutdown(wait=True, cancel_futures=True)


def _run_in_lanes(
    lanes: LaneGroup, todo: list[GroundTruthItem], one: Callable[[GroundTruthItem], None], bar: Any
) -> None:
    """One thread per lane, each with its fixed share of `todo`; the first stop ends every lane."""
    stop = threading.Event()

    def lane_worker(lane: int, items: list[GroundTruthItem]) -> None:
        with lanes.bind(lane):
            for item in items:
                if stop.is_set():
                    return
                try:
                    one(item)
                except BaseException:
                    stop.set()
                    raise
                bar.update(1)

    # The engine is shut first on the way out: on Ctrl-C the replies still decoding end at once
    # (as an outage: their questions are not recorded) instead of running to their end.
    with ThreadPoolExecutor(max_workers=lanes.lanes, thread_name_prefix="t2c-lane") as pool, lanes:
        futures = [pool.submit(lane_worker, i, items) for i, items in enumerate(split_for_lanes(todo, lanes.lanes))]
        try:
            for future in futures:
                future.result()
        except BaseException:
            stop.set()
            raise
