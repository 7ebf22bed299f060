"""The server store: any Neo4j 5 reached over Bolt with the official driver.

Connection settings come from the environment (`NEO4J_URI`, default
bolt://127.0.0.1:7687 as started by `make neo4j`; `NEO4J_USER`, `NEO4J_PASSWORD`,
`NEO4J_DATABASE`), so `Neo4jStore(dataset)` needs nothing else; for a loopback URI without
`NEO4J_PASSWORD` the password is the one `make neo4j` generated into its cache
(`config.neo4j_password`). Generated queries meet the same walls as on the embedded store:
the shared gate (`t2c_lib.cypher.gate.admit`, without the dialect rewrite, which is for the
embedded store: Neo4j runs the text as judged) first; Bolt runs one statement per call;
EXPLAIN must report a read plan (query type 'r' and every operator on READ_OPERATORS, an
allow-list); the query then runs in a READ access-mode transaction (the server refuses
writes) with a time limit the server enforces, and rows are fetched in batches up to the
row cap and the result byte budget (`T2C_MAX_RESULT_BYTES`). The driver has no read timeout
of its own, so a client-side deadline (`neo4j_limits.Watch`) covers every call that runs a
query: past the time limit plus a grace it cuts the connection and has the server terminate
the transaction; the same watch stops reading once the bytes on the wire pass the budget.
Loading writes the dataset in
batches (UNWIND) after deleting everything, so a reload gives the same graph; the
dataset's hash is kept in the names of the per-label `_key` uniqueness constraints, which
is how a store knows whether the database already holds this dataset version.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import neo4j
import neo4j.graph
import neo4j.time
from neo4j import exceptions as nx

from t2c_lib import config
from t2c_lib.cypher.gate import admit
from t2c_lib.cypher.lexer import Dialect
from t2c_lib.cypher.readonly import READ_ONLY_PROCEDURES
from t2c_lib.graph.base import (
    DEFAULT_TIMEOUT_S,
    INTERNAL_KEY,
    MAX_VALUE_DEPTH,
    ClosedOnExit,
    GraphNode,
    GraphPath,
    GraphRel,
    QueryError,
    QueryResult,
    QueryTimeout,
    ResourceLimit,
    ResultTooLarge,
    StoreError,
    StoreUnavailable,
    UnsafeQuery,
    max_result_bytes_setting,
    max_rows_setting,
    value_bytes,
)
from t2c_lib.graph.facts import NEO4J_FACTS
from t2c_lib.graph.neo4j_limits import METADATA_KEY, Watch
from t2c_lib.schema import GraphSchema, PropType, RelPattern

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.datasets import Dataset

log = logging.getLogger(__name__)

DEFAULT_URI = "bolt://127.0.0.1:7687"
LOAD_BATCH = 1000
CONNECT_TIMEOUT_S = 5.0
OPEN_TIMEOUT_S = 15.0
"""Client deadline on opening a store: getting a connection (TCP, handshake, login) and a first `RETURN 1`."""
ADMIN_TIMEOUT_S = 60.0
"""Client deadline on one of the store's own statements (constraints, counts, schema introspection)."""
LOAD_TIMEOUT_S = 600.0
"""Client deadline on one loading statement (delete everything, one batch of rows)."""
RESTART_WAIT_S = 120.0
"""How long opening a store waits while `make neo4j`'s supervisor starts the local server again."""
CONSTRAINT_PREFIX = "t2c_"

_NEO4J_TYPES = {
    "String": PropType.STRING,
    "Long": PropType.INTEGER,
    "Integer": PropType.INTEGER,
    "Double": PropType.FLOAT,
    "Float": PropType.FLOAT,
    "Boolean": PropType.BOOLEAN,
    "Date": PropType.DATE,
    "StringArray": PropType.LIST_STRING,
    "LongArray": PropType.LIST_INTEGER,
    "IntegerArray": PropType.LIST_INTEGER,
    "DoubleArray": PropType.LIST_FLOAT,
    "FloatArray": PropType.LIST_FLOAT,
}
_SYNTAX_MESSAGES = re.compile(
    r"^\s*(Invalid input|Expected exactly one statement|Query cannot conclude|Mismatched input|Failed to parse|"
    r"Unexpected end of input|Invalid (?:Cypher|syntax))",
    re.IGNORECASE,
)
_TIMEOUT_CODES = (
    "Neo.ClientError.Transaction.TransactionTimedOut",
    "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
)
FETCH_SIZE = 1000
"""Records per Bolt fetch: memory stays bounded by the row cap and byte budget, never by the result."""
WIRE_SLACK = 1024 * 1024
"""Bytes the wire may carry beyond the result byte budget: the plan, summaries and node ids rows drop."""
TERMINATE_TIMEOUT_S = 5.0
_RESOURCE_CODES = (
    "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
    "Neo.TransientError.General.OutOfMemoryError",
    "Neo.TransientError.General.TransactionMemoryLimit",
)
_WRITE_CODES = ("Neo.ClientError.Statement.AccessMode", "Neo.ClientError.Security.Forbidden")
READ_OPERATORS = frozenset(
    {
        # leaves: scans, seeks, counts
        "AllNodesScan",
        "PartitionedAllNodesScan",
        "NodeByLabelScan",
        "PartitionedNodeByLabelScan",
        "NodeByIdSeek",
        "NodeByElementIdSeek",
        "NodeIndexSeek",
        "NodeUniqueIndexSeek",
        "MultiNodeIndexSeek",
        "AssertingMultiNodeIndexSeek",
        "NodeIndexSeekByRange",
        "NodeUniqueIndexSeekByRange",
        "NodeIndexContainsScan",
        "NodeIndexEndsWithScan",
        "NodeIndexScan",
        "PartitionedNodeIndexSeek",
        "PartitionedNodeIndexScan",
        "IntersectionNodeByLabelsScan",
        "SubtractionNodeByLabelsScan",
        "UnionNodeByLabelsScan",
        "DirectedRelationshipTypeScan",
        "UndirectedRelationshipTypeScan",
        "DirectedUnionRelationshipTypesScan",
        "UndirectedUnionRelationshipTypesScan",
        "DirectedAllRelationshipsScan",
        "UndirectedAllRelationshipsScan",
        "DirectedRelationshipIndexSeek",
        "UndirectedRelationshipIndexSeek",
        "DirectedRelationshipIndexScan",
        "UndirectedRelationshipIndexScan",
        "DirectedRelationshipIndexSeekByRange",
        "UndirectedRelationshipIndexSeekByRange",
        "DirectedRelationshipIndexContainsScan",
        "UndirectedRelationshipIndexContainsScan",
        "DirectedRelationshipIndexEndsWithScan",
        "UndirectedRelationshipIndexEndsWithScan",
        "DirectedRelationshipByIdSeek",
        "UndirectedRelationshipByIdSeek",
        "DirectedRelationshipByElementIdSeek",
        "UndirectedRelationshipByElementIdSeek",
        "NodeCountFromCountStore",
        "RelationshipCountFromCountStore",
        "Argument",
        "ArgumentTracker",
        "EmptyRow",
        # traversal
        "Expand",
        "OptionalExpand",
        "VarLengthExpand",
        "BFSPruningVarLengthExpand",
        "ShortestPath",
        "StatefulShortestPath",
        "ProjectEndpoints",
        "Repeat",
        "Trail",
        "NullifyMetadata",
        # row-wise, joins, aggregation, sorting
        "ProduceResults",
        "Filter",
        "Projection",
        "CacheProperties",
        "Limit",
        "ExhaustiveLimit",
        "Skip",
        "Distinct",
        "OrderedDistinct",
        "Sort",
        "PartialSort",
        "Top",
        "PartialTop",
        "EagerAggregation",
        "OrderedAggregation",
        "Aggregation",
        "Unwind",
        "PartitionedUnwind",
        "Eager",
        "Apply",
        "SemiApply",
        "AntiSemiApply",
        "LetSemiApply",
        "LetAntiSemiApply",
        "SelectOrSemiApply",
        "SelectOrAntiSemiApply",
        "LetSelectOrSemiApply",
        "LetSelectOrAntiSemiApply",
        "ConditionalApply",
        "AntiConditionalApply",
        "RollUpApply",
        "CartesianProduct",
        "NodeHashJoin",
        "NodeLeftOuterHashJoin",
        "NodeRightOuterHashJoin",
        "ValueHashJoin",
        "Union",
        "OrderedUnion",
        "Optional",
        "Anti",
        "AssertSameNode",
        "AssertSameRelationship",
        "EmptyResult",
    }
)
"""Plan operators of read queries (Neo4j 5 operator names, variants like `Expand(All)` by their base
name). Anything else refuses the query even in a plan of type 'r': LOAD CSV (reads files and URLs),
procedure calls, SHOW/TERMINATE commands, CALL {} IN TRANSACTIONS and any operator this list does
not know."""

READ_PROCEDURES = READ_ONLY_PROCEDURES[Dialect.NEO4J]
"""Procedures a ProcedureCall operator may run: schema introspection (the guard's list, one list for both)."""


class Neo4jStore(ClosedOnExit):
    """`GraphStore` over a Neo4j server: read-only, time-limited queries through Bolt."""

    name = "neo4j"
    facts = NEO4J_FACTS

    def __init__(
        self,
        dataset: Dataset | None = None,
        uri: str | None = None,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        auto_load: bool = True,
        replace_foreign: bool | None = None,
        max_rows: int | None = None,
        max_result_bytes: int | None = None,
    ) -> None:
        self.dataset = dataset
        self.max_rows = max_rows if max_rows is not None else max_rows_setting()
        self.max_result_bytes = max_result_bytes if max_result_bytes is not None else max_result_bytes_setting()
        # Loading deletes everything; a database with data t2c did not load is only replaced on request.
        self.replace_foreign = (
            replace_foreign if replace_foreign is not None else config.env("T2C_NEO4J_REPLACE") == "1"
        )
        self.uri = uri or config.env("NEO4J_URI", DEFAULT_URI) or DEFAULT_URI
        self.user = user or config.env("NEO4J_USER", "neo4j") or "neo4j"
        self.database = database or config.env("NEO4J_DATABASE")
        self._schema: GraphSchema | None = None
        # The local server's supervisor may be starting it again (its heap ran out): wait for it.
        restart_deadline = time.monotonic() + RESTART_WAIT_S
        while True:
            try:
                self._connect(password)
                break
            except StoreUnavailable:
                if not (_local_restart_pending(self.uri) and time.monotonic() < restart_deadline):
                    raise
                log.info("the local Neo4j server is being restarted by its supervisor; waiting")
                time.sleep(1.0)
        if dataset is not None and auto_load:
            try:
                loaded = self.is_loaded()
            except QueryTimeout:
                self.driver.close()
                raise _no_answer(self.uri, ADMIN_TIMEOUT_S) from None
            if not loaded:
                self.load(dataset)

    def _connect(self, password: str | None) -> None:
        """A driver to the server and its first answer, or StoreUnavailable."""
        # NEO4J_PASSWORD, else (loopback URI) the password `make neo4j` generated into its cache.
        password = password if password is not None else config.neo4j_password(self.uri)
        # No password at all: send no credentials (a server with auth off).
        auth = (self.user, password) if password else None
        self._auth = auth
        try:
            self.driver = neo4j.GraphDatabase.driver(
                self.uri,
                auth=auth,
                connection_timeout=CONNECT_TIMEOUT_S,
                connection_acquisition_timeout=OPEN_TIMEOUT_S,
                max_transaction_retry_time=5.0,
                notifications_min_severity="OFF",
                user_agent="t2c",
            )
        except (ValueError, nx.ConfigurationError) as exc:
            raise StoreUnavailable(f"invalid NEO4J_URI {self.uri!r}: {exc}") from None
        try:
            self._first_answer()
        except StoreUnavailable:
            self.driver.close()
            raise
        except nx.Neo4jError as exc:
            self.driver.close()
            if exc.code == "Neo.ClientError.Database.DatabaseNotFound":
                raise StoreUnavailable(
                    f"Neo4j at {self.uri} has no database {self.database!r} (check NEO4J_DATABASE)"
                ) from None
            raise _unavailable(exc, self.uri) from None
        except Exception as exc:
            self.driver.close()
            raise _unavailable(exc, self.uri) from None

    def _first_answer(self) -> None:
        """`RETURN 1` under the client deadline OPEN_TIMEOUT_S (a server that takes the connection and then
        says nothing, as one whose heap ran out did, would otherwise hold the caller for ever)."""
        with self._session(neo4j.READ_ACCESS) as session, self._own_watch(session, OPEN_TIMEOUT_S) as watch:
            try:
                session.run(neo4j.Query("RETURN 1", timeout=OPEN_TIMEOUT_S, metadata=watch.metadata)).consume()
            except Exception:
                if watch.reason == "deadline":
                    raise _no_answer(self.uri, OPEN_TIMEOUT_S) from None
                raise

    def new_driver(self, **options: Any) -> neo4j.Driver:
        """Another driver to the same server with the same credentials (e.g. for CyVer, with notifications);
        getting a connection has the store's deadline."""
        options.setdefault("connection_acquisition_timeout", OPEN_TIMEOUT_S)
        return neo4j.GraphDatabase.driver(self.uri, auth=self._auth, connection_timeout=CONNECT_TIMEOUT_S, **options)

    # --- loading -----------------------------------------------------------------------

    def _constraint_name(self, label: str) -> str:
        assert self.dataset is not None
        return f"{CONSTRAINT_PREFIX}{self.dataset.name}_{self.dataset.hash[:16]}_{label}"

    def is_loaded(self) -> bool:
        """Whether the database holds exactly this dataset version (constraint names + counts)."""
        if self.dataset is None:
            return False
        names = {row[0] for row in self._admin("SHOW CONSTRAINTS YIELD name RETURN name")}
        if not all(self._constraint_name(label) in names for label in self.dataset.schema_spec.nodes):
            return False
        return self.counts() == self.dataset.expected_counts()

    def load(self, dataset: Dataset | None = None) -> dict[str, int]:
        """Replace the database's contents: delete everything, one `_key` constraint per label, rows in batches.

        Refuses (StoreError) when the database holds nodes but no t2c constraint, i.e. data
        t2c did not load, unless `replace_foreign` / `T2C_NEO4J_REPLACE=1`.
        """
        if dataset is not None:
            self.dataset = dataset
        if self.dataset is None:
            raise StoreError("Neo4jStore.load needs a dataset")
        ds = self.dataset
        self._schema = None
        constraints = [name for (name,) in self._admin("SHOW CONSTRAINTS YIELD name RETURN name")]
        ours = [name for name in constraints if name.startswith(CONSTRAINT_PREFIX)]
        if not ours and not self.replace_foreign and self._admin("MATCH (n) RETURN count(n) > 0")[0][0]:
            raise StoreError(
                f"the Neo4j database at {self.uri} holds data that t2c did not load; loading {ds.name} would "
                f"delete it. Use an empty database, or set T2C_NEO4J_REPLACE=1 to replace its contents."
            )
        for name in ours:
            self._admin(f"DROP CONSTRAINT {_quote(name)} IF EXISTS")
        self._admin("MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS", LOAD_TIMEOUT_S)
        for label in ds.schema_spec.nodes:
            self._admin(
                f"CREATE CONSTRAINT {_quote(self._constraint_name(label))} IF NOT EXISTS "
                f"FOR (n:{_quote(label)}) REQUIRE n.{_quote(INTERNAL_KEY)} IS UNIQUE"
            )
        for label, rows in ds.nodes.items():
            statement = f"UNWIND $rows AS r CREATE (n:{_quote(label)}) SET n = r"
            for batch in _batches(rows):
                self._write(statement, [{INTERNAL_KEY: row.key, **_present(row.properties)} for row in batch])
        for rel_type, rel_rows in ds.rels.items():
            by_pair: dict[tuple[str, str], list] = {}
            for row in rel_rows:
                by_pair.setdefault((row.from_label, row.to_label), []).append(row)
            for (src, dst), pair_rows in by_pair.items():
                statement = (
                    f"UNWIND $rows AS r "
                    f"MATCH (a:{_quote(src)} {{{_quote(INTERNAL_KEY)}: r.f}}) "
                    f"MATCH (b:{_quote(dst)} {{{_quote(INTERNAL_KEY)}: r.t}}) "
                    f"CREATE (a)-[x:{_quote(rel_type)}]->(b) SET x = r.p"
                )
                for batch in _batches(pair_rows):
                    payload = [{"f": row.from_key, "t": row.to_key, "p": _present(row.properties)} for row in batch]
                    self._write(statement, payload)
        counts = self.counts()
        expected = ds.expected_counts()
        if counts != expected:
            raise StoreError(f"loading {ds.name} into Neo4j gave counts {counts}, expected {expected}")
        return counts

    def _write(self, statement: str, rows: list[dict[str, Any]]) -> None:
        """One batch of the load, in a write transaction under the client deadline LOAD_TIMEOUT_S."""
        with self._session(neo4j.WRITE_ACCESS) as session, self._own_watch(session, LOAD_TIMEOUT_S) as watch:

            @neo4j.unit_of_work(timeout=LOAD_TIMEOUT_S, metadata=watch.metadata)
            def work(tx: neo4j.ManagedTransaction) -> None:
                tx.run(statement, rows=rows).consume()

            try:
                session.execute_write(work)
            except Exception as exc:
                raise self._failure(exc, watch) from None

    def _admin(self, statement: str, timeout_s: float = ADMIN_TIMEOUT_S) -> list[list[Any]]:
        """The store's own statements (load, introspection): auto-commit, never user queries, under a client deadline."""
        with self._session(neo4j.WRITE_ACCESS) as session, self._own_watch(session, timeout_s) as watch:
            try:
                result = session.run(neo4j.Query(statement, timeout=timeout_s, metadata=watch.metadata))
                return [list(record.values()) for record in result]
            except Exception as exc:
                raise self._failure(exc, watch) from None

    def _own_watch(self, session: neo4j.Session, timeout_s: float) -> Watch:
        """The client deadline for one of the store's own statements (no byte budget: its results are small)."""
        return Watch(session, timeout_s, terminate=self._terminate)

    # --- reading -----------------------------------------------------------------------

    def _session(self, mode: str) -> neo4j.Session:
        return self.driver.session(database=self.database, default_access_mode=mode, fetch_size=FETCH_SIZE)

    def query(self, cypher: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> QueryResult:
        """Through the gate; EXPLAIN must show a read-only plan; then run in a READ transaction limited to `timeout_s`."""
        return self._read(admit(cypher, rewrite=False, dialect=Dialect.NEO4J), timeout_s, check_plan=True)

    def explain(self, cypher: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Through the gate; parse and plan without running (`EXPLAIN` in a READ transaction, same client deadline)."""
        text = admit(cypher, rewrite=False, dialect=Dialect.NEO4J)
        with self._session(neo4j.READ_ACCESS) as session, self._watch(session, timeout_s) as watch:
            try:
                tx = session.begin_transaction(timeout=max(timeout_s, 0.001), metadata=watch.metadata)
                watch.hook()
                try:
                    tx.run(f"EXPLAIN {text}").consume()
                finally:
                    _close_quietly(tx)
            except Exception as exc:
                raise self._failure(exc, watch) from None

    def _read(self, cypher: str, timeout_s: float = DEFAULT_TIMEOUT_S, check_plan: bool = False) -> QueryResult:
        """Run `cypher` in a READ transaction; with `check_plan`, only after EXPLAIN shows a read-only plan.

        Without `check_plan` the server's READ access mode is the only wall (tests use that
        to show the server refuses writes on its own; the store's introspection uses it). The
        gate is not called here: `query` and `explain` call it. The client deadline and the
        byte budget hold either way.
        """
        with self._session(neo4j.READ_ACCESS) as session, self._watch(session, timeout_s) as watch:
            try:
                tx = session.begin_transaction(timeout=max(timeout_s, 0.001), metadata=watch.metadata)
                watch.hook()
                try:
                    if check_plan:
                        _check_read_only_plan(tx.run(f"EXPLAIN {cypher}").consume())
                    return self._fetch(tx, cypher, watch)
                finally:
                    _close_quietly(tx)
            except Exception as exc:
                raise self._failure(exc, watch) from None

    def _watch(self, session: neo4j.Session, timeout_s: float) -> Watch:
        """The client-side deadline and wire budget for one call (see neo4j_limits)."""
        return Watch(session, timeout_s, wire_limit=self.max_result_bytes + WIRE_SLACK, terminate=self._terminate)

    def _fetch(self, tx: neo4j.Transaction, cypher: str, watch: Watch) -> QueryResult:
        """Rows in batches of FETCH_SIZE, converted as they come: past the row cap, the byte budget or the time limit the query fails."""
        result = tx.run(cypher)
        columns = list(result.keys())
        rows: list[list[Any]] = []
        size = 0
        for record in result:
            if len(rows) >= self.max_rows:
                raise ResultTooLarge(
                    f"the query returns more than the limit of {self.max_rows:,} rows (T2C_MAX_ROWS); "
                    "aggregate, filter or add LIMIT"
                )
            if watch.elapsed_s > watch.timeout_s:
                raise _timeout(watch, "while fetching rows")
            row = [_convert(value) for value in record.values()]
            size += sum(value_bytes(value) for value in row)
            if size > self.max_result_bytes:
                raise _too_many_bytes(self.max_result_bytes)
            rows.append(row)
        return QueryResult(columns=columns, rows=rows, elapsed_s=watch.elapsed_s)

    def _failure(self, exc: Exception, watch: Watch) -> Exception:
        """Whatever ended a call, as the store's error: a wall that fired wins over the driver's view of it."""
        if watch.reason == "deadline":
            return _timeout(watch, "the client cut the connection")
        if watch.reason == "wire":
            return _too_many_bytes(self.max_result_bytes)
        if isinstance(exc, (QueryError, QueryTimeout, StoreError)):
            return exc
        if isinstance(exc, RecursionError):  # the driver unpacking a deeply nested value
            return QueryError(
                f"a result value nests lists or maps deeper than the client can read (limit {MAX_VALUE_DEPTH} levels)",
                kind="too_large",
            )
        return _translate(exc, self.uri, watch.timeout_s, watch.elapsed_s)

    def _terminate(self, token: str) -> None:
        """Ask the server to terminate the transactions carrying `token` in their metadata (runs on its own thread).

        The store's own statement, bounded by its own client deadline; failures are only logged,
        since the caller has already been answered."""
        try:
            with self.driver.session(database=self.database) as session, Watch(session, TERMINATE_TIMEOUT_S) as watch:
                ids = [
                    row[0]
                    for row in session.run(
                        "SHOW TRANSACTIONS YIELD transactionId, metaData "
                        f"WHERE metaData.{METADATA_KEY} = $token RETURN transactionId",
                        token=token,
                    )
                ]
                if ids and watch.reason is None:
                    session.run("TERMINATE TRANSACTIONS $ids", ids=ids).consume()
                    log.info("terminated server transaction(s) %s of a query the client stopped", ids)
        except Exception as exc:  # the server may be gone or the transaction already over
            log.debug("could not terminate the transaction of query %s: %s", token, exc)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for (label,) in self._introspect("CALL db.labels() YIELD label RETURN label"):
            counts[label] = self._introspect(f"MATCH (n:{_quote(label)}) RETURN count(n)")[0][0]
        for (rel_type,) in self._introspect(
            "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType"
        ):
            counts[rel_type] = self._introspect(f"MATCH ()-[r:{_quote(rel_type)}]->() RETURN count(r)")[0][0]
        return dict(sorted((k, v) for k, v in counts.items() if v))

    def _introspect(self, cypher: str) -> list[list[Any]]:
        return self._read(cypher, timeout_s=ADMIN_TIMEOUT_S).rows

    def schema(self) -> GraphSchema:
        """Labels, property types and relationship patterns read from the live database."""
        if self._schema is None:
            node_props: dict[str, dict[str, PropType]] = {}
            rel_props: dict[str, dict[str, PropType]] = {}
            for (label,) in self._introspect("CALL db.labels() YIELD label RETURN label"):
                node_props[label] = {}
            for (rel_type,) in self._introspect(
                "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType"
            ):
                rel_props[rel_type] = {}
            for labels, prop, types in self._introspect(
                "CALL db.schema.nodeTypeProperties() YIELD nodeLabels, propertyName, propertyTypes "
                "RETURN nodeLabels, propertyName, propertyTypes"
            ):
                for label in labels or []:
                    if prop and not prop.startswith("_"):
                        node_props.setdefault(label, {})[prop] = _map_types(types, f"{label}.{prop}")
            for rel_type, prop, types in self._introspect(
                "CALL db.schema.relTypeProperties() YIELD relType, propertyName, propertyTypes "
                "RETURN relType, propertyName, propertyTypes"
            ):
                name = _unquote_rel_type(rel_type)
                if prop and not prop.startswith("_"):
                    rel_props.setdefault(name, {})[prop] = _map_types(types, f"{name}.{prop}")
            patterns = {
                RelPattern(src, rel_type, dst)
                for src_labels, rel_type, dst_labels in self._introspect(
                    "MATCH (a)-[r]->(b) RETURN DISTINCT labels(a), type(r), labels(b)"
                )
                for src in src_labels
                for dst in dst_labels
            }
            self._schema = GraphSchema(node_props=node_props, rel_props=rel_props, patterns=sorted(patterns))
        return self._schema

    def close(self) -> None:
        self.driver.close()
        self._schema = None


# --- helpers --------------------------------------------------------------------------------


def _quote(name: str) -> str:
    """A Cypher identifier in backticks (backticks inside doubled)."""
    return "`" + name.replace("`", "``") + "`"


def _unquote_rel_type(text: str) -> str:
    """db.schema.relTypeProperties names types as ":`TYPE`"."""
    text = text[1:] if text.startswith(":") else text
    if text.startswith("`") and text.endswith("`"):
        text = text[1:-1].replace("``", "`")
    return text


def _present(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if v is not None}


def _batches(rows: list) -> Iterator[list]:
    for start in range(0, len(rows), LOAD_BATCH):
        yield rows[start : start + LOAD_BATCH]


def _map_types(types: list[str] | None, where: str) -> PropType:
    """Neo4j's property type names onto PropType; Long+Double mixes become FLOAT."""
    mapped = set()
    for name in types or []:
        if name not in _NEO4J_TYPES:
            raise StoreUnavailable(f"Neo4j property type {name!r} of {where} has no t2c equivalent")
        mapped.add(_NEO4J_TYPES[name])
    if len(mapped) == 1:
        return mapped.pop()
    if mapped == {PropType.INTEGER, PropType.FLOAT}:
        return PropType.FLOAT
    if mapped == {PropType.LIST_INTEGER, PropType.LIST_FLOAT}:
        return PropType.LIST_FLOAT
    if not mapped:
        raise StoreUnavailable(f"Neo4j reports no type for {where}")
    log.warning("property %s has mixed types %s; described as STRING", where, sorted(types or []))
    return PropType.STRING


def _check_read_only_plan(summary: neo4j.ResultSummary) -> None:
    """The EXPLAIN wall: a plan of type 'r' whose operators are all on READ_OPERATORS."""
    if summary.query_type != "r":
        kinds = {"w": "writes", "rw": "reads and writes", "s": "changes the schema or administers the DBMS"}
        raise UnsafeQuery(
            f"refused: the plan {kinds.get(summary.query_type or '', 'is not read-only')} (query type {summary.query_type!r})"
        )
    if not summary.plan:
        raise UnsafeQuery("refused: the server returned no plan to check")
    for name, details in _operators(summary.plan):
        if name == "ProcedureCall" and _procedure_name(details) in READ_PROCEDURES:
            continue
        if name not in READ_OPERATORS:
            raise UnsafeQuery(f"refused: the plan holds operator {name}, which is not a read of the graph")


def _operators(plan: Any) -> list[tuple[str, str]]:
    """(base operator name, details) of every operator in a plan tree (`Expand(All)@neo4j` -> `Expand`)."""
    if not isinstance(plan, dict):
        return []
    name = str(plan.get("operatorType", "")).split("@")[0].split("(")[0]
    details = str((plan.get("args") or plan.get("arguments") or {}).get("Details", ""))
    found = [(name, details)]
    for child in plan.get("children", []) or []:
        found += _operators(child)
    return found


def _procedure_name(details: str) -> str:
    """The lower-cased procedure name at the start of a ProcedureCall's details (`db.labels() :: ...`)."""
    return details.split("(")[0].strip().lower()


def _close_quietly(tx: neo4j.Transaction) -> None:
    try:
        tx.close()  # read-only: closing rolls back
    except Exception:  # the server may already have terminated it (timeout)
        pass


def _unavailable(exc: Exception, uri: str) -> StoreUnavailable:
    if isinstance(exc, nx.AuthError):
        where = "NEO4J_USER / NEO4J_PASSWORD"
        if config.is_loopback_uri(uri) and not config.env("NEO4J_PASSWORD"):
            where += f", or the local server's password in {config.local_neo4j_dir() / 'password'}"
        return StoreUnavailable(f"Neo4j at {uri} refused the credentials (check {where})")
    if _local_restart_pending(uri):
        return StoreUnavailable(
            f"the local Neo4j server at {uri} stopped (its heap ran out, or a query ran on past its time limit) "
            "and its supervisor is starting it again: try again in a few seconds"
        )
    return StoreUnavailable(
        f"no Neo4j server answers at {uri}: start one with `make neo4j` or set NEO4J_URI "
        f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    )


_EXIT_MARKERS = (b"T2C-NEO4J supervisor:", b"T2C-NEO4J runaway:", b"Terminating due to java.lang.OutOfMemoryError")
"""Log lines of a local server on its way out (the JVM's, the launcher's runaway watch, the supervisor's)."""


def _local_restart_pending(uri: str) -> bool:
    """Whether `make neo4j`'s supervisor for this loopback URI is alive and its server on its way out or
    starting again: the log's last word is an exit or a restart, not a READY line."""
    if not config.is_loopback_uri(uri):
        return False
    folder = config.local_neo4j_dir()
    try:
        pid = int((folder / "supervisor.pid").read_text(encoding="utf-8").strip())
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        with open(folder / "neo4j.log", "rb") as log_file:
            log_file.seek(0, 2)
            log_file.seek(max(0, log_file.tell() - 65536))
            tail = log_file.read()
    except (OSError, ValueError):
        return False
    if not (any(a.endswith(b"neo4j.sh") for a in args) and b"supervise" in args):
        return False
    last_exit = max(tail.rfind(marker) for marker in _EXIT_MARKERS)
    return last_exit > tail.rfind(b"T2C-NEO4J READY")


def _no_answer(uri: str, timeout_s: float) -> StoreUnavailable:
    """A server that took the connection but did not answer the store's own statement in time."""
    return StoreUnavailable(
        f"Neo4j at {uri} did not answer within {timeout_s:g} s (the server may be stuck: restart it, e.g. "
        "`make neo4j-stop` then `make neo4j`)"
    )


def _timeout(watch: Watch, how: str) -> QueryTimeout:
    """The time really taken, the limit, and which wall stopped the query."""
    return QueryTimeout(f"query stopped after {watch.elapsed_s:.1f} s (time limit {watch.timeout_s:g} s; {how})")


def _too_many_bytes(limit: int) -> ResultTooLarge:
    return ResultTooLarge(
        f"the query's result exceeds the limit of {limit:,} bytes (T2C_MAX_RESULT_BYTES); "
        "return fewer or smaller values (aggregate, filter, add LIMIT)"
    )


def is_timeout_error(code: str, message: str) -> bool:
    """A Neo4j error (code and message) that says the server stopped the transaction at its time limit."""
    return code in _TIMEOUT_CODES or (
        code.startswith("Neo.TransientError.Transaction.") and "timed out" in message.lower()
    )


def _translate(exc: Exception, uri: str, timeout_s: float, elapsed_s: float | None = None) -> Exception:
    """Driver errors -> QueryError(kind) / QueryTimeout / StoreUnavailable."""
    if isinstance(exc, (nx.ServiceUnavailable, nx.SessionExpired, nx.AuthError, nx.ConnectionAcquisitionTimeoutError)):
        return _unavailable(exc, uri)
    if isinstance(exc, nx.Neo4jError):
        code = exc.code or ""
        message = _clean_message(exc.message or str(exc))
        if is_timeout_error(code, message):
            took = f"after {elapsed_s:.1f} s " if elapsed_s is not None else "after "
            return QueryTimeout(f"query stopped {took}(time limit {timeout_s:g} s; the server's timeout)")
        if code in _RESOURCE_CODES:
            return ResourceLimit(f"the server ran out of memory it may give one query: {message}")
        if code in _WRITE_CODES:
            return QueryError(message, kind="write")
        if code == "Neo.ClientError.Statement.SyntaxError":
            return QueryError(message, kind="syntax" if _SYNTAX_MESSAGES.search(message) else "semantic")
        if code in ("Neo.ClientError.Procedure.ProcedureNotFound", "Neo.ClientError.Statement.EntityNotFound"):
            return QueryError(message, kind="semantic")
        return QueryError(message, kind="runtime")
    if isinstance(exc, nx.DriverError):
        return QueryError(f"{type(exc).__name__}: {exc}", kind="runtime")
    return exc


def _clean_message(message: str) -> str:
    """The server's message without the echoed query and caret lines."""
    lines = [line for line in message.splitlines() if line.strip()]
    kept = [line for line in lines if not line.lstrip().startswith('"') and line.strip() != "^"]
    return " ".join(kept or lines).strip()


def _convert(value: Any, depth: int = 0) -> Any:
    """neo4j driver values -> store-neutral values (internal `_` properties dropped), at most MAX_VALUE_DEPTH deep."""
    if depth > MAX_VALUE_DEPTH:
        raise QueryError(
            f"a result value nests lists or maps more than {MAX_VALUE_DEPTH} levels deep", kind="too_large"
        )
    if isinstance(value, neo4j.graph.Node):
        return GraphNode(tuple(sorted(value.labels)), _visible(value, depth))
    if isinstance(value, neo4j.graph.Relationship):
        return GraphRel(value.type, _visible(value, depth))
    if isinstance(value, neo4j.graph.Path):
        return GraphPath(
            tuple(_convert(n, depth + 1) for n in value.nodes),
            tuple(_convert(r, depth + 1) for r in value.relationships),
        )
    if isinstance(value, list):
        return [_convert(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _convert(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (neo4j.time.Date, neo4j.time.DateTime, neo4j.time.Time)):
        return value.to_native()
    if isinstance(value, neo4j.time.Duration):
        return _dt.timedelta(
            days=value.months * 30 + value.days, seconds=value.seconds, microseconds=value.nanoseconds // 1000
        )
    return value


def _visible(entity: Any, depth: int = 0) -> dict[str, Any]:
    return {k: _convert(v, depth + 1) for k, v in entity.items() if not k.startswith("_") and v is not None}
