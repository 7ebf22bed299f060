"""Read-only, fourth round (issues 55 item 2 and 56): code inside the walled query process, and each wall alone.

Real LadybugDB, real processes. `tests/compromised_worker.py` is the real query process plus one request
that runs code in it (what a LadybugDB bug an attacker controls could do); every finding of the probe is
run that way and must be refused or bounded. The last test takes the walls away one at a time and builds
the table of docs/security.md ("what each wall holds alone") from what it measures.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from t2c_lib.cypher.gate import admit
from t2c_lib.graph import ladybug_process
from t2c_lib.graph.base import ResourceLimit, UnsafeQuery
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.graph.ladybug_child import CHILD_ENV, resident_bytes
from t2c_lib.graph.ladybug_process import QueryProcess
from t2c_lib.graph.oswall import landlock_abi
from tests.helpers import ROOT

SECRET = "t2c-round4-secret-5517"
needs_wall = pytest.mark.skipif(landlock_abi() < 1, reason="this kernel has no Landlock")
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
EPERM, ENOENT, ENOSYS = 1, 2, 38


COUNT = "MATCH (p:Person) RETURN count(p)"
PEOPLE = [[2]]


@pytest.fixture()
def db_copy(tiny_store: LadybugStore, tmp_path: Path) -> Path:
    """A private copy of the tiny graph's database (a test may break it), beside a secret file outside its folder.
    (The tiny graph, not the curriculum: LadybugDB cannot bind EXPORT DATABASE over the curriculum's
    relationship tables, so only here does the export finding show.)"""
    assert tiny_store.query(COUNT).rows == PEOPLE
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    shutil.copytree(tiny_store.version_dir, tmp_path / "db")
    return tmp_path / "db" / tiny_store.db_path.name


@pytest.fixture()
def compromised(monkeypatch):
    """Start query processes that run the compromised worker (the real one plus the probe request)."""
    monkeypatch.setattr(ladybug_process, "WORKER_MODULE", "tests.compromised_worker")
    started: list[QueryProcess] = []

    def start(db_path: Path, os_wall: bool = True, memory: int = 2 << 30) -> QueryProcess:
        started.append(QueryProcess(db_path, 64 << 20, memory, os_wall=os_wall))
        return started[-1]

    yield start
    for process in started:
        process.close()


def probe(process: QueryProcess, code: str, timeout_s: float = 20.0, **args) -> object:
    reply = process.call({"op": "probe", "code": code, "args": args}, time.perf_counter(), timeout_s)
    return reply["result"]


_SYSCALLS = r"""
shm, secret, inside, outside = args["shm"], args["secret"], args["inside"], args["outside"]
def read_segment():
    address = call(30, shm, 0, 0o10000)  # shmat(id, NULL, SHM_RDONLY)
    return address if address < 0 else ctypes.string_at(address, len(secret)).decode()
limits = (ctypes.c_uint64 * 2)()
key_type, key_name = ctypes.create_string_buffer(args["key_type"]), ctypes.create_string_buffer(args["key_name"])
result = {
    "read another process's shared memory": read_segment(),
    "create a shared memory segment": call(29, 0, 4096, 0o1600),  # shmget(IPC_PRIVATE, ..., IPC_CREAT|0600)
    "create a message queue": call(68, 0, 0o1600),
    "create a semaphore": call(64, 0, 1, 0o1600),
    "read a key of the session keyring": call(250, 10, -3, ctypes.addressof(key_type), ctypes.addressof(key_name), 0),
    "chmod inside": attempt(lambda: os.chmod(inside, 0o777)),
    "chmod outside": attempt(lambda: os.chmod(outside, 0o777)),
    "chown outside": attempt(lambda: os.chown(outside, 0, 0)),
    "utime outside": attempt(lambda: os.utime(outside, (1, 1))),
    "utime inside": attempt(lambda: os.utime(inside, (1, 1))),
    "setxattr outside": attempt(lambda: os.setxattr(outside, "user.t2c", b"x")),
    "setxattr inside": attempt(lambda: os.setxattr(inside, "user.t2c", b"x")),
    "read another process's limits": call(302, os.getppid(), 4, 0, ctypes.addressof(limits)),
    "watch a folder with inotify": call(294, 0),
    "fanotify": call(300, 0, 0),
    "clone a user namespace": call(56, 0x10000000 | 17, 0, 0, 0, 0) if args["walled"] else None,  # a child, else
    "clone3": call(435, 0, 0),
    "unshare": call(272, 0x10000000),
    "fork": attempt(lambda: (lambda pid: os._exit(0) if pid == 0 else "forked")(os.fork())),
    "setsid": attempt(os.setsid),
    "setpgid": attempt(lambda: os.setpgid(0, 0)),
    "stat outside": attempt(lambda: os.stat(outside).st_size),
    "access outside": attempt(lambda: os.access(outside, os.R_OK)),
    "stat /etc/passwd": attempt(lambda: os.stat("/etc/passwd").st_size),
    "list /": attempt(lambda: sorted(os.listdir("/"))),
    "environment": dict(os.environ),
    "isolated": sys.flags.isolated,
}
"""
WALLED = {
    "read another process's shared memory": -EPERM,
    "create a shared memory segment": -EPERM,
    "create a message queue": -EPERM,
    "create a semaphore": -EPERM,
    "read a key of the session keyring": -EPERM,
    "chmod inside": "EPERM",
    "chmod outside": "EPERM",  # the filter refuses before the path is looked up (which would say ENOENT)
    "chown outside": "EPERM",
    "utime outside": "EPERM",
    "utime inside": "EPERM",
    "setxattr outside": "EPERM",
    "setxattr inside": "EPERM",
    "read another process's limits": -EPERM,
    "watch a folder with inotify": -EPERM,
    "fanotify": -EPERM,
    "clone a user namespace": -EPERM,
    "clone3": -ENOSYS,  # glibc falls back to clone, whose flags the filter reads
    "unshare": -EPERM,
    "fork": "EPERM",
    "setsid": "EPERM",
    "setpgid": "EPERM",
    "stat outside": "ENOENT",  # not even there: the private view holds only the database's folder
    "access outside": False,
    "stat /etc/passwd": "ENOENT",
    "list /": "EACCES",
    "environment": CHILD_ENV,
    "isolated": 1,
}


def _shared_segment() -> int:
    """A SysV segment of this (the user's) process holding the secret; the caller removes it."""
    LIBC.shmget.restype, LIBC.shmat.restype = ctypes.c_int, ctypes.c_void_p
    shm = LIBC.shmget(0, 4096, 0o1600)
    if shm < 0:
        pytest.skip("no SysV shared memory here")
    address = LIBC.shmat(shm, None, 0)
    ctypes.memmove(address, SECRET.encode(), len(SECRET))
    LIBC.shmdt(ctypes.c_void_p(address))
    return shm


def _remove_ipc(result: dict) -> None:
    """Remove the SysV objects a probe made (IPC_RMID), so none outlives the test."""
    made = [(result.get(k), f) for k, f in (("create a shared memory segment", LIBC.shmctl),
            ("create a message queue", LIBC.msgctl), ("create a semaphore", None))]  # fmt: skip
    for ident, remove in made:
        if isinstance(ident, int) and ident >= 0:
            if remove is None:
                LIBC.semctl(ident, 0, 0)
            else:
                remove(ident, 0, None)


def _session_key() -> tuple[bytes, bytes]:
    """A key in this process's session keyring (the query process inherits the keyring), or a skip."""
    kind, name = b"user", b"t2c-round4-key"
    key = LIBC.syscall(248, kind, name, SECRET.encode(), len(SECRET), -3)  # add_key(..., KEY_SPEC_SESSION_KEYRING)
    if key < 0:
        pytest.skip("no session keyring here")
    return kind, name


@needs_wall
def test_code_in_the_walled_query_process_is_refused_every_system_call_of_the_probe(db_copy, compromised) -> None:
    outside = db_copy.parents[1] / "secret.txt"
    before = outside.stat()
    shm = _shared_segment()
    kind, name = _session_key()
    args = {"shm": shm, "secret": SECRET, "inside": str(db_copy), "outside": str(outside)}
    args |= {"key_type": kind, "key_name": name}
    walled, open_ = {}, {}
    try:
        walled_process = compromised(db_copy)
        walled = probe(walled_process, _SYSCALLS, walled=True, **args)
        after = outside.stat()
        open_ = probe(compromised(db_copy, os_wall=False), _SYSCALLS, walled=False, **args)
    finally:
        LIBC.shmctl(shm, 0, None)  # IPC_RMID
        _remove_ipc(walled)
        _remove_ipc(open_)
    assert walled_process.wall.complete and walled_process.wall.view and walled_process.wall.keyring
    assert {k: walled[k] for k in WALLED} == WALLED
    assert (after.st_mode, after.st_uid, after.st_mtime_ns) == (before.st_mode, before.st_uid, before.st_mtime_ns)
    # without the wall the same code works: the test measures the wall, not a quirk of this machine
    assert open_["read another process's shared memory"] == SECRET
    assert open_["create a shared memory segment"] >= 0 and open_["read a key of the session keyring"] > 0
    assert open_["stat outside"] == len(SECRET) and open_["chmod outside"] is None
    assert open_["read another process's limits"] == 0 and open_["watch a folder with inotify"] >= 0
    assert open_["fork"] == "forked"


_FORK_HOLD = r"""
pid = os.fork()
if pid == 0:
    try:
        os.setsid()  # out of the process group the parent kills
        held = bytearray(b"\x01") * (args["mb"] << 20)  # resident: every page written
        time.sleep(120)
    finally:
        os._exit(0)
time.sleep(1.5)
result = pid
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_nothing_the_query_process_starts_outlives_it_or_escapes_the_memory_watch(db_copy, compromised) -> None:
    """The wall refuses fork outright (above); where it is off, the watch still counts and kills the whole tree."""
    process = compromised(db_copy, os_wall=False)
    child = probe(process, _FORK_HOLD, mb=400)
    assert isinstance(child, int) and _alive(child)
    process.memory_bytes = resident_bytes(process.proc.pid) + (200 << 20)  # the process alone stays below it
    try:
        with pytest.raises(ResourceLimit, match="memory"):
            probe(process, "time.sleep(10)")
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "a child that left the process group outlived the query process"
    finally:
        if _alive(child):
            os.kill(child, 9)


def test_closing_the_process_kills_a_child_that_left_its_group(db_copy, compromised) -> None:
    process = compromised(db_copy, os_wall=False)
    child = probe(process, _FORK_HOLD, mb=1)
    try:
        assert _alive(child)
        process.close()
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        if _alive(child):
            os.kill(child, 9)


@pytest.mark.parametrize("os_wall", [True, False], ids=["wall on", "wall off"])
def test_pythonpath_and_a_planted_sitecustomize_never_reach_the_query_process(
    db_copy, tmp_path, monkeypatch, os_wall: bool
) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "sitecustomize-ran"
    (planted / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(planted))  # what a project .env once set
    monkeypatch.setenv("PYTHONSTARTUP", str(planted / "sitecustomize.py"))
    monkeypatch.setenv("T2C_ROUND4_SECRET", SECRET)
    process = QueryProcess(db_copy, 64 << 20, 2 << 30, os_wall=os_wall)
    try:
        reply = process.call(
            {"op": "run", "text": COUNT, "max_rows": 5, "max_bytes": 1 << 20}, time.perf_counter(), 10.0
        )
    finally:
        process.close()
    assert reply["rows"] == PEOPLE
    assert not marker.exists(), "a sitecustomize from PYTHONPATH ran inside the query process"


def test_the_query_process_sees_a_fixed_environment(db_copy, compromised, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/nonexistent-t2c")
    monkeypatch.setenv("T2C_ROUND4_SECRET", SECRET)
    process = compromised(db_copy, os_wall=False)
    seen = probe(
        process, "result = [dict(os.environ), sys.flags.isolated, sys.path[0], '/nonexistent-t2c' in sys.path]"
    )
    assert seen == [CHILD_ENV, 1, str(ROOT), False]


# --- issue 56: the plan is got without side effects, and the session alone refuses CHECKPOINT ----------------


def _bare(text: str, op: str = "run") -> dict:
    """A request with the gate, the word check and (for `bare_session`) the plan wall taken away."""
    return {"op": op, "text": text, "max_rows": 10, "max_bytes": 1 << 20, "word_check": False}


@pytest.mark.parametrize("op", ["run", "plan"])
def test_the_plan_wall_alone_creates_no_folder(db_copy, tmp_path, op: str) -> None:
    """OS wall off, word check off, session check off: EXPLAIN EXPORT DATABASE once created the folders."""
    target = tmp_path / "exported" / "a" / "b"
    process = QueryProcess(db_copy, 64 << 20, 2 << 30, os_wall=False)
    try:
        request = dict(_bare(f"EXPORT DATABASE '{target}'", op), session_check=False)
        if op == "run":
            with pytest.raises(UnsafeQuery, match="not a read clause"):
                process.call(request, time.perf_counter(), 10.0)
        else:
            assert "not a read clause" in process.call(request, time.perf_counter(), 10.0)["plan"]["refused"]
    finally:
        process.close()
    assert not (tmp_path / "exported").exists(), "planning the export created folders"


@pytest.mark.parametrize(
    "text", ["CHECKPOINT", "  // a comment\n checkpoint", "BEGIN TRANSACTION", "EXPORT DATABASE 'x'"]
)
def test_the_read_only_session_alone_refuses_checkpoint(db_copy, text: str) -> None:
    """OS wall off, word check off, plan wall off: the session itself refuses, and nothing is written."""
    process = QueryProcess(db_copy, 64 << 20, 2 << 30, os_wall=False)
    try:
        with pytest.raises(UnsafeQuery, match="refused by the read-only session"):
            process.call(dict(_bare(text), plan_check=False), time.perf_counter(), 10.0)
        assert process.call(_bare(COUNT), time.perf_counter(), 10.0)["rows"] == PEOPLE
    finally:
        process.close()
    assert sorted(p.name for p in db_copy.parent.iterdir()) == [db_copy.name], "the database folder changed"
    again = QueryProcess(db_copy, 64 << 20, 2 << 30, os_wall=False)  # still opens read-only
    again.close()


_BREAK = r"""
import sys, ladybug
db = ladybug.Database(sys.argv[1], read_only=True, auto_checkpoint=False, max_num_threads=1)
conn = ladybug.Connection(db, num_threads=1)
try:
    conn.execute("CHECKPOINT")
except RuntimeError:
    pass
"""


def test_a_store_that_no_longer_opens_read_only_is_rebuilt(kurikulum, tmp_path, caplog) -> None:
    store = LadybugStore(kurikulum, root=tmp_path / "cache")
    try:
        assert store.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]
        store.close()
        subprocess.run([sys.executable, "-c", _BREAK, str(store.db_path)], check=True, timeout=60)
        left = sorted(p.name for p in store.version_dir.iterdir())
        assert left != [store.db_path.name], "the raw CHECKPOINT left nothing behind (the finding no longer holds)"
        with caplog.at_level("WARNING", logger="t2c_lib.graph.ladybug"):
            assert store.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]
        assert any("rebuilding it from the dataset" in r.getMessage() for r in caplog.records)
        assert sorted(p.name for p in store.version_dir.iterdir()) == [store.db_path.name]
    finally:
        store.close()


# --- what each wall holds alone (the table of docs/security.md) --------------------------------------------

CLASSES = {
    "file read": "LOAD FROM '{secret}' (file_format='csv', header=false) RETURN *",
    "file read behind a read clause": "UNWIND [1] AS x WITH * LOAD FROM '{secret}' (file_format='csv', header=false) RETURN *",
    "file write": "COPY (RETURN 'x') TO '{out}/copied.csv'",
    "database export": "EXPORT DATABASE '{out}/exported/a/b'",
    "checkpoint": "CHECKPOINT",
    "graph write": "MATCH (p:Person) SET p.name = 'changed'",
    "extension load": "LOAD EXTENSION '{library}'",
    "attach": "ATTACH '{other}' AS other (dbtype lbug)",
}
"""One hostile input per class, as Cypher (the gate, word check, plan and session read Cypher)."""
WALLS = ("gate", "word check", "plan", "session", "os wall")
CODE = "code inside the query process"
HOLDS = {
    "gate": dict.fromkeys(CLASSES, True) | {CODE: False},
    "word check": dict.fromkeys(CLASSES, True) | {"graph write": False, CODE: False},
    "plan": dict.fromkeys(CLASSES, True) | {CODE: False},
    "session": dict.fromkeys(CLASSES, True) | {"file read behind a read clause": False, CODE: False},
    "os wall": dict.fromkeys(CLASSES, True) | {CODE: True},
}
"""What each wall holds with every other wall taken away (measured below; docs/security.md shows it)."""

_ALONE = r"""
import json, os, sys, time
from pathlib import Path
import ladybug
from t2c_lib.graph import ladybug_worker as w
wall, db_path, queries, outside = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
w.load_native()
status = w.wall_in(db_path.resolve(), wall == "os wall")
db = ladybug.Database(str(db_path), read_only=wall in ("session", "os wall"), max_num_threads=1,
                      buffer_pool_size=64 << 20, auto_checkpoint=False, max_db_size=1 << 30)
conn = ladybug.Connection(db, num_threads=1)
report = {}
for title, text in queries.items():
    try:
        if wall == "word check" and w.file_or_code_word(text):
            raise w._Failure("unsafe", "word check")
        if wall == "session" and w.session_problem(text):
            raise w._Failure("unsafe", "session")
        if wall == "plan":
            statement, verdict = w.plan_of(conn, text, time.perf_counter() + 10, word_check=False)
            if not verdict.ok:
                raise w._Failure("unsafe", verdict.refused)
            text = statement
        result = conn.execute(text)
        report[title] = {"ran": True, "out": json.dumps(result.get_all(), default=str)}
    except (RuntimeError, w._Failure) as exc:
        report[title] = {"ran": False, "out": str(exc)}
probes = {"stat": lambda: os.stat(outside), "chmod": lambda: os.chmod(str(db_path), 0o600), "fork": os.fork}
code = []
for name, action in probes.items():
    try:
        if action() == 0:
            os._exit(0)
        code.append(name)
    except OSError:
        pass
report["code"] = code
print(json.dumps(report))
"""


def _library(tmp_path: Path) -> Path | None:
    """A shared library whose constructor announces itself on stderr, or None without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source = tmp_path / "ctor.c"
    source.write_text(
        '#include <unistd.h>\n__attribute__((constructor)) static void ran(void) { write(2, "T2C-CTOR-RAN\\n", 13); }\n',
        encoding="utf-8",
    )
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(tmp_path / "db" / "ctor.so"), str(source)], check=True)
    return tmp_path / "db" / "ctor.so"


def _held(title: str, cell: dict, err: str, db_dir: Path, out: Path) -> bool:
    """A class is held when its statement did not run to an effect: no secret came back, no file, folder,
    checkpoint file or graph change appeared, and no library code ran."""
    effects = {
        "file read": SECRET in cell["out"],
        "file read behind a read clause": SECRET in cell["out"],
        "file write": (out / "copied.csv").exists(),
        "database export": (out / "exported").exists(),
        "checkpoint": cell["ran"] or any(p.suffix in (".wal", ".shadow") for p in db_dir.iterdir()),
        "graph write": cell["ran"],
        "extension load": "T2C-CTOR-RAN" in err,
        "attach": cell["ran"],
    }
    return not effects[title]


def _measure_alone(wall: str, db_copy: Path, tmp_path: Path) -> dict[str, bool]:
    out, secret = tmp_path / "out", tmp_path / "secret.txt"
    out.mkdir()
    library = _library(tmp_path)
    other = tmp_path / "other.lbdb"
    shutil.copy(db_copy, other)
    values = {"secret": secret, "out": out, "library": library or "/nonexistent.so", "other": other}
    cells: dict[str, bool] = {}
    for title, template in CLASSES.items():  # one process per class: each effect is seen on its own
        text = template.format(**values)
        if wall == "gate":
            try:
                admit(text)
                cells[title] = False
            except UnsafeQuery:
                cells[title] = True
            continue
        done = subprocess.run(
            [sys.executable, "-c", _ALONE, wall, str(db_copy), json.dumps({title: text}), str(secret)],
            capture_output=True, text=True, timeout=120, cwd=db_copy.parent,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        report = json.loads(done.stdout)
        cells[title] = _held(title, report[title], done.stderr, db_copy.parent, out)
        cells[CODE] = report["code"] == []
    if wall == "gate":
        cells[CODE] = False  # the gate reads texts; code already running inside the process never meets it
    if library is None:
        cells.pop("extension load")
    return cells


@pytest.mark.parametrize("wall", [*WALLS, "no wall"])
def test_what_each_wall_holds_alone(wall: str, db_copy, tmp_path) -> None:
    """Each row with every other wall taken away; "no wall" shows every input acts when nothing stands in front."""
    if wall == "os wall" and landlock_abi() < 1:
        pytest.skip("this kernel has no Landlock")
    cells = _measure_alone(wall, db_copy, tmp_path)
    holds = HOLDS.get(wall, dict.fromkeys([*CLASSES, CODE], False))
    assert cells == {k: v for k, v in holds.items() if k in cells}


def test_the_security_doc_shows_the_measured_table() -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    header = "| wall alone | " + " | ".join([*CLASSES, CODE]) + " |"
    assert header in text
    for wall in WALLS:
        row = f"| {wall} | " + " | ".join("holds" if HOLDS[wall][c] else "**no**" for c in [*CLASSES, CODE]) + " |"
        assert row in text, row


@pytest.mark.parametrize("name", ["kurikulum", "movies"])
def test_every_gold_query_and_example_starts_with_a_read_clause(name: str) -> None:
    """The session and the plan wall refuse no gold query or few-shot example, before or after the gate's rewrite."""
    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph.ladybug_plan import statement_kind_problem

    dataset = load_dataset(name)
    texts = [q.cypher for q in dataset.questions] + [e.cypher for e in dataset.examples]
    refused = [t for t in texts if statement_kind_problem(t) or statement_kind_problem(admit(t))]
    assert refused == [] and len(texts) > 50
