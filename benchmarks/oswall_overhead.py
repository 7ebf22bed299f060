"""Cost of the operating-system wall (graph/oswall.py) on the embedded store, side by side in one run.

Two stores over the same database, one query process walled in (the default) and one not
(`T2C_OS_WALL=0`, the walls before issue 36); the curriculum gold queries go through
`LadybugStore.query` (gate included) alternately to both, so drift hits both alike. Also: query
process start time both ways, the build (`load`) both ways, and the worker's word check alone.

Usage: python benchmarks/oswall_overhead.py [dataset] [repeats] [starts]
       python benchmarks/oswall_overhead.py --gate-disabled [dataset]   (what the wall alone stops)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import BUFFER_POOL_BYTES, LadybugStore
from t2c_lib.graph.ladybug_process import QueryProcess
from t2c_lib.graph.ladybug_words import file_or_code_word
from t2c_lib.graph.oswall import ENV_SWITCH


@contextmanager
def wall(on: bool):
    """`T2C_OS_WALL` set for what starts inside (a query process reads it when it starts)."""
    before = os.environ.get(ENV_SWITCH)
    os.environ[ENV_SWITCH] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV_SWITCH, None)
        else:
            os.environ[ENV_SWITCH] = before


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:8.2f} ms  (min {min(values) * 1000:.2f}, max {max(values) * 1000:.2f})"


def main(dataset_name: str = "kurikulum", repeats: int = 5, starts: int = 10) -> None:
    dataset = load_dataset(dataset_name)
    with tempfile.TemporaryDirectory() as root:
        loads: dict[bool, list[float]] = {True: [], False: []}
        store = LadybugStore(dataset, root=Path(root) / "a", auto_load=False)
        for _ in range(3):
            for on in (True, False):
                with wall(on):
                    started = time.perf_counter()
                    store.load(dataset)
                    loads[on].append(time.perf_counter() - started)
        store.close()

        starts_s: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(starts):
            for on in (True, False):
                started = time.perf_counter()
                process = QueryProcess(store.db_path, BUFFER_POOL_BYTES // 4, 2 << 30, os_wall=on)
                starts_s[on].append(time.perf_counter() - started)
                process.close()

        stores = {}
        for on in (True, False):
            with wall(on):
                stores[on] = LadybugStore(dataset, root=Path(root) / "a", auto_load=False)
                print(f"wall {'on ' if on else 'off'}: {stores[on].os_wall.describe()}")
        per_query: dict[bool, list[float]] = {True: [], False: []}
        same = 0
        for item in dataset.questions:
            answers = {on: stores[on].query(item.cypher).rows for on in (True, False)}  # warm, and compare
            same += answers[True] == answers[False]
            samples: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(repeats):
                for on in (True, False):
                    started = time.perf_counter()
                    stores[on].query(item.cypher)
                    samples[on].append(time.perf_counter() - started)
            for on in (True, False):
                per_query[on].append(statistics.median(samples[on]))
        for s in stores.values():
            s.close()

    words = []
    for item in dataset.questions:
        started = time.perf_counter()
        assert file_or_code_word(item.cypher) is None, item.id
        words.append(time.perf_counter() - started)

    n = len(dataset.questions)
    print(
        f"dataset {dataset.name}: {n} gold queries, {repeats} timed runs each (median per query), same answers {same}/{n}"
    )
    print(f"gold query, wall on   {ms(per_query[True])}")
    print(f"gold query, wall off  {ms(per_query[False])}")
    diffs = [a - b for a, b in zip(per_query[True], per_query[False], strict=True)]
    print(f"per-query difference (on - off): median {statistics.median(diffs) * 1000:+.3f} ms")
    print(f"worker start, wall on   {ms(starts_s[True])}  over {starts}")
    print(f"worker start, wall off  {ms(starts_s[False])}  over {starts}")
    print(f"load (builder), wall on   {ms(loads[True])}")
    print(f"load (builder), wall off  {ms(loads[False])}")
    print(f"word check alone (per gold query): {ms(words)}")


_RAW = r"""
import json, sys
from pathlib import Path
import ladybug
from t2c_lib.graph.ladybug_worker import load_native, wall_in
db_path, wall_on, queries = Path(sys.argv[1]), sys.argv[2] == "1", json.loads(sys.argv[3])
load_native()
wall_in(db_path.resolve(), wall_on)
db = ladybug.Database(str(db_path), read_only=True, max_num_threads=1, buffer_pool_size=64 << 20,
                      auto_checkpoint=False, max_db_size=1 << 30)
conn = ladybug.Connection(db, num_threads=1)
for title, text in queries.items():
    try:
        rows = conn.execute(text).get_all()
        print(json.dumps([title, "answered: " + str(rows)[:60]]), flush=True)
    except RuntimeError as exc:
        print(json.dumps([title, "error: " + " | ".join(str(exc).splitlines())[-150:]]), flush=True)
"""


def gate_disabled(dataset_name: str = "kurikulum") -> None:
    """File read, file write and extension load on a raw connection (no gate, word check or plan wall), wall on and off."""
    dataset = load_dataset(dataset_name)
    with tempfile.TemporaryDirectory() as root:
        base = Path(root)
        store = LadybugStore(dataset, root=base / "s")
        db_path = store.db_path
        store.close()
        (base / "secret.txt").write_text("t2c-secret:x:0:0\n", encoding="utf-8")
        (base / "out").mkdir()
        library = base / "evil.so"
        source = base / "evil.c"
        source.write_text(
            '#include <unistd.h>\n__attribute__((constructor)) static void f(void) { write(1, "[\\"CONSTRUCTOR RAN\\", \\"\\"]\\n", 24); }\n'
        )
        built = (
            subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], capture_output=True).returncode
            == 0
        )
        shutil.copy(library, db_path.parent / "evil.so") if built else None
        queries = {
            "file read (/etc/passwd)": "LOAD FROM '/etc/passwd' (file_format='csv', header=false, delim=':') RETURN *",
            "file read (a secret)": f"LOAD FROM '{base}/secret.txt' (file_format='csv', header=false, delim=':') RETURN *",
            "file read (/proc/self/environ)": "LOAD FROM '/proc/self/environ' (file_format='csv', header=false) RETURN *",
            "file write": f"COPY (RETURN 1) TO '{base}/out/x.csv'",
            "file write (db folder)": f"COPY (RETURN 1) TO '{db_path.parent}/x.csv'",
            "extension load (readable .so)": f"LOAD EXTENSION '{db_path.parent}/evil.so'",
            "extension install": "INSTALL json",
        }
        for on in (False, True):
            done = subprocess.run(
                [sys.executable, "-c", _RAW, str(db_path), "1" if on else "0", json.dumps(queries)],
                capture_output=True, text=True, cwd=db_path.parent,
            )  # fmt: skip
            print(f"gate disabled, raw connection, wall {'on' if on else 'off'}:")
            for line in done.stdout.splitlines():
                title, outcome = json.loads(line)
                print(f"  {title:<32} {outcome}")
            written = sorted(p.name for p in (base / "out").iterdir()) + sorted(
                p.name for p in db_path.parent.iterdir() if p.suffix == ".csv"
            )
            print(f"  files written: {written or 'none'}")
            for p in [*(base / "out").iterdir(), *db_path.parent.glob("*.csv")]:
                p.unlink()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--gate-disabled"]:
        gate_disabled(*sys.argv[2:3])
        sys.exit(0)
    main(*(sys.argv[1:2] or ["kurikulum"]), *(int(a) for a in sys.argv[2:4]))
