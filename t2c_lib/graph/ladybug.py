"""The embedded store: LadybugDB (PyPI `ladybug`, the maintained fork of Kuzu), no server.

Each dataset version gets its own database file under `.cache/ladybug/<dataset>-<folder>/<hash>/`
(`<folder>`: a short hash of the dataset's directory, so a same-named dataset elsewhere never
replaces it; `<hash>`: the dataset's content),
built from scratch by `load()` (so reloading can never duplicate anything).

Every query, generated, typed, gold or scored, passes these walls before and while it runs:

1. the gate (`cypher/gate.py`): length and nesting limits, the read-only rules over the
   database's own tokens, the Neo4j-dialect rewrite and the same rules again on its output;
   nothing that touches files or loads code reaches the database at all;
2. the database runs in a child process of its own (`ladybug_worker.py`), watched by the
   parent (`ladybug_process.py`): killed past the time limit (parse, plan, execute and fetch
   together) or over its memory budget, so a runaway query cannot take the user's process
   or machine down;
3. there a statement that does not start with a read clause is refused before it is bound or
   planned (EXPLAIN itself can act: `EXPLAIN EXPORT DATABASE` creates folders), the text is
   prepared as one statement, and the physical plan `EXPLAIN` prints must hold only read
   operators and schema table functions (`ladybug_plan.read_plan`);
4. the database is opened `read_only=True`, one thread, a bounded buffer pool and no
   automatic checkpoints, and its connection runs queries only (a read-only database still lets
   CHECKPOINT write files); a database that no longer opens read-only is rebuilt from the dataset;
5. the result is bounded: over `max_rows` rows it is refused before a row is fetched, and
   fetching stops past the byte budget (`T2C_MAX_RESULT_BYTES`); error messages are cut to a
   byte budget in the process and cleaned of anything that looks like the environment
   (`graph/messages.py`);
6. the operating-system wall (`graph/oswall.py`: a private file-system view, Landlock and seccomp;
   `os_wall` says which parts hold): only the database's folder and the libraries exist for the
   query process, read-only; it writes nothing, opens no socket, runs nothing, maps no code and
   starts no process, so even a query every other wall misread cannot touch a file. File and
   extension words are refused again inside it before the database binds the text
   (`ladybug_words.py`).

The dataset is hostile input too: `load()` escapes every name, sends one statement per call
with every value a parameter, and runs them in a builder process walled in to its staging
folder (`ladybug_builder.py`); a dataset name never leaves the cache (`store_dir_name`).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from t2c_lib import config
from t2c_lib.cypher.gate import admit
from t2c_lib.datasets import DEV_DIR, DEV_SPLIT, Dataset, dataset_hash
from t2c_lib.graph.base import (
    DEFAULT_TIMEOUT_S,
    INTERNAL_KEY,
    ClosedOnExit,
    QueryError,
    QueryResult,
    QueryTimeout,
    StoreUnavailable,
    UnsafeQuery,
    max_result_bytes_setting,
    max_rows_setting,
    patiently,
)
from t2c_lib.graph.facts import LADYBUG_FACTS
from t2c_lib.graph.ladybug_bounds import check_size
from t2c_lib.graph.ladybug_builder import build
from t2c_lib.graph.ladybug_plan import DatabaseReading, PlanVerdict
from t2c_lib.graph.ladybug_process import QueryProcess, query_memory_setting, report_wall
from t2c_lib.graph.ladybug_worker import MAX_DB_BYTES, OPEN_FAILED, refusal_message
from t2c_lib.graph.oswall import WallStatus, wall_enabled
from t2c_lib.schema import GraphSchema, PropType, RelPattern

log = logging.getLogger(__name__)
DB_FILE = "graph.lbdb"
LOAD_BATCH = 500
BUFFER_POOL_BYTES = 512 << 20
"""Memory the read-only database may use for pages and intermediate results (LadybugDB's default is 80% of RAM)."""

_LADYBUG_TYPES = {
    "STRING": PropType.STRING,
    "INT64": PropType.INTEGER,
    "INT32": PropType.INTEGER,
    "INT16": PropType.INTEGER,
    "INT8": PropType.INTEGER,
    "UINT64": PropType.INTEGER,
    "UINT32": PropType.INTEGER,
    "SERIAL": PropType.INTEGER,
    "DOUBLE": PropType.FLOAT,
    "FLOAT": PropType.FLOAT,
    "BOOL": PropType.BOOLEAN,
    "DATE": PropType.DATE,
    "STRING[]": PropType.LIST_STRING,
    "INT64[]": PropType.LIST_INTEGER,
    "DOUBLE[]": PropType.LIST_FLOAT,
}
_DDL_TYPES = {
    PropType.STRING: "STRING",
    PropType.INTEGER: "INT64",
    PropType.FLOAT: "DOUBLE",
    PropType.BOOLEAN: "BOOL",
    PropType.DATE: "DATE",
    PropType.LIST_STRING: "STRING[]",
    PropType.LIST_INTEGER: "INT64[]",
    PropType.LIST_FLOAT: "DOUBLE[]",
}


class LadybugStore(ClosedOnExit):
    """`GraphStore` over an embedded LadybugDB file, queried read-only through one watched child process."""

    name = "ladybug"
    facts = LADYBUG_FACTS

    def __init__(
        self,
        dataset: Dataset,
        root: Path | None = None,
        auto_load: bool = True,
        variant: str = "",
        max_rows: int | None = None,
    ) -> None:
        """`variant` names a differently built copy of the same version (its own directory, e.g. "reversed");
        `max_rows` caps every result (default `T2C_MAX_ROWS`, else 10,000)."""
        self.dataset = dataset
        self._graph_key = graph_key(dataset)
        self.max_rows = max_rows if max_rows is not None else max_rows_setting()
        self.root = Path(root or config.CACHE_DIR / "ladybug") / store_dir_name(dataset, variant)
        self.max_result_bytes = max_result_bytes_setting()
        self.memory_bytes = query_memory_setting()
        self._lock = threading.Lock()
        self._process: QueryProcess | None = None
        self._schema: GraphSchema | None = None
        self.build_wall: WallStatus | None = None  # the walls around the last build in this process, if any
        if auto_load and not self.is_loaded():
            self.load(dataset, only_if_missing=True)

    # --- paths -------------------------------------------------------------------------

    @property
    def os_wall(self) -> WallStatus:
        """Which operating-system walls hold around the query process (starts it if needed)."""
        with self._lock:
            return self._worker().wall

    @property
    def version_dir(self) -> Path:
        """Directory of the database built from this dataset version's graph (`graph_key`)."""
        return self.root / self._graph_key[:16]

    @property
    def db_path(self) -> Path:
        return self.version_dir / DB_FILE

    def is_loaded(self) -> bool:
        return self.db_path.is_file()

    # --- loading -----------------------------------------------------------------------

    def load(self, dataset: Dataset | None = None, only_if_missing: bool = False) -> dict[str, int]:
        """Build the database from the dataset files into a fresh file, then swap it in.

        `only_if_missing`: do nothing if another process built this version meanwhile
        (checked under the load lock, so parallel `make -j` jobs build it once).
        """
        if dataset is not None and dataset.hash != self.dataset.hash:
            self.dataset = dataset
            self._graph_key = graph_key(dataset)
        self.close()
        self._build(only_if_missing)
        return self.counts()

    def _build(self, only_if_missing: bool) -> None:
        """Build this version's database in a walled builder process and swap it in (no query process running)."""
        check_size(self.dataset)  # a graph past the embedded store's bound is refused, pointing to Neo4j
        self.root.mkdir(parents=True, exist_ok=True)
        with _file_lock(self.root / ".load.lock"):
            if only_if_missing and self.is_loaded():
                return
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.root))
            try:
                statements = table_statements(self.dataset) + list(row_statements(self.dataset))
                self.build_wall = build(staging / DB_FILE, statements, BUFFER_POOL_BYTES, MAX_DB_BYTES, wall_enabled())
                if wall_enabled():
                    report_wall(self.build_wall, "dataset builder")
                if self.version_dir.exists():
                    shutil.rmtree(self.version_dir)
                staging.rename(self.version_dir)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            for old in self.root.iterdir():
                if old.is_dir() and old != self.version_dir and not old.name.startswith(".staging-"):
                    shutil.rmtree(old, ignore_errors=True)

    # --- reading -----------------------------------------------------------------------

    def _worker(self) -> QueryProcess:
        """The query process over this version's database, started on first use (and after a kill)."""
        if self._process is None or not self._process.alive():
            if not self.is_loaded():
                raise StoreUnavailable(
                    f"the {self.dataset.name} graph is not loaded in {self.db_path}; run `t2c db load --dataset {self.dataset.name}`"
                )
            try:
                self._process = self._start()
            except StoreUnavailable as exc:
                if OPEN_FAILED not in str(exc):
                    raise
                self._rebuild_broken(str(exc))
                self._process = self._start()
        return self._process

    def _start(self) -> QueryProcess:
        return QueryProcess(self.db_path, min(BUFFER_POOL_BYTES, self.memory_bytes // 2), self.memory_bytes)

    def _rebuild_broken(self, why: str) -> None:
        """A database that no longer opens read-only (a write left .wal/.shadow files beside it) is built again
        from its dataset, with a warning naming what was found, rather than left broken."""
        left = sorted(p.name for p in self.version_dir.iterdir() if p.name != DB_FILE)
        log.warning(
            "the %s graph's database did not open read-only (%s; beside it: %s); rebuilding it from the dataset",
            self.dataset.name,
            why[:300],
            ", ".join(left) or "nothing",
        )
        self._process, self._schema = None, None
        self._build(only_if_missing=False)

    def query(self, cypher: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> QueryResult:
        """Run one read statement (walls 1-5 of the module docstring), stopped after `timeout_s` (each of two tries)."""
        return patiently(lambda: self._run(cypher, timeout_s, self.max_rows))

    def _run(self, cypher: str, timeout_s: float, max_rows: int | None) -> QueryResult:
        """`query` with an explicit row cap (None: the store's own catalog reads, whose size the schema bounds)."""
        started = time.perf_counter()
        text = admit(cypher)
        with self._lock:
            reply = self._worker().call(
                {"op": "run", "text": text, "max_rows": max_rows, "max_bytes": self.max_result_bytes},
                started,
                timeout_s,
            )
        return QueryResult(columns=reply["columns"], rows=reply["rows"], elapsed_s=time.perf_counter() - started)

    def explain(self, cypher: str) -> None:
        """Parse, bind and plan without running; raise QueryError if it does not compile, UnsafeQuery if not a read."""
        plan = self._plan(admit(cypher))
        if plan["refused"] is not None:
            raise UnsafeQuery(refusal_message(plan["refused"], plan["operators"]))

    def inspect(self, cypher: str) -> DatabaseReading:
        """What the gate and the database read in `cypher` (statement count, refusal or compile error, plan), without running it."""
        try:
            plan = self._plan(admit(cypher))
        except UnsafeQuery as exc:  # several statements, or a file word the query process refused before binding
            return DatabaseReading("more than one statement" in str(exc), str(exc), None)
        except (QueryError, QueryTimeout) as exc:
            return DatabaseReading(False, str(exc), None)
        return DatabaseReading(
            False, "", PlanVerdict(tuple(plan["operators"]), tuple(plan["functions"]), plan["refused"])
        )

    def _plan(self, text: str) -> dict[str, Any]:
        """The database's plan of an admitted statement (two tries at the time limit, as `query`)."""
        return patiently(lambda: self._plan_once(text, time.perf_counter()))

    def _plan_once(self, text: str, started: float) -> dict[str, Any]:
        with self._lock:
            reply = self._worker().call(
                {"op": "plan", "text": text, "max_rows": None, "max_bytes": 0}, started, DEFAULT_TIMEOUT_S
            )
        return reply["plan"]

    def counts(self) -> dict[str, int]:
        schema = self.schema()
        counts = {}
        for label in schema.labels:
            counts[label] = self.query(f"MATCH (n:{quote_name(label)}) RETURN count(n)").rows[0][0]
        for rel_type in schema.rel_types:
            counts[rel_type] = self.query(f"MATCH ()-[r:{quote_name(rel_type)}]->() RETURN count(r)").rows[0][0]
        return dict(sorted(counts.items()))

    def schema(self) -> GraphSchema:
        """Labels, patterns and property types read from the live database (catalog calls)."""
        if self._schema is None:
            tables = self._run("CALL show_tables() RETURN name, type", DEFAULT_TIMEOUT_S, None).rows
            node_props: dict[str, dict[str, PropType]] = {}
            rel_props: dict[str, dict[str, PropType]] = {}
            patterns: list[RelPattern] = []
            for name, kind in tables:
                info = self._run(
                    f"CALL table_info({quote_string(name)}) RETURN name, type", DEFAULT_TIMEOUT_S, None
                ).rows
                props = {p: _map_type(t) for p, t in info if not p.startswith("_")}
                if kind == "NODE":
                    node_props[name] = props
                elif kind == "REL":
                    rel_props[name] = props
                    for src, dst, *_ in self._run(
                        f"CALL show_connection({quote_string(name)}) RETURN *", DEFAULT_TIMEOUT_S, None
                    ).rows:
                        patterns.append(RelPattern(src, name, dst))
            self._schema = GraphSchema(node_props=node_props, rel_props=rel_props, patterns=sorted(set(patterns)))
        return self._schema

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                self._process.close()
            self._process = None
            self._schema = None


# --- helpers --------------------------------------------------------------------------------


def graph_key(dataset: Dataset) -> str:
    """Which graph a store holds: the dataset's hash, the test split's for its dev split (the same graph).

    Keyed by the dev split's own hash, loading one split removed the other's database as an older
    version while a store of it was open (a test failed with "graph is not loaded", issue 52).
    """
    root = Path(dataset.path)
    if (root / DEV_DIR).is_dir() and dataset.hash == dataset_hash(root, DEV_SPLIT):
        return dataset_hash(root)
    return dataset.hash


def store_dir_name(dataset: Dataset, variant: str = "") -> str:
    """`<name>[.<variant>]-<folder key>`: same-named datasets from different folders get separate stores.

    Always one path component inside the cache: a name or variant that is not an identifier
    (`[A-Za-z_][A-Za-z0-9_-]*`: `../..`, `a/b`, a dot) is replaced by a safe form and its hash.
    Inside it each content version has its own directory (`version_dir`), and loading one
    version removes only older versions from the same folder.
    """
    folder = hashlib.sha256(str(Path(dataset.path).resolve()).encode()).hexdigest()[:8]
    name = safe_component(dataset.name)
    return f"{name}.{safe_component(variant)}-{folder}" if variant else f"{name}-{folder}"


_SAFE_COMPONENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
"""An identifier, or one with hyphens (the perturbed copies' variants: `ts-2-0-shuffle-s7`): no dot, no slash."""


def safe_component(text: str) -> str:
    """`text` if it is an identifier (hyphens allowed), else its letters, digits and `_` (at most 32) plus a
    hash of the whole."""
    if _SAFE_COMPONENT.fullmatch(text) and len(text) <= 64:
        return text
    kept = re.sub(r"[^A-Za-z0-9_]", "_", text)[:32].strip("_") or "dataset"
    return f"{kept}_{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def quote_name(name: str) -> str:
    """A label, type or property name as a backticked Cypher name (backticks inside doubled)."""
    return "`" + name.replace("`", "``") + "`"


def quote_string(text: str) -> str:
    """`text` as a single-quoted Cypher string literal (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


Statement = tuple[str, dict[str, Any] | None]


def table_statements(dataset: Dataset) -> list[Statement]:
    """One CREATE NODE/REL TABLE statement per label and type, every name escaped."""
    key = quote_name(INTERNAL_KEY)
    statements: list[Statement] = []
    for label, props in dataset.schema_spec.nodes.items():
        columns = [f"{key} STRING"] + [f"{quote_name(p)} {_DDL_TYPES[t]}" for p, t in props.items()]
        statements.append((f"CREATE NODE TABLE {quote_name(label)}({', '.join(columns)}, PRIMARY KEY({key}))", None))
    for rel_type, spec in dataset.schema_spec.rels.items():
        parts = [f"FROM {quote_name(a)} TO {quote_name(b)}" for a, b in spec.endpoints]
        parts += [f"{quote_name(p)} {_DDL_TYPES[t]}" for p, t in spec.properties.items()]
        statements.append((f"CREATE REL TABLE {quote_name(rel_type)}({', '.join(parts)})", None))
    return statements


def row_statements(dataset: Dataset) -> Iterator[Statement]:
    """The nodes, then the relationships, as UNWIND batches: names escaped, every value a parameter."""
    key = quote_name(INTERNAL_KEY)
    for label, rows in dataset.nodes.items():
        props = list(dataset.schema_spec.nodes[label])
        fields = {p: f"p{i}" for i, p in enumerate(props)}  # parameter map keys never carry a dataset's name
        assigns = ", ".join([f"{key}: r.k"] + [f"{quote_name(p)}: r.{fields[p]}" for p in props])
        statement = f"UNWIND $rows AS r CREATE (:{quote_name(label)} {{{assigns}}})"
        for batch in _batches(rows):
            payload = [{"k": row.key, **{fields[p]: row.properties.get(p) for p in props}} for row in batch]
            yield statement, {"rows": payload}
    for rel_type, rel_rows in dataset.rels.items():
        props = list(dataset.schema_spec.rels[rel_type].properties)
        fields = {p: f"p{i}" for i, p in enumerate(props)}
        by_pair: dict[tuple[str, str], list] = {}
        for row in rel_rows:
            by_pair.setdefault((row.from_label, row.to_label), []).append(row)
        for (src, dst), pair_rows in by_pair.items():
            assigns = ", ".join(f"{quote_name(p)}: r.{fields[p]}" for p in props)
            statement = (
                f"UNWIND $rows AS r MATCH (a:{quote_name(src)} {{{key}: r.f}}), (b:{quote_name(dst)} {{{key}: r.t}}) "
                f"CREATE (a)-[:{quote_name(rel_type)} {{{assigns}}}]->(b)"
            )
            for batch in _batches(pair_rows):
                payload = [
                    {"f": row.from_key, "t": row.to_key, **{fields[p]: row.properties.get(p) for p in props}}
                    for row in batch
                ]
                yield statement, {"rows": payload}


def _batches(rows: list) -> Iterator[list]:
    for start in range(0, len(rows), LOAD_BATCH):
        yield rows[start : start + LOAD_BATCH]


def _map_type(type_name: str) -> PropType:
    try:
        return _LADYBUG_TYPES[type_name.upper()]
    except KeyError:
        raise StoreUnavailable(f"LadybugDB property type {type_name!r} has no t2c equivalent") from None


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive inter-process lock, so parallel `make -j` jobs never load at the same time."""
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
