"""The operating-system wall around the embedded store (issue 36): it holds with the gate disabled.

Real LadybugDB, real processes. The query process is called directly (`QueryProcess.call`, the
gate's `admit` skipped); the wall alone is shown by a raw LadybugDB connection in a child process
that walls itself in exactly as the query process does and then runs file reads, writes and an
extension load with no other wall in front. The same script without the wall shows each of them
would have worked, so the test proves the wall, not a database quirk.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from t2c_lib.datasets import NodeRow, RelRow, RelSpec, SchemaSpec
from t2c_lib.graph.base import QueryError, StoreUnavailable, UnsafeQuery
from t2c_lib.graph.ladybug import LadybugStore, quote_name, store_dir_name
from t2c_lib.graph.ladybug_words import file_or_code_word, withheld_reason
from t2c_lib.graph.oswall import landlock_abi, seccomp_program
from t2c_lib.schema import PropType

SECRET = "t2c-oswall-secret-9931"
needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="this kernel has no Landlock")


@pytest.fixture()
def sandbox(tmp_path: Path) -> dict[str, Path]:
    secret = tmp_path / "secret.csv"
    secret.write_text(f"{SECRET}:x:0:0\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    return {"secret": secret, "out": out}


def _call(store: LadybugStore, text: str, word_check: bool = True) -> dict:
    """The query process with the gate skipped (never `store.query`)."""
    request = {"op": "run", "text": text, "max_rows": 100, "max_bytes": 1 << 20, "word_check": word_check}
    return store._worker().call(request, time.perf_counter(), 10.0)


def _hostile_queries(sandbox: dict[str, Path]) -> dict[str, str]:
    secret, out = sandbox["secret"], sandbox["out"]
    return {
        "read /etc/passwd": "LOAD FROM '/etc/passwd' (file_format='csv', header=false, delim=':') RETURN *",
        "read a secret": f"LOAD FROM '{secret}' (file_format='csv', header=false, delim=':') RETURN *",
        "read via the issue's alias": (
            f"UNWIND [1] AS LOAD WITH * LOAD FROM '{secret}' (file_format='csv', header=false, delim=':') "
            f"WITH * LOAD FROM '{secret}' (file_format='csv', header=false, delim=':') RETURN *"
        ),
        "write a file": f"COPY (RETURN 1) TO '{out}/x.csv'",
        "write the graph": f"COPY (MATCH (m:MK) RETURN m.nama) TO '{out}/mk.csv'",
        "load an extension": f"LOAD EXTENSION '{out}/lib.so'",
        "install an extension": "INSTALL json",
    }


# --- the wall holds in the query process ------------------------------------------------------


@needs_landlock
def test_the_query_process_reports_its_walls(kurikulum_store: LadybugStore) -> None:
    wall = kurikulum_store.os_wall
    assert wall.complete, wall.describe()
    assert wall.landlock_abi == landlock_abi()
    assert "fs" in wall.landlock and wall.seccomp and wall.capabilities_dropped
    if wall.landlock_abi >= 4:
        assert "net" in wall.landlock


@pytest.mark.parametrize("word_check", [True, False], ids=["word check on", "word check off"])
def test_with_the_gate_disabled_no_file_is_read_written_or_loaded(
    kurikulum_store: LadybugStore, sandbox, word_check: bool
) -> None:
    (sandbox["out"] / "lib.so").write_bytes(b"not a library")
    for title, text in _hostile_queries(sandbox).items():
        with pytest.raises(QueryError) as caught:
            _call(kurikulum_store, text, word_check)
        message = str(caught.value)
        assert SECRET not in message and "root:" not in message and "/bin/" not in message, (title, message)
    assert sorted(p.name for p in sandbox["out"].iterdir()) == ["lib.so"], "a file was written"
    assert _call(kurikulum_store, "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks")["rows"] == [[3]]


def test_a_huge_error_message_is_cut_in_the_process(kurikulum_store: LadybugStore) -> None:
    with pytest.raises(QueryError) as caught:
        _call(kurikulum_store, "RETURN CAST(lpad('', 20000000, 'a') AS INT64)")
    assert len(str(caught.value)) < 5000
    assert _call(kurikulum_store, "RETURN 1")["rows"] == [[1]]


def test_a_compile_message_is_passed_on_only_for_a_read(kurikulum_store: LadybugStore) -> None:
    with pytest.raises(QueryError) as plain:
        _call(kurikulum_store, "MATCH (m:MK) RETURN m.no_such_property")
    assert plain.value.kind == "semantic" and "no_such_property" in str(plain.value)
    with pytest.raises(UnsafeQuery, match="withheld") as write:  # a write behind a read clause, on a missing table
        _call(kurikulum_store, "MATCH (m:`NoTable`) SET m.x = 1", word_check=False)
    assert "NoTable" not in str(write.value)


# --- the wall alone: a raw connection, no gate, no word check, no plan wall ------------------------

_RAW = r"""
import json, sys
from pathlib import Path
import ladybug
from t2c_lib.graph.ladybug_worker import load_native, wall_in
db_path, wall_on, queries = Path(sys.argv[1]), sys.argv[2] == "1", json.loads(sys.argv[3])
load_native()
wall = wall_in(db_path.resolve(), wall_on)
db = ladybug.Database(str(db_path), read_only=True, max_num_threads=1, buffer_pool_size=64 << 20,
                      auto_checkpoint=False, max_db_size=1 << 30)
conn = ladybug.Connection(db, num_threads=1)
report = {"wall": wall.as_dict()}
for title, text in queries.items():
    try:
        result = conn.execute(text)
        report[title] = {"rows": [[str(v) for v in row] for row in result.get_all()]}
    except RuntimeError as exc:
        report[title] = {"error": str(exc)[:2000]}
print(json.dumps(report))
"""


_NOT_THERE = ("Permission denied", "No file found", "No such file", "Read-only file system")


def _raw(db_path: Path, wall_on: bool, queries: dict[str, str]) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-c", _RAW, str(db_path), "1" if wall_on else "0", json.dumps(queries)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=db_path.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout), done.stderr


@pytest.fixture()
def constructor_library(tmp_path: Path) -> Path:
    """A shared library whose constructor announces itself on stderr (the issue's evil.so, harmless)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the test library")
    source = tmp_path / "evil.c"
    source.write_text(
        '#include <unistd.h>\n__attribute__((constructor)) static void ran(void) { write(2, "T2C-CTOR-RAN\\n", 13); }\n',
        encoding="utf-8",
    )
    library = tmp_path / "evil.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(source)], check=True, timeout=60)
    return library


@needs_landlock
def test_the_wall_alone_stops_file_read_write_and_extension_load(
    kurikulum_store: LadybugStore, sandbox, constructor_library: Path, tmp_path: Path
) -> None:
    db_dir = tmp_path / "db"
    shutil.copytree(kurikulum_store.version_dir, db_dir)
    db_path = db_dir / kurikulum_store.db_path.name
    lib_in_db = db_dir / "evil.so"  # readable under the wall: only the seccomp filter stops its mapping
    shutil.copy(constructor_library, lib_in_db)
    queries = {
        "read": f"LOAD FROM '{sandbox['secret']}' (file_format='csv', header=false, delim=':') RETURN *",
        "read relative": "LOAD FROM '../secret.csv' (file_format='csv', header=false, delim=':') RETURN *",
        "write": f"COPY (RETURN 'x') TO '{sandbox['out']}/o.csv'",
        "write beside the database": f"COPY (RETURN 'x') TO '{db_dir}/o.csv'",
        "extension": f"LOAD EXTENSION '{lib_in_db}'",
        "read query": "MATCH (m:MK) WHERE m.sks >= 3 RETURN m.nama, m.sks ORDER BY m.nama LIMIT 5",
        "aggregate": "MATCH (m:MK)-[:PREREQUISITE]->(n:MK) RETURN count(*), max(n.semester)",
        "schema": "CALL show_tables() RETURN name, type",
        "table info": "CALL table_info('MK') RETURN name, type",
        "connection": "CALL show_connection('PREREQUISITE') RETURN *",
    }
    assert sandbox["secret"] == db_dir.parent / "secret.csv"  # what '../secret.csv' names from the db folder

    open_, open_err = _raw(db_path, False, queries)  # without the wall each attack works
    assert SECRET in json.dumps(open_["read"]) and SECRET in json.dumps(open_["read relative"])
    assert (sandbox["out"] / "o.csv").exists() and (db_dir / "o.csv").exists()
    assert "T2C-CTOR-RAN" in open_err
    (sandbox["out"] / "o.csv").unlink()
    (db_dir / "o.csv").unlink()

    walled, walled_err = _raw(db_path, True, queries)
    assert walled["wall"]["seccomp"] and "fs" in walled["wall"]["landlock"]
    for title in ("read", "read relative", "write", "write beside the database", "extension"):
        assert "error" in walled[title], (title, walled[title])
        assert SECRET not in json.dumps(walled[title])
    for title in ("read", "write"):  # outside the private view the file does not exist; inside, Landlock refuses
        assert any(w in walled[title]["error"] for w in _NOT_THERE), walled[title]
    assert "T2C-CTOR-RAN" not in walled_err, "the library's constructor ran"
    assert not (sandbox["out"] / "o.csv").exists() and not (db_dir / "o.csv").exists()
    for title in ("read query", "aggregate", "schema", "table info", "connection"):
        assert walled[title] == open_[title] and walled[title]["rows"], title


@pytest.mark.skipif(seccomp_program("x86_64") is None, reason="no filter")
def test_the_seccomp_filter_is_well_formed() -> None:
    for machine in ("x86_64", "aarch64"):
        program = seccomp_program(machine)
        assert program is not None and len(program) % 8 == 0 and len(program) // 8 < 4096
    assert seccomp_program("sparc") is None


ROUND4_CALLS = {
    "shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semctl",
    "semtimedop", "keyctl", "add_key", "request_key", "fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat",
    "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "setxattrat", "removexattrat", "prlimit64", "inotify_init1", "inotify_add_watch", "fanotify_init",
    "fanotify_mark", "clone", "clone3", "setsid", "setpgid", "unshare", "setns",
}  # fmt: skip
"""The calls the fourth round's probe made from inside the walled process (issue 55 item 2)."""


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_covers_every_call_of_the_fourth_round(machine: str) -> None:
    from t2c_lib.graph.oswall_syscalls import ARCHES

    numbers = ARCHES[machine][1]
    assert ROUND4_CALLS <= set(numbers), ROUND4_CALLS - set(numbers)
    if machine == "x86_64":
        assert {"chmod", "chown", "lchown", "utime", "utimes", "futimesat", "inotify_init", "fork", "vfork"} <= set(
            numbers
        )
    assert len(set(numbers.values())) == len(numbers), "two calls share a number"


def test_the_builder_is_walled_the_same_way_and_ignores_pythonpath(tiny_dataset, tmp_path, monkeypatch) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "sitecustomize-ran"
    (planted / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(planted))
    store = LadybugStore(tiny_dataset, root=tmp_path / "cache")
    try:
        assert store.query("MATCH (p:Person) RETURN count(p)").rows == [[2]]
    finally:
        store.close()
    assert not marker.exists(), "a sitecustomize from PYTHONPATH ran inside the builder or the query process"
    if landlock_abi() >= 1:
        assert store.build_wall is not None and store.build_wall.complete
        assert store.build_wall.view and store.build_wall.keyring


# --- the dataset is hostile input ----------------------------------------------------------------


def _hostile_dataset(base, out: Path, label_file: str = "label_csv"):
    """The issue's property and label: DDL that would write a file and load a library if not escaped."""
    evil = (
        f"a` STRING, PRIMARY KEY(`_key`)); COPY (RETURN 'x') TO '{out}/o.csv'; "
        f"LOAD EXTENSION '{out}/evil.so'; CREATE NODE TABLE `zz`(`_key` STRING, `b"
    )
    label = f"L`(`_key` STRING, PRIMARY KEY(`_key`)); COPY (RETURN 'y') TO '{out}/{label_file}'; //"
    nodes = {label: {evil: PropType.STRING, "n": PropType.INTEGER}}
    rels = {
        "R`; COPY (RETURN 1) TO 'r_csv'; //": RelSpec(endpoints=((label, label),), properties={evil: PropType.STRING})
    }
    return dataclasses.replace(
        base,
        name="../../escape",
        schema_spec=SchemaSpec(nodes=nodes, rels=rels),
        nodes={label: [NodeRow("1", {evil: "v1", "n": 1}), NodeRow("2", {evil: "v2", "n": 2})]},
        rels={next(iter(rels)): [RelRow(label, "1", label, "2", {evil: "e"})]},
        hash="f" * 64,
    )


def test_a_hostile_dataset_writes_no_file_and_stays_in_its_cache(tiny_dataset, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    dataset = _hostile_dataset(tiny_dataset, out)
    cache = tmp_path / "cache"
    store = LadybugStore(dataset, root=cache)
    try:
        assert store.root.parent == cache and store.root.resolve().is_relative_to(cache.resolve())
        assert list(out.iterdir()) == [], "the dataset's DDL wrote a file"
        assert not (store.version_dir / "r_csv").exists()
        label = next(iter(dataset.schema_spec.nodes))
        assert store.counts() == {label: 2, next(iter(dataset.schema_spec.rels)): 1}
        assert store.schema().labels == [label]
        if landlock_abi() >= 1:
            assert store.build_wall is not None and store.build_wall.complete, store.build_wall
    finally:
        store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "out"]


def test_a_hostile_label_the_database_cannot_take_fails_cleanly(tiny_dataset, tmp_path: Path) -> None:
    """A dot in a label reads as `<database>.<table>` even when escaped: the load fails, nothing is written."""
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(StoreUnavailable, match="could not be loaded"):
        LadybugStore(_hostile_dataset(tiny_dataset, out, label_file="label.csv"), root=tmp_path / "cache")
    assert list(out.iterdir()) == []
    assert [p.name for p in (tmp_path / "cache").iterdir()] != [] and all(
        p.is_relative_to(tmp_path / "cache") for p in (tmp_path / "cache").rglob("*")
    )


def test_a_dataset_statement_never_runs_two_statements(tiny_dataset, tmp_path: Path) -> None:
    from t2c_lib.graph.ladybug_builder import build

    out = tmp_path / "out"
    out.mkdir()
    staging = tmp_path / "staging"
    staging.mkdir()
    text = f"CREATE NODE TABLE A(k STRING, PRIMARY KEY(k)); COPY (RETURN 1) TO '{out}/o.csv'"
    with pytest.raises(StoreUnavailable, match="more than one statement"):
        build(staging / "g.lbdb", [(text, None)], 64 << 20, 1 << 30, True)
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("name", ["../..", "..", "a/b", ".hidden", "x y", "/abs", "-rf", "", "é", "a" * 300])
def test_a_dataset_name_is_one_safe_path_component(tiny_dataset, name: str) -> None:
    component = store_dir_name(dataclasses.replace(tiny_dataset, name=name), variant="../v")
    assert "/" not in component and not component.startswith(".") and ".." not in component.split("-")[0]
    assert component == store_dir_name(dataclasses.replace(tiny_dataset, name=name), variant="../v")
    assert store_dir_name(tiny_dataset) == f"{tiny_dataset.name}-{store_dir_name(tiny_dataset).rsplit('-', 1)[1]}"


def test_names_are_escaped() -> None:
    assert quote_name("a`b") == "`a``b`"
    assert quote_name("plain") == "`plain`"


# --- the word check reads tokens, not text ---------------------------------------------------------


@pytest.mark.parametrize(
    "text, word",
    [
        ("UNWIND [1] AS LOAD WITH * LOAD FROM '/etc/passwd' (header=false) RETURN *", "LOAD FROM"),
        ("load from '/etc/passwd' return *", "LOAD FROM"),
        ("LOAD WITH HEADERS (a STRING) FROM 'f.csv' RETURN *", "LOAD WITH"),
        ("LOAD EXTENSION '/tmp/evil.so'", "LOAD EXTENSION"),
        ("INSTALL json", "INSTALL"),
        ("COPY (RETURN 1) TO '/tmp/x.csv'", "COPY"),
        ("COPY MK FROM 'x.csv'", "COPY"),
        ("EXPORT DATABASE '/tmp/d'", "EXPORT DATABASE"),
        ("IMPORT DATABASE '/tmp/d'", "IMPORT DATABASE"),
        ("ATTACH '/tmp/other.lbdb' AS o (dbtype lbug)", "ATTACH"),
        ("USE o", "USE"),
        ("UPDATE json", "UPDATE"),
        ("MATCH (n) RETURN n /* */ ; LOAD FROM 'x' RETURN *", "LOAD FROM"),
        ("RETURN 1 \u00a0", None),
    ],
)
def test_file_and_code_words_are_found_on_tokens(text: str, word: str | None) -> None:
    assert file_or_code_word(text) == word


@pytest.mark.parametrize(
    "text",
    [
        "RETURN 'LOAD FROM /etc/passwd'",
        "MATCH (m:MK) WHERE m.nama = 'COPY TO' RETURN m",
        "UNWIND [1] AS load RETURN load",
        "UNWIND [1] AS copy RETURN copy",
        "MATCH (a)-[:TO]->(b) RETURN a.copy, b.load",
        "MATCH (n) // LOAD FROM '/etc/passwd'\nRETURN n",
        "RETURN `LOAD` AS x",
    ],
)
def test_reads_that_only_mention_the_words_pass(text: str) -> None:
    assert file_or_code_word(text) is None


@pytest.mark.parametrize("name", ["kurikulum", "movies"])
def test_the_word_check_refuses_no_gold_query_or_example(name: str) -> None:
    from t2c_lib.cypher.gate import admit
    from t2c_lib.datasets import load_dataset

    dataset = load_dataset(name)
    texts = [q.cypher for q in dataset.questions] + [e.cypher for e in dataset.examples]
    refused = [t for t in texts if file_or_code_word(t) is not None or file_or_code_word(admit(t)) is not None]
    assert refused == [] and len(texts) > 50


def test_withheld_reason_spots_non_reads_only() -> None:
    assert withheld_reason("MATCH (m:MK) RETURN m.x") is None
    assert withheld_reason("CALL table_info('MK') RETURN *") is None
    assert withheld_reason("CALL current_setting('home_directory') RETURN *") is not None
    assert withheld_reason("MATCH (m) SET m.x = 1") is not None
    assert withheld_reason("MATCH (a)-[:SET]->(b) RETURN a") is None


def test_the_gold_queries_answer_the_same_with_and_without_the_wall(kurikulum, kurikulum_store, monkeypatch) -> None:
    walled = [kurikulum_store.query(item.cypher).rows for item in kurikulum.questions]
    monkeypatch.setenv("T2C_OS_WALL", "0")
    plain_store = LadybugStore(kurikulum, root=kurikulum_store.root.parent, auto_load=False)
    try:
        assert plain_store.os_wall.landlock == () and not plain_store.os_wall.seccomp
        plain = [plain_store.query(item.cypher).rows for item in kurikulum.questions]
    finally:
        plain_store.close()
    assert walled == plain


def test_an_incomplete_wall_is_said_once(caplog) -> None:
    from t2c_lib.graph import ladybug_process
    from t2c_lib.graph.oswall import WallStatus

    missing = WallStatus(problems=("Landlock unavailable in this kernel (test)",))
    with caplog.at_level("WARNING", logger="t2c_lib.graph.ladybug_process"):
        ladybug_process.report_wall(missing)
        ladybug_process.report_wall(missing)
        ladybug_process.report_wall(WallStatus(7, ("fs", "net", "scope"), True, view=True))
    assert [r.getMessage().count("Landlock unavailable") for r in caplog.records] == [1]


_NO_LANDLOCK = r"""
import json, sys, time
from pathlib import Path
from t2c_lib.graph import oswall
libc = oswall._libc()
# a kernel without Landlock, as far as this process and its children can tell: its calls say ENOSYS
program = b"".join([
    oswall._bpf(0x20, 0),               # load the call number
    oswall._bpf(0x35, 444, 0, 2),       # below landlock_create_ruleset: allow
    oswall._bpf(0x25, 446, 1, 0),       # above landlock_restrict_self: allow
    oswall._bpf(0x06, 0x00050000 | 38), # ENOSYS
    oswall._bpf(0x06, 0x7FFF0000),
])
buf = oswall.ctypes.create_string_buffer(program, len(program))
class Prog(oswall.ctypes.Structure):
    _fields_ = [("len", oswall.ctypes.c_ushort), ("filter", oswall.ctypes.c_void_p)]
prog = Prog(len(program) // 8, oswall.ctypes.addressof(buf))
assert oswall._prctl(libc, 38, 1) == 0 and oswall._prctl(libc, 22, 2, oswall.ctypes.addressof(prog)) == 0
assert oswall.landlock_abi() == 0
from t2c_lib.graph.ladybug_process import QueryProcess
process = QueryProcess(Path(sys.argv[1]), 64 << 20, 2 << 30, os_wall=True)
again = QueryProcess(Path(sys.argv[1]), 64 << 20, 2 << 30, os_wall=True)
reply = process.call({"op": "run", "text": "MATCH (m:MK) RETURN count(m)", "max_rows": 10, "max_bytes": 1 << 20},
                     time.perf_counter(), 10.0)
print(json.dumps({"wall": process.wall.as_dict(), "rows": reply["rows"]}))
process.close(); again.close()
"""


def test_without_landlock_the_store_still_answers_and_says_so_once(kurikulum_store: LadybugStore) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NO_LANDLOCK, str(kurikulum_store.db_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["rows"] == [[63]]
    assert report["wall"]["landlock_abi"] == 0 and report["wall"]["landlock"] == []
    assert report["wall"]["seccomp"] is True  # the filter still refuses code mappings, exec and sockets
    assert done.stderr.count("operating-system wall around its query process is incomplete") == 1, done.stderr
    assert "Landlock unavailable" in done.stderr


_NO_NAMESPACES = r"""
import json, sys, time
from pathlib import Path
from t2c_lib.graph import oswall
libc = oswall._libc()
# a machine that gives no namespace to this process and its children (a container's filter): unshare says EPERM
program = b"".join([
    oswall._bpf(0x20, 0),               # load the call number
    oswall._bpf(0x15, 272, 0, 1),       # unshare (x86_64)
    oswall._bpf(0x06, 0x00050000 | 1),  # EPERM
    oswall._bpf(0x06, 0x7FFF0000),
])
buf = oswall.ctypes.create_string_buffer(program, len(program))
class Prog(oswall.ctypes.Structure):
    _fields_ = [("len", oswall.ctypes.c_ushort), ("filter", oswall.ctypes.c_void_p)]
prog = Prog(len(program) // 8, oswall.ctypes.addressof(buf))
assert oswall._prctl(libc, 38, 1) == 0 and oswall._prctl(libc, 22, 2, oswall.ctypes.addressof(prog)) == 0
from t2c_lib.graph.ladybug_process import QueryProcess
process = QueryProcess(Path(sys.argv[1]), 64 << 20, 2 << 30, os_wall=True)
reply = process.call({"op": "run", "text": "MATCH (m:MK) RETURN count(m)", "max_rows": 10, "max_bytes": 1 << 20},
                     time.perf_counter(), 10.0)
print(json.dumps({"wall": process.wall.as_dict(), "complete": process.wall.complete, "rows": reply["rows"]}))
process.close()
"""


@needs_landlock
@pytest.mark.skipif(platform.machine() != "x86_64", reason="the stand-in filter knows x86_64's unshare number")
def test_without_namespaces_the_view_is_missing_said_and_the_rest_holds(kurikulum_store: LadybugStore) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NO_NAMESPACES, str(kurikulum_store.db_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["rows"] == [[63]] and report["complete"] is False
    assert report["wall"]["view"] is False and report["wall"]["seccomp"] and "fs" in report["wall"]["landlock"]
    assert "no private file-system view" in done.stderr and "stat" in done.stderr
