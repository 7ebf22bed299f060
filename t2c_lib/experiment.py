"""The batch runner: expand a grid, run every question of a configuration, keep every attempt.

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
import os
import re
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from tqdm import tqdm

from t2c_lib import __version__, config
from t2c_lib.agent.types import Attempt
from t2c_lib.datasets import Dataset, GroundTruthItem
from t2c_lib.graph.base import GraphStore
from t2c_lib.graph.schema import SchemaFormat
from t2c_lib.llm.base import STOPS_THE_RUN
from t2c_lib.params import StudyParams

ATTEMPTS_FILE = "attempts.jsonl"
QUESTIONS_FILE = "questions.jsonl"
OUTAGES_FILE = "questions.outage.jsonl"
MANIFEST_FILE = "manifest.json"


LEGACY_FOLDERS = {"feedback": "agentic"}
"""Strategy -> the folder name runs made before strategies used for it."""

GRID_ORDER = ("feedback", "history", "raw-error", "verifier", "single-pass", "vote")
"""Run order: `feedback` first fills the cache with the first attempt the next four share
(single-pass then costs nothing); `vote` last, because its k is `feedback`'s measured mean calls."""


@dataclass(frozen=True)
class Cell:
    """One cell of the grid: a strategy (single-pass, feedback, ...) and a configuration name."""

    strategy: str
    prompt_type: str
    schema_format: str

    @property
    def mode(self) -> str:
        """The old name of `strategy`."""
        return self.strategy

    @property
    def configuration(self) -> str:
        return f"{self.prompt_type}_{SchemaFormat.parse(self.schema_format).config_label}"

    def max_iterations(self, params: StudyParams) -> int:
        return 1 if self.strategy == "single-pass" else params.max_iterations

    def directory(self, run_dir: Path) -> Path:
        """`<run>/<strategy>/<configuration>`; an existing pre-strategy `agentic/` folder for `feedback`."""
        here = run_dir / self.strategy / self.configuration
        legacy = LEGACY_FOLDERS.get(self.strategy)
        if legacy and not (here / ATTEMPTS_FILE).is_file() and (run_dir / legacy / self.configuration / ATTEMPTS_FILE).is_file():
            return run_dir / legacy / self.configuration
        return here


def expand_grid(params: StudyParams) -> list[Cell]:
    """Every (strategy, prompt type, schema format) of the parameters, in `GRID_ORDER`."""
    strategies = sorted(params.strategies, key=GRID_ORDER.index)
    return [Cell(s, pt, sf) for s in strategies for pt in params.prompt_types for sf in params.schema_formats]


def run_dir_for(params: StudyParams, results_dir: Path | None = None) -> Path:
    return Path(results_dir or config.RESULTS_DIR) / params.run_id


# --- the persistent log of one cell ------------------------------------------------------------

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
        line = _json_line(record)
        with self._lock, path.open("a", encoding="utf-8") as handle:
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
        complete = isinstance(json.loads(tail.decode("utf-8")), dict)
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
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def _json_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"


# --- rate limiting --------------------------------------------------------------------------

class RateLimiter:
    """At most `per_minute` acquisitions in any 60 s window, shared by all worker threads."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
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


# --- running a cell -------------------------------------------------------------------------

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
        again = (f" ({self.outages_set_aside} outage(s) an older run recorded as answers, asked again)"
                 if self.outages_set_aside else "")
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
) -> CellReport:
    """Run `solve` on every unfinished question, persisting attempts and outcomes as they happen.

    `solve(item, on_attempt)` runs the agent loop for one question, calls `on_attempt` for
    each attempt and returns the question's outcome record.
    """
    started = time.perf_counter()
    log = AttemptLog(cell.directory(run_dir))
    outages = log.set_aside_outages()
    dropped = log.drop_unfinished_attempts()
    done = log.finished_ids()
    todo = [q for q in questions if q.id not in done]
    counters = {"calls": 0, "hits": 0, "raised": 0, "finished": 0}
    counter_lock = threading.Lock()

    def on_attempt(attempt: Attempt) -> None:
        log.append_attempt(attempt)
        with counter_lock:
            counters["hits" if attempt.cached else "calls"] += 1

    def one(item: GroundTruthItem) -> None:
        try:
            record = solve(item, on_attempt)
        except STOPS_THE_RUN:
            raise  # a bad configuration or an outage: no answer to record; stop, and the resumed run asks it
        except Exception as exc:  # a question that raises is recorded, the run goes on
            with counter_lock:
                counters["raised"] += 1
            record = {"status": "FAILED", "success": False, "kg_valid": False, "iterations": 0,
                      "final_query": "", "error": f"{type(exc).__name__}: {exc}"}
        record = {"question_id": item.id, "mode": cell.strategy, "strategy": cell.strategy,
                  "configuration": cell.configuration, **record}
        log.append_question(record)
        with counter_lock:
            counters["finished"] += 1

    bar = tqdm(total=len(questions), initial=len(questions) - len(todo), desc=f"{cell.strategy}/{cell.configuration}",
               unit="q", disable=not progress, dynamic_ncols=True)
    try:
        if workers <= 1:
            for item in todo:
                one(item)
                bar.update(1)
        else:
            pool = ThreadPoolExecutor(max_workers=workers)
            try:
                for future in as_completed([pool.submit(one, item) for item in todo]):
                    future.result()
                    bar.update(1)
            finally:  # on a stop, questions not yet started are not started
                pool.shutdown(wait=True, cancel_futures=True)
    except STOPS_THE_RUN as exc:
        kept = len(questions) - len(todo) + counters["finished"]
        raise type(exc)(f"{exc} -- {cell.strategy}/{cell.configuration} stopped: {kept} of {len(questions)} questions "
                        f"finished and kept, none recorded from the failure; run the same command again to ask "
                        f"the other {len(questions) - kept}") from exc
    finally:
        bar.close()
    return CellReport(
        cell=cell, directory=log.directory, questions=len(questions), skipped=len(questions) - len(todo), ran=len(todo),
        failed_with_error=counters["raised"], dropped_partial_attempts=dropped, model_calls=counters["calls"],
        cache_hits=counters["hits"], seconds=time.perf_counter() - started, outages_set_aside=outages,
        model_id=model_id,
    )


# --- manifests ------------------------------------------------------------------------------

def git_commit(root: Path | None = None) -> str:
    """The checkout's commit (with `-dirty` when files changed), or `unknown` outside git."""
    root = root or config.PROJECT_ROOT
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if commit.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10)
        return commit.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write_json(path: Path, data: Any) -> None:
    """Write JSON with sorted keys and a trailing newline, atomically (same data, same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def build_manifest(
    params: StudyParams, dataset: Dataset, store: GraphStore, model_id: str, template_hashes: dict[str, str],
    chain: Iterable[str], cell: Cell | None = None,
) -> dict[str, Any]:
    """Every setting behind a run's numbers; no secrets, no timestamps (same run, same bytes)."""
    schema = store.schema()
    manifest: dict[str, Any] = {
        "package": "t2c", "package_version": __version__, "git_commit": git_commit(),
        "dataset": dataset.name, "dataset_hash": dataset.hash, "store": store.name,
        "model_id": model_id, "template_hashes": template_hashes, "validators": list(chain),
        "schema_hashes": {fmt.value: schema.text_hash(fmt) for fmt in SchemaFormat if not fmt.per_question},
        "parameters": params.to_dict(),
    }
    if cell is not None:
        manifest.update({
            "strategy": cell.strategy, "configuration": cell.configuration, "prompt_type": cell.prompt_type,
            "schema_format": cell.schema_format, "max_iterations": cell.max_iterations(params),
        })
        if SchemaFormat.parse(cell.schema_format).per_question:
            from t2c_lib.linking import settings_from
            from t2c_lib.linking.embedder import weights_version

            manifest["linking"] = {"signature": settings_from(params).signature(), "embedding_weights": weights_version()}
    manifest["signature"] = run_signature(manifest)
    return manifest


def run_signature(manifest: dict[str, Any]) -> str:
    """A one-line signature of a run, like sacrebleu's: model, iterations, validators, hashes."""
    parts = [
        f"t2c:{manifest['package_version']}", f"data:{manifest['dataset']}@{manifest['dataset_hash'][:12]}",
        f"store:{manifest['store']}", f"model:{manifest['model_id']}",
        f"iters:{manifest.get('max_iterations', manifest['parameters']['max_iterations'])}",
        f"T:{manifest['parameters']['temperature_first']}/{manifest['parameters']['temperature_refine']}",
        f"chain:{'+'.join(manifest['validators'])}",
        "tpl:" + ",".join(f"{k}={v[:8]}" for k, v in sorted(manifest["template_hashes"].items())),
    ]
    if "configuration" in manifest:
        parts.insert(4, f"config:{manifest.get('strategy', manifest.get('mode'))}/{manifest['configuration']}")
    if manifest["parameters"].get("decoding", "free") != "free":
        parts.append(f"dec:{manifest['parameters']['decoding']}")
    return "|".join(parts)
