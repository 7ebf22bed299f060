"""The embedded store: LadybugDB (PyPI `ladybug`, the maintained fork of Kuzu), in process.

Each dataset version gets its own database file under `.cache/ladybug/<dataset>-<folder>/<hash>/`
(`<folder>`: a short hash of the dataset's directory, so a same-named dataset elsewhere never
replaces it; `<hash>`: the dataset's content),
built from scratch by `load()` (so reloading can never duplicate anything).

Every query, generated or typed by a user, passes the database's own walls before it runs:

1. it is prepared as one statement (`prepare` refuses a string of several; nothing here
   ever calls an API that runs every statement of a string);
2. the physical plan that `EXPLAIN` prints must hold only read operators and schema table
   functions (`ladybug_plan.read_plan`), else `UnsafeQuery`;
3. the database is opened `read_only=True`, one thread, a bounded buffer pool and no
   automatic checkpoints, so a write that slipped past both would still be refused;
4. the result is bounded: over `max_rows` rows it is refused before a row is fetched, and
   the time limit covers execution and fetching.

LadybugDB has no switch for extension loading or file access (LOAD FROM, COPY TO,
INSTALL/LOAD EXTENSION, ATTACH): walls 1 and 2 and the guard cover those.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import tempfile
import threading
import time
import warnings
from decimal import Decimal
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import ladybug

from t2c_lib import config
from t2c_lib.datasets import Dataset
from t2c_lib.graph.base import (
    DEFAULT_TIMEOUT_S, INTERNAL_KEY, GraphNode, GraphPath, GraphRel, QueryError, QueryResult, QueryTimeout,
    ResultTooLarge, StoreUnavailable, UnsafeQuery, max_rows_setting,
)
from t2c_lib.graph.dialect import normalise
from t2c_lib.graph.ladybug_plan import DatabaseReading, read_plan
from t2c_lib.graph.schema import GraphSchema, PropType, RelPattern

DB_FILE = "graph.lbdb"
LOAD_BATCH = 500
BUFFER_POOL_BYTES = 1 << 30
"""Memory the read-only database may use for pages (1 GiB; LadybugDB's default is 80% of RAM)."""
FETCH_CHECK_EVERY = 256

_LADYBUG_TYPES = {
    "STRING": PropType.STRING, "INT64": PropType.INTEGER, "INT32": PropType.INTEGER, "INT16": PropType.INTEGER,
    "INT8": PropType.INTEGER, "UINT64": PropType.INTEGER, "UINT32": PropType.INTEGER, "SERIAL": PropType.INTEGER,
    "DOUBLE": PropType.FLOAT, "FLOAT": PropType.FLOAT, "BOOL": PropType.BOOLEAN, "DATE": PropType.DATE,
    "STRING[]": PropType.LIST_STRING, "INT64[]": PropType.LIST_INTEGER, "DOUBLE[]": PropType.LIST_FLOAT,
}
_DDL_TYPES = {
    PropType.STRING: "STRING", PropType.INTEGER: "INT64", PropType.FLOAT: "DOUBLE", PropType.BOOLEAN: "BOOL",
    PropType.DATE: "DATE", PropType.LIST_STRING: "STRING[]", PropType.LIST_INTEGER: "INT64[]",
    PropType.LIST_FLOAT: "DOUBLE[]",
}


class LadybugStore:
    """`GraphStore` over an embedded LadybugDB file; one read-only connection, serialised by a lock."""

    name = "ladybug"

    def __init__(
        self, dataset: Dataset, root: Path | None = None, auto_load: bool = True, variant: str = "",
        max_rows: int | None = None,
    ) -> None:
        """`variant` names a differently built copy of the same version (its own directory, e.g. "reversed");
        `max_rows` caps every result (default `T2C_MAX_ROWS`, else 10,000)."""
        self.dataset = dataset
        self.max_rows = max_rows if max_rows is not None else max_rows_setting()
        self.root = Path(root or config.CACHE_DIR / "ladybug") / store_dir_name(dataset, variant)
        self._lock = threading.Lock()
        self._db: Any = None
        self._conn: Any = None
        self._schema: GraphSchema | None = None
        if auto_load and not self.is_loaded():
            self.load(dataset, only_if_missing=True)

    # --- paths -------------------------------------------------------------------------

    @property
    def version_dir(self) -> Path:
        """Directory of the database built from this dataset version."""
        return self.root / self.dataset.hash[:16]

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
        self.close()
        self.root.mkdir(parents=True, exist_ok=True)
        with _file_lock(self.root / ".load.lock"):
            if only_if_missing and self.is_loaded():
                return self.counts()
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.root))
            try:
                db = ladybug.Database(str(staging / DB_FILE))
                conn = ladybug.Connection(db)
                _create_tables(conn, self.dataset)
                _insert_rows(conn, self.dataset)
                conn.close()
                db.close()
                if self.version_dir.exists():
                    shutil.rmtree(self.version_dir)
                staging.rename(self.version_dir)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            for old in self.root.iterdir():
                if old.is_dir() and old != self.version_dir and not old.name.startswith(".staging-"):
                    shutil.rmtree(old, ignore_errors=True)
        return self.counts()

    # --- reading -----------------------------------------------------------------------

    def _connection(self) -> Any:
        if self._conn is None:
            if not self.is_loaded():
                raise StoreUnavailable(
                    f"the {self.dataset.name} graph is not loaded in {self.db_path}; run `t2c db load --dataset {self.dataset.name}`"
                )
            try:
                self._db = ladybug.Database(
                    str(self.db_path), read_only=True, max_num_threads=1, buffer_pool_size=BUFFER_POOL_BYTES,
                    auto_checkpoint=False,
                )
                # one thread: rows tied under ORDER BY / LIMIT then come back in the same order every run
                self._conn = ladybug.Connection(self._db, num_threads=1)
            except RuntimeError as exc:
                raise StoreUnavailable(f"cannot open {self.db_path} read-only: {exc}") from None
        return self._conn

    def query(self, cypher: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> QueryResult:
        """Run one read statement (walls 1-4 of the module docstring), stopped after `timeout_s`."""
        return self._run(cypher, timeout_s, self.max_rows)

    def _run(self, cypher: str, timeout_s: float, max_rows: int | None) -> QueryResult:
        """`query` with an explicit row cap (None: the store's own catalog reads, whose size the schema bounds)."""
        with self._lock:
            conn = self._connection()
            started = time.perf_counter()
            deadline = started + timeout_s
            statement = self._checked_statement(conn, cypher, deadline, timeout_s)
            _set_timeout(conn, deadline, timeout_s)
            try:
                raw = conn.execute(statement)
            except RuntimeError as exc:
                raise _query_error(exc, timeout_s) from None
            try:
                return _fetch(raw, started, deadline, timeout_s, max_rows)
            finally:
                raw.close()

    def explain(self, cypher: str) -> None:
        """Parse, bind and plan without running; raise QueryError if it does not compile, UnsafeQuery if not a read."""
        with self._lock:
            conn = self._connection()
            deadline = time.perf_counter() + DEFAULT_TIMEOUT_S
            self._checked_statement(conn, cypher, deadline, DEFAULT_TIMEOUT_S)

    def inspect(self, cypher: str) -> DatabaseReading:
        """What the database reads in `cypher` (statement count, compile error, plan), without running it."""
        with self._lock:
            conn = self._connection()
            deadline = time.perf_counter() + DEFAULT_TIMEOUT_S
            try:
                _, reading = self._read_statement(conn, cypher, deadline, DEFAULT_TIMEOUT_S)
            except UnsafeQuery as exc:
                return DatabaseReading(True, str(exc), None)
            except (QueryError, QueryTimeout) as exc:
                return DatabaseReading(False, str(exc), None)
            return reading

    def _checked_statement(self, conn: Any, cypher: str, deadline: float, timeout_s: float) -> Any:
        """Wall 1: one statement, prepared; its EXPLAIN plan holds read operators only."""
        statement, reading = self._read_statement(conn, cypher, deadline, timeout_s)
        if reading.plan is not None and not reading.plan.ok:
            raise UnsafeQuery(f"refused: the database plans {reading.plan.refused}, which is not a read of the graph")
        return statement

    def _read_statement(self, conn: Any, cypher: str, deadline: float, timeout_s: float) -> tuple[Any, DatabaseReading]:
        """The prepared statement and the database's plan of it; raise UnsafeQuery for several statements.

        The text is first normalised from Neo4j's dialect (graph/dialect.py); the walls judge
        exactly the text that would run."""
        cypher = normalise(cypher).query
        statement = _prepare(conn, cypher)
        plan_statement = _prepare(conn, f"EXPLAIN {cypher}")
        _set_timeout(conn, deadline, timeout_s)
        try:
            plan = conn.execute(plan_statement)
        except RuntimeError as exc:
            raise _query_error(exc, timeout_s) from None
        try:
            drawing = plan.get_next()[0] if plan.has_next() else ""
        finally:
            plan.close()
        return statement, DatabaseReading(False, "", read_plan(str(drawing)))

    def counts(self) -> dict[str, int]:
        schema = self.schema()
        counts = {}
        for label in schema.labels:
            counts[label] = self.query(f"MATCH (n:`{label}`) RETURN count(n)").rows[0][0]
        for rel_type in schema.rel_types:
            counts[rel_type] = self.query(f"MATCH ()-[r:`{rel_type}`]->() RETURN count(r)").rows[0][0]
        return dict(sorted(counts.items()))

    def schema(self) -> GraphSchema:
        """Labels, patterns and property types read from the live database (catalog calls)."""
        if self._schema is None:
            tables = self._run("CALL show_tables() RETURN name, type", DEFAULT_TIMEOUT_S, None).rows
            node_props: dict[str, dict[str, PropType]] = {}
            rel_props: dict[str, dict[str, PropType]] = {}
            patterns: list[RelPattern] = []
            for name, kind in tables:
                info = self._run(f"CALL table_info('{name}') RETURN name, type", DEFAULT_TIMEOUT_S, None).rows
                props = {p: _map_type(t) for p, t in info if not p.startswith("_")}
                if kind == "NODE":
                    node_props[name] = props
                elif kind == "REL":
                    rel_props[name] = props
                    for src, dst, *_ in self._run(f"CALL show_connection('{name}') RETURN *", DEFAULT_TIMEOUT_S, None).rows:
                        patterns.append(RelPattern(src, name, dst))
            self._schema = GraphSchema(node_props=node_props, rel_props=rel_props, patterns=sorted(set(patterns)))
        return self._schema

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            if self._db is not None:
                self._db.close()
            self._conn = self._db = None
            self._schema = None

    def __enter__(self) -> "LadybugStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- helpers --------------------------------------------------------------------------------

def store_dir_name(dataset: Dataset, variant: str = "") -> str:
    """`<name>[.<variant>]-<folder key>`: same-named datasets from different folders get separate stores.

    Inside it each content version has its own directory (`version_dir`), and loading one
    version removes only older versions from the same folder.
    """
    folder = hashlib.sha256(str(Path(dataset.path).resolve()).encode()).hexdigest()[:8]
    return f"{dataset.name}.{variant}-{folder}" if variant else f"{dataset.name}-{folder}"


def _create_tables(conn: Any, dataset: Dataset) -> None:
    for label, props in dataset.schema_spec.nodes.items():
        columns = [f"`{INTERNAL_KEY}` STRING"] + [f"`{p}` {_DDL_TYPES[t]}" for p, t in props.items()]
        conn.execute(f"CREATE NODE TABLE `{label}`({', '.join(columns)}, PRIMARY KEY(`{INTERNAL_KEY}`))")
    for rel_type, spec in dataset.schema_spec.rels.items():
        parts = [f"FROM `{a}` TO `{b}`" for a, b in spec.endpoints]
        parts += [f"`{p}` {_DDL_TYPES[t]}" for p, t in spec.properties.items()]
        conn.execute(f"CREATE REL TABLE `{rel_type}`({', '.join(parts)})")


def _insert_rows(conn: Any, dataset: Dataset) -> None:
    for label, rows in dataset.nodes.items():
        props = list(dataset.schema_spec.nodes[label])
        assigns = ", ".join([f"`{INTERNAL_KEY}`: r.k"] + [f"`{p}`: r.`{p}`" for p in props])
        statement = f"UNWIND $rows AS r CREATE (:`{label}` {{{assigns}}})"
        for batch in _batches(rows):
            payload = [{"k": row.key, **{p: row.properties.get(p) for p in props}} for row in batch]
            conn.execute(statement, {"rows": payload})
    for rel_type, rows in dataset.rels.items():
        props = list(dataset.schema_spec.rels[rel_type].properties)
        by_pair: dict[tuple[str, str], list] = {}
        for row in rows:
            by_pair.setdefault((row.from_label, row.to_label), []).append(row)
        for (src, dst), pair_rows in by_pair.items():
            assigns = ", ".join(f"`{p}`: r.`{p}`" for p in props)
            statement = (
                f"UNWIND $rows AS r MATCH (a:`{src}` {{`{INTERNAL_KEY}`: r.f}}), (b:`{dst}` {{`{INTERNAL_KEY}`: r.t}}) "
                f"CREATE (a)-[:`{rel_type}` {{{assigns}}}]->(b)"
            )
            for batch in _batches(pair_rows):
                payload = [{"f": row.from_key, "t": row.to_key, **{p: row.properties.get(p) for p in props}} for row in batch]
                conn.execute(statement, {"rows": payload})


def _batches(rows: list) -> Iterator[list]:
    for start in range(0, len(rows), LOAD_BATCH):
        yield rows[start:start + LOAD_BATCH]


def _map_type(type_name: str) -> PropType:
    try:
        return _LADYBUG_TYPES[type_name.upper()]
    except KeyError:
        raise StoreUnavailable(f"LadybugDB property type {type_name!r} has no t2c equivalent") from None


def _fetch(raw: Any, started: float, deadline: float, timeout_s: float, max_rows: int | None) -> QueryResult:
    """Rows of an executed result: refused over the row cap (nothing fetched), stopped at the deadline."""
    total = raw.get_num_tuples()
    if max_rows is not None and total > max_rows:
        raise ResultTooLarge(
            f"the query returns {total:,} rows, more than the limit of {max_rows:,} (T2C_MAX_ROWS); "
            "aggregate, filter or add LIMIT"
        )
    columns = list(raw.get_column_names())
    rows = []
    while raw.has_next():
        if len(rows) % FETCH_CHECK_EVERY == 0 and time.perf_counter() > deadline:
            raise QueryTimeout(f"query stopped after the {timeout_s:g} s time limit (while fetching rows)")
        rows.append([_convert(v) for v in raw.get_next()])
    return QueryResult(columns=columns, rows=rows, elapsed_s=time.perf_counter() - started)


def _prepare(conn: Any, cypher: str) -> Any:
    """A prepared statement for exactly one statement; raise QueryError / UnsafeQuery otherwise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # prepare() is the one-statement API we need
        try:
            statement = conn.prepare(cypher)
        except RuntimeError as exc:
            raise _query_error(exc, 0.0) from None
    if not statement.is_success():
        message = statement.get_error_message().strip()
        if "multiple statements" in message:
            raise UnsafeQuery("refused: the text holds more than one statement; send exactly one query")
        raise _query_error(RuntimeError(message), 0.0)
    return statement


def _set_timeout(conn: Any, deadline: float, timeout_s: float) -> None:
    """Give the database what is left of the time limit (at least 1 ms)."""
    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        raise QueryTimeout(f"query stopped after the {timeout_s:g} s time limit")
    conn.set_query_timeout(max(1, int(remaining * 1000)))


def _query_error(exc: RuntimeError, timeout_s: float) -> Exception:
    message = str(exc).strip()
    if message.startswith("Interrupted"):
        return QueryTimeout(f"query stopped after the {timeout_s:g} s time limit")
    if "read-only" in message or "read only" in message:
        return QueryError(message, kind="write")
    if message.startswith("Parser exception"):
        return QueryError(message, kind="syntax")
    if message.startswith("Binder exception") or message.startswith("Catalog exception"):
        return QueryError(message, kind="semantic")
    return QueryError(message, kind="runtime")


def _convert(value: Any) -> Any:
    """LadybugDB's dict encodings of nodes, relationships and paths -> store-neutral values."""
    if isinstance(value, dict):
        if "_NODES" in value and "_RELS" in value:
            return GraphPath(tuple(_convert(n) for n in value["_NODES"]), tuple(_convert(r) for r in value["_RELS"]))
        if "_LABEL" in value and "_ID" in value:
            props = {k: _convert(v) for k, v in value.items() if not k.startswith("_") and v is not None}
            if "_SRC" in value:
                return GraphRel(value["_LABEL"], props)
            return GraphNode((value["_LABEL"],), props)
        return {k: _convert(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(v) for v in value]
    if isinstance(value, Decimal):  # sum() over integers comes back as Decimal; Neo4j gives int
        return int(value) if value == value.to_integral_value() else float(value)
    return value


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive inter-process lock, so parallel `make -j` jobs never load at the same time."""
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
