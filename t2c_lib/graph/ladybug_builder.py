"""The embedded store's builder process: a fresh database built from a dataset, walled in to its folder.

A dataset is hostile input: its label and property names go into DDL, its values into rows. The
parent (`graph/ladybug.py`) reads and checks the dataset files, escapes every name and sends the
statements with their parameters down a pipe; this process walls itself in first
(`graph/oswall.py`: it may read the Python and system libraries and read and write its staging
folder, nothing else; no sockets, no exec, no code mapped, no new process) and only then creates the database
and runs the statements, each prepared alone (a text holding two statements is refused, never run). It runs
with the same fixed environment and isolated interpreter as the query process (`ladybug_child.py`), and
under the same seccomp filter: strace of a build shows it needs none of the refused calls (no chmod, chown,
utime or xattr even in its own staging folder), so the two roles share one filter.

Protocol: the request is one pickle on stdin (from the parent, trusted): `{"db": <path>,
"statements": [(text, params | None), ...], "buffer_pool": int, "max_db": int}`; the reply is one
frame (`ladybug_worker.write_frame`) on the descriptor given as the second argument:
`{"ok": True, "wall": {...}}` or `{"error": <message>}`.
"""

from __future__ import annotations

import io
import os
import pickle
import resource
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from t2c_lib.graph import oswall
from t2c_lib.graph.ladybug_worker import become_subreaper, cut_message, exit_with_parent, load_native, write_frame


class BuildFailed(Exception):
    """A statement the database refused while building (its message cut to the frame budget)."""


def run_statements(conn: Any, statements: list[tuple[str, dict[str, Any] | None]]) -> None:
    """Prepare and run each statement alone; raise BuildFailed on the first the database refuses."""
    for text, params in statements:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # prepare(): one statement per call, checked
            try:
                prepared = conn.prepare(text)
            except RuntimeError as exc:
                raise BuildFailed(str(exc).strip()) from None
        if not prepared.is_success():
            message = prepared.get_error_message().strip()
            if "multiple statements" in message:
                message = "a dataset statement held more than one statement (refused, nothing of it ran)"
            raise BuildFailed(message)
        try:
            conn.execute(prepared, params or {})
        except RuntimeError as exc:
            raise BuildFailed(str(exc).strip()) from None


BUILD_TIMEOUT_S = 900.0
"""Seconds a build may take before the builder is killed (the curriculum graph builds in about a second)."""


def build(
    db_path: Path,
    statements: list[tuple[str, dict[str, Any] | None]],
    buffer_pool: int,
    max_db: int,
    os_wall: bool,
) -> oswall.WallStatus:
    """Build a fresh database at `db_path` (inside its staging folder) in a walled builder process.

    Raise StoreUnavailable with the database's message (cut, made safe) when a statement is refused."""
    from t2c_lib.errors import StoreUnavailable  # the parent's side only
    from t2c_lib.graph.ladybug_child import kill_tree, start_child
    from t2c_lib.graph.ladybug_worker import HEADER, SafeUnpickler
    from t2c_lib.graph.messages import safe_message

    db_path = db_path.resolve()
    request = pickle.dumps(
        {"db": str(db_path), "statements": statements, "buffer_pool": buffer_pool, "max_db": max_db},
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    reply_read, reply_write = os.pipe()
    try:
        args = [str(db_path.parent), str(reply_write), "1" if os_wall else "0"]
        proc = start_child("t2c_lib.graph.ladybug_builder", args, (reply_write,), db_path.parent, stdin=subprocess.PIPE)
    finally:
        os.close(reply_write)
    with os.fdopen(reply_read, "rb") as replies:
        try:
            proc.communicate(request, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid)
            proc.wait()
            raise StoreUnavailable(f"building the database took more than {BUILD_TIMEOUT_S:g} s; stopped") from None
        data = replies.read()
    if len(data) < HEADER.size:
        raise StoreUnavailable(f"the database builder stopped (exit status {proc.returncode}) without a reply")
    reply = SafeUnpickler(io.BytesIO(data[HEADER.size :])).load()
    if "error" in reply:
        raise StoreUnavailable(f"the dataset could not be loaded: {safe_message(str(reply['error']))}")
    return oswall.WallStatus.from_dict(reply.get("wall") or {})


def main(argv: list[str]) -> int:
    staging, reply_fd, wall_on = Path(argv[1]), int(argv[2]), argv[3] != "0"
    parent = os.getppid()
    replies = os.fdopen(reply_fd, "wb")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    become_subreaper()
    request = pickle.loads(sys.stdin.buffer.read())  # from the parent, which started this process
    import ladybug

    load_native()
    wall = oswall.restrict(read=oswall.system_library_dirs(), write=[staging.resolve()]) if wall_on else oswall.OFF
    exit_with_parent(parent)
    try:
        db = ladybug.Database(request["db"], max_db_size=request["max_db"], buffer_pool_size=request["buffer_pool"])
        conn = ladybug.Connection(db)
        run_statements(conn, request["statements"])
        conn.close()
        db.close()
    except (BuildFailed, RuntimeError) as exc:
        write_frame(replies, {"error": cut_message(str(exc)), "wall": wall.as_dict()})
        return 1
    write_frame(replies, {"ok": True, "wall": wall.as_dict()})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
