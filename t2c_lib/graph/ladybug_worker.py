"""The embedded store's query process: LadybugDB opened read-only in a child process of its own.

A query that runs away (memory, a parser crash, work the database cannot interrupt) takes
down this process, not the user's: the parent (`graph/ladybug.py`) watches its memory and
the clock and kills it on overrun, then starts a fresh one for the next query.

Protocol: frames of an 8-byte big-endian length and a pickle, on two pipes given as file
descriptors. Requests come from the parent (trusted); replies are plain builtins, graph
values and dates, which the parent unpickles through an allow-list (`SAFE_GLOBALS`).
Each request is `{"op": "run" | "plan", "text": ..., "timeout_ms": ..., "max_rows": ...,
"max_bytes": ...}` (and `"word_check": False` where a test shows the walls behind the word check); the text has passed the gate (`cypher/gate.py`) and the Neo4j-dialect
rewrite already. Here the read-only session refuses any statement that does not start with a read
clause (`session_problem`: CHECKPOINT, transactions, exports, ...), the file and extension words are
refused again on the database's tokens (`ladybug_words`), then it is prepared as one statement, its EXPLAIN plan must hold read
operators only (`ladybug_plan.read_plan`), and the result is bounded in rows and bytes. A compile
message is passed on only for a text that is plainly a read, and every message is cut to
MAX_MESSAGE_BYTES.

Before the database is opened (so every thread it starts inherits it) the process walls itself
in (`graph/oswall.py`): only its database's folder and the Python and system libraries exist for it,
read-only; it may write nothing, open no socket, run nothing, map no code and start no process. The
ready frame says which walls hold (`"wall"`).
"""

from __future__ import annotations

import datetime
import os
import pickle
import resource
import struct
import sys
import time
import uuid
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO

from t2c_lib.graph import oswall
from t2c_lib.graph.base import GraphNode, GraphPath, GraphRel, value_bytes
from t2c_lib.graph.ladybug_plan import PlanVerdict, read_plan, size_problem, statement_kind_problem
from t2c_lib.graph.ladybug_words import file_or_code_word, withheld_reason

HEADER = struct.Struct(">Q")
FETCH_CHECK_EVERY = 256
MAX_MESSAGE_BYTES = 4096
"""Bytes of an error message the process sends (UTF-8); the rest is cut here, so a huge message never
outgrows the result budget on its way to the parent (which shortens it further for display)."""
SAFE_GLOBALS = frozenset(
    {
        ("t2c_lib.cypher.query_result", "GraphNode"),
        ("t2c_lib.cypher.query_result", "GraphRel"),
        ("t2c_lib.cypher.query_result", "GraphPath"),
        ("datetime", "date"),
        ("datetime", "datetime"),
        ("datetime", "timedelta"),
        ("datetime", "time"),
        ("datetime", "timezone"),
        ("decimal", "Decimal"),
        ("uuid", "UUID"),
    }
)
"""The only classes a reply may name; anything else in a reply is refused, never constructed."""


def write_frame(stream: BinaryIO, payload: Any) -> None:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def read_exact(stream: BinaryIO, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the other end closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class SafeUnpickler(pickle.Unpickler):
    """Unpickles replies naming only SAFE_GLOBALS."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in SAFE_GLOBALS:
            raise pickle.UnpicklingError(f"a reply named {module}.{name}, which is not allowed")
        return super().find_class(module, name)


# --- the database side ----------------------------------------------------------------------


def classify(message: str) -> str:
    """The QueryError kind of a LadybugDB error message."""
    if message.startswith("Interrupted"):
        return "timeout"
    if "read-only" in message or "read only" in message:
        return "write"
    if message.startswith("Parser exception"):
        return "syntax"
    if message.startswith("Binder exception") or message.startswith("Catalog exception"):
        return "semantic"
    if (
        message.startswith("Buffer manager exception")
        or "Unable to allocate memory" in message
        or "bad_alloc" in message
    ):
        return "resource"
    return "runtime"


def cut_message(message: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """`message` in at most about `limit` UTF-8 bytes (cut on a character boundary, marked)."""
    data = message.encode("utf-8", "replace")
    if len(data) <= limit:
        return message
    return data[:limit].decode("utf-8", "ignore") + " ... (message cut)"


class _Failure(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(cut_message(message))
        self.kind = kind


def _compile_failure(text: str, message: str) -> _Failure:
    """The failure for a text the database could not prepare; a binder or catalog message only for a plain read."""
    kind = classify(message)
    if kind == "syntax":  # the parser reads the text alone, nothing outside it
        return _Failure(kind, message)
    why = withheld_reason(text)
    if why is not None:
        return _Failure("unsafe", f"refused: {why}, and the database could not compile it (its message is withheld)")
    return _Failure(kind, message)


def prepare(conn: Any, text: str, word_check: bool = True) -> Any:
    """A prepared statement for exactly one statement; raise _Failure otherwise (file and extension words
    are refused before the database binds anything; `word_check=False` only to test the walls behind it)."""
    word = file_or_code_word(text) if word_check else None
    if word is not None:
        raise _Failure(
            "unsafe", f"refused before the database: {word} reads or writes files or loads code, and is never run"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # prepare() is the one-statement API needed here
        try:
            statement = conn.prepare(text)
        except RuntimeError as exc:
            raise _compile_failure(text, str(exc).strip()) from None
    if not statement.is_success():
        message = statement.get_error_message().strip()
        if "multiple statements" in message:
            raise _Failure("several", "refused: the text holds more than one statement; send exactly one query")
        raise _compile_failure(text, message)
    return statement


def _set_timeout(conn: Any, deadline: float) -> None:
    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        raise _Failure("timeout", "time limit reached")
    conn.set_query_timeout(max(1, int(remaining * 1000)))


def _execute(conn: Any, statement: Any) -> Any:
    try:
        return conn.execute(statement)
    except RuntimeError as exc:
        message = str(exc).strip()
        raise _Failure(classify(message), message) from None


def plan_of(
    conn: Any, text: str, deadline: float, word_check: bool = True, plan_check: bool = True
) -> tuple[Any, PlanVerdict]:
    """The prepared statement and the verdict on its EXPLAIN plan; a statement of another kind than a query
    is refused before anything is bound or planned (EXPLAIN EXPORT DATABASE creates folders).
    `plan_check=False` (tests only) skips the plan and its verdict."""
    kind = statement_kind_problem(text) if plan_check else None
    if kind is not None:
        return None, PlanVerdict((), (), kind)
    statement = prepare(conn, text, word_check)
    if not plan_check:
        return statement, PlanVerdict((), (), None)
    explain = prepare(conn, f"EXPLAIN {text}", word_check)
    _set_timeout(conn, deadline)
    raw = _execute(conn, explain)
    try:
        drawing = raw.get_next()[0] if raw.has_next() else ""
    finally:
        raw.close()
    return statement, read_plan(str(drawing))


def convert(value: Any) -> Any:
    """LadybugDB's dict encodings of nodes, relationships and paths -> store-neutral values."""
    if isinstance(value, dict):
        if "_NODES" in value and "_RELS" in value:
            return GraphPath(tuple(convert(n) for n in value["_NODES"]), tuple(convert(r) for r in value["_RELS"]))
        if "_LABEL" in value and "_ID" in value:
            props = {k: convert(v) for k, v in value.items() if not k.startswith("_") and v is not None}
            if "_SRC" in value:
                return GraphRel(value["_LABEL"], props)
            return GraphNode((value["_LABEL"],), props)
        return {k: convert(v) for k, v in value.items()}
    if isinstance(value, list):
        return [convert(v) for v in value]
    if isinstance(value, Decimal):  # sum() over integers comes back as Decimal; Neo4j gives int
        return int(value) if value == value.to_integral_value() else float(value)
    if (
        isinstance(value, (str, bytes, int, float, bool, datetime.date, datetime.time, datetime.timedelta, uuid.UUID))
        or value is None
    ):
        return value
    return str(value)


def fetch(raw: Any, deadline: float, max_rows: int | None, max_bytes: int) -> dict[str, Any]:
    total = raw.get_num_tuples()
    if max_rows is not None and total > max_rows:
        raise _Failure(
            "too_large",
            f"the query returns {total:,} rows, more than the limit of {max_rows:,} (T2C_MAX_ROWS); aggregate, filter or add LIMIT",
        )
    columns = list(raw.get_column_names())
    rows: list[list[Any]] = []
    size = 0
    while raw.has_next():
        if len(rows) % FETCH_CHECK_EVERY == 0 and time.perf_counter() > deadline:
            raise _Failure("timeout", "time limit reached while fetching rows")
        row = [convert(v) for v in raw.get_next()]
        size += value_bytes(row)
        if size > max_bytes:
            raise _Failure(
                "too_large",
                f"the result is larger than {max_bytes:,} bytes (T2C_MAX_RESULT_BYTES) after {len(rows) + 1:,} row(s); "
                "return fewer or smaller values, aggregate or add LIMIT",
            )
        rows.append(row)
    return {"columns": columns, "rows": rows}


def session_problem(text: str) -> str | None:
    """Why the read-only session refuses `text`, or None: it runs and plans queries only. `read_only=True`
    alone lets CHECKPOINT write .wal and .shadow files, after which the database no longer opens read-only."""
    kind = statement_kind_problem(text)
    return None if kind is None else f"refused by the read-only session: {kind}"


def refusal_message(refused: str, operators: tuple[str, ...] | list[str]) -> str:
    """The one line for a refused plan (a statement refused before planning has no operators)."""
    if not operators:
        return f"refused: {refused}; only queries are planned or run"
    return f"refused: the database plans {refused}, which is not a read of the graph"


def handle(conn: Any, request: dict[str, Any]) -> dict[str, Any]:
    """One request -> one reply (never raises for a query's fault). `word_check`, `plan_check` and
    `session_check` are False only where a test shows what the other walls hold without them."""
    started = time.perf_counter()
    deadline = started + request["timeout_ms"] / 1000.0
    text = request["text"]
    try:
        refused = session_problem(text) if request.get("session_check", True) else None
        if refused is not None:
            if request["op"] == "plan":
                return {"plan": {"operators": (), "functions": (), "refused": refused}}
            raise _Failure("unsafe", refused)
        statement, verdict = plan_of(
            conn, text, deadline, request.get("word_check", True), request.get("plan_check", True)
        )
        too_big = size_problem(verdict) if verdict.ok else None
        if too_big:
            raise _Failure("resource", too_big)
        if request["op"] == "plan":
            return {
                "plan": {"operators": verdict.operators, "functions": verdict.functions, "refused": verdict.refused}
            }
        if verdict.refused is not None:  # not ok
            raise _Failure("unsafe", refusal_message(verdict.refused, verdict.operators))
        _set_timeout(conn, deadline)
        raw = _execute(conn, statement)
        try:
            reply = fetch(raw, deadline, request["max_rows"], request["max_bytes"])
        finally:
            raw.close()
    except _Failure as failure:
        return {"error": failure.kind, "message": str(failure)}
    reply["elapsed_s"] = time.perf_counter() - started
    return reply


OPEN_FAILED = "cannot open"
"""How the process's start error begins when the database itself would not open read-only (the store rebuilds it)."""
MAX_DB_BYTES = 1 << 30
"""Address space the database reserves for its file's pages (LadybugDB's default reserves 8 TiB, which no
data-segment limit would allow); far above the graphs t2c loads (a few MB)."""


def _limit_resources(memory_bytes: int, buffer_pool: int) -> None:
    """No core files; a data-segment cap (the budget plus the database's address reservations) behind the parent's memory watch."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory_bytes > 0:
        cap = memory_bytes + MAX_DB_BYTES + buffer_pool
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
        except (ValueError, OSError):  # a lower hard limit set by the user's shell stays in force
            pass


_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Orphans of this process's descendants become its children, so the parent's watch (which follows the
    tree from this process) still counts and kills them; under the wall no process can be started at all."""
    if sys.platform == "linux":
        oswall._prctl(oswall._libc(), _PR_SET_CHILD_SUBREAPER, 1)


def exit_with_parent(parent: int, every_s: float = 0.5) -> None:
    """End this process (exit status 3) once `parent` is gone: a builder whose t2c process died would otherwise
    build on for minutes, orphaned (its own session keeps it out of a terminal's kill). Call it after the wall is
    up: a thread started before `oswall.restrict` would be outside it."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(3)

    threading.Thread(target=watch, name="t2c-parent-watch", daemon=True).start()


def load_native() -> None:
    """Map LadybugDB's native library now (`import ladybug` defers it to the first database): the wall
    refuses every executable mapping after it is up."""
    from ladybug import _backend

    if _backend.get_pybind_module() is None:
        _backend.get_capi_module()


def wall_in(db_path: Path, enabled: bool) -> oswall.WallStatus:
    """Read the database's folder and the libraries only; nothing else (before any database thread starts)."""
    if not enabled:
        return oswall.OFF
    return oswall.restrict(read=[db_path.parent, *oswall.system_library_dirs()])


def main(argv: list[str]) -> int:
    db_path, read_fd, write_fd, buffer_pool, memory_bytes = (
        argv[1],
        int(argv[2]),
        int(argv[3]),
        int(argv[4]),
        int(argv[5]),
    )
    wall_on = len(argv) <= 6 or argv[6] != "0"
    requests = os.fdopen(read_fd, "rb", buffering=0)
    replies = os.fdopen(write_fd, "wb")
    _limit_resources(memory_bytes, buffer_pool)
    become_subreaper()
    try:
        import ladybug

        load_native()
        wall = wall_in(Path(db_path).resolve(), wall_on)
        db = ladybug.Database(
            db_path,
            read_only=True,
            max_num_threads=1,
            buffer_pool_size=buffer_pool,
            auto_checkpoint=False,
            max_db_size=MAX_DB_BYTES,
        )
        # one thread: rows tied under ORDER BY / LIMIT come back in the same order every run
        conn = ladybug.Connection(db, num_threads=1)
    except Exception as exc:  # reported to the parent, which raises StoreUnavailable
        hint = " (inside the operating-system wall; T2C_OS_WALL=0 shows whether the wall is the cause)"
        message = cut_message(f"{OPEN_FAILED} {db_path} read-only: {exc}" + (hint if wall_on else ""))
        write_frame(replies, {"error": "unavailable", "message": message})
        return 1
    write_frame(replies, {"ready": True, "pid": os.getpid(), "wall": wall.as_dict()})
    while True:
        try:
            (size,) = HEADER.unpack(read_exact(requests, HEADER.size))
            request = pickle.loads(read_exact(requests, size))  # from the parent, which started this process
        except EOFError:
            return 0
        write_frame(replies, handle(conn, request))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
