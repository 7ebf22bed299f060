"""The Neo4j store on a live server: parity with the embedded store, the read-only walls, errors, timeouts."""

from __future__ import annotations

import time

import pytest

from t2c_lib.agent import ErrorType
from t2c_lib.graph.base import (
    GraphNode,
    GraphPath,
    GraphRel,
    QueryError,
    QueryTimeout,
    ResultTooLarge,
    StoreError,
    StoreUnavailable,
    UnsafeQuery,
)
from t2c_lib.graph.neo4j import Neo4jStore
from t2c_lib.metrics.equivalence import has_order_by, results_equivalent
from t2c_lib.schema import SchemaFormat
from t2c_lib.validation.base import ValidationContext
from t2c_lib.validation.steps import ExecutionStep

pytestmark = pytest.mark.neo4j

LONG_QUERY = "UNWIND range(1, 1000000) AS x UNWIND range(1, 1000000) AS y WITH x, y WHERE x + y < 0 RETURN count(*)"


def _gold_ids():
    from t2c_lib.datasets import load_dataset

    return [q.id for q in load_dataset("kurikulum").questions]


def fingerprint(store: Neo4jStore) -> tuple:
    """Everything a write could change: counts, every node's and relationship's properties, constraints."""
    nodes = store._read("MATCH (n) RETURN labels(n) AS l, properties(n) AS p ORDER BY n._key, l").rows
    rels = store._read(
        "MATCH (a)-[r]->(b) RETURN a._key, type(r), b._key, properties(r) ORDER BY a._key, type(r), b._key"
    ).rows
    constraints = store._admin("SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name")
    return store.counts(), repr(nodes), repr(rels), constraints


# --- parity with the embedded store ---------------------------------------------------------


def test_counts_match_the_dataset(neo4j_kurikulum, kurikulum):
    assert neo4j_kurikulum.counts() == kurikulum.expected_counts()
    assert neo4j_kurikulum.is_loaded()


@pytest.mark.parametrize("fmt", list(SchemaFormat), ids=[f.value for f in SchemaFormat])
def test_schema_texts_identical_to_embedded(neo4j_kurikulum, kurikulum_store, fmt):
    neo4j_kurikulum._schema = None  # introspect afresh from the live database
    assert neo4j_kurikulum.schema().render(fmt) == kurikulum_store.schema().render(fmt)


def test_schema_parity_with_floats_lists_and_nulls(neo4j_session_store, tiny_dataset, tiny_store):
    """The tiny fixture has FLOAT, LIST<STRING>, relationship properties and absent values."""
    neo4j_session_store.load(tiny_dataset)
    try:
        for fmt in SchemaFormat:
            assert neo4j_session_store.schema().render(fmt) == tiny_store.schema().render(fmt)
        query = "MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) RETURN p, r, m ORDER BY p.name"
        assert neo4j_session_store.query(query).rows == tiny_store.query(query).rows
    finally:
        neo4j_session_store._schema = None


@pytest.mark.parametrize("question_id", _gold_ids())
def test_gold_query_equivalent_on_both_stores(neo4j_kurikulum, kurikulum_store, kurikulum, question_id):
    item = kurikulum.question(question_id)
    embedded = kurikulum_store.query(item.cypher)
    server = neo4j_kurikulum.query(item.cypher)
    assert server.rows, f"{question_id}: gold query returned nothing on Neo4j"
    assert results_equivalent(embedded, server, ordered=has_order_by(item.cypher)), (
        f"{question_id}: {item.cypher}\nembedded: {embedded.rows[:5]}\nneo4j:    {server.rows[:5]}"
    )


def test_reload_is_idempotent(neo4j_kurikulum, kurikulum):
    before = fingerprint(neo4j_kurikulum)
    assert neo4j_kurikulum.load(kurikulum) == kurikulum.expected_counts()
    assert fingerprint(neo4j_kurikulum) == before


def test_graph_values_are_store_neutral(neo4j_kurikulum):
    row = neo4j_kurikulum.query(
        "MATCH (t:topic)-[r:PURSUED_IN]->(m:MK {nama: 'Struktur Data'}) RETURN m, r, t LIMIT 1"
    ).rows[0]
    node, rel, topic = row
    assert isinstance(node, GraphNode) and node.labels == ("MK",)
    assert node.properties["nama"] == "Struktur Data" and "_key" not in node.properties
    assert rel == GraphRel("PURSUED_IN", {})
    assert isinstance(topic, GraphNode) and topic.labels == ("topic",)
    path = neo4j_kurikulum.query("MATCH p = (:MK)-[:PREREQUISITE]->(:MK) RETURN p LIMIT 1").rows[0][0]
    assert isinstance(path, GraphPath) and len(path.nodes) == 2 and path.rels[0].type == "PREREQUISITE"
    assert all("_key" not in n.properties for n in path.nodes)


# --- read-only walls -----------------------------------------------------------------------


@pytest.mark.parametrize("gate", ["with the gate", "gate bypassed"])
def test_write_corpus_leaves_the_graph_unchanged(neo4j_kurikulum, request, gate):
    """Every write/admin case of the guard's corpus, sent to the store; without the gate the EXPLAIN wall refuses."""
    if gate == "gate bypassed":
        request.getfixturevalue("gate_bypassed")
    from tests.helpers import WRITE_CASES

    before = fingerprint(neo4j_kurikulum)
    ran = []
    for title, query in WRITE_CASES:
        try:
            neo4j_kurikulum.query(query, timeout_s=5.0)
        except (QueryError, QueryTimeout):
            continue
        ran.append(title)
    assert fingerprint(neo4j_kurikulum) == before
    # Only a query that is itself a plan request may run (as EXPLAIN EXPLAIN ...: nothing executes).
    assert [t for t in ran if not t.startswith("EXPLAIN")] == []


def test_write_corpus_bypassing_explain_is_refused_by_the_server(neo4j_kurikulum):
    """The READ transaction alone (no guard, no EXPLAIN wall) still changes nothing."""
    from tests.helpers import WRITE_CASES

    data_writes = ("CREATE", "MERGE", "SET", "DELETE", "DETACH DELETE", "REMOVE", "FOREACH")
    before = fingerprint(neo4j_kurikulum)
    for title, query in WRITE_CASES:
        clause = title.split("|")[0].strip()
        try:
            neo4j_kurikulum._read(query, timeout_s=5.0)
        except (QueryError, QueryTimeout) as exc:
            if clause in data_writes and isinstance(exc, QueryError) and exc.kind not in ("syntax", "semantic"):
                assert exc.kind == "write", f"{title}: {exc}"
    assert fingerprint(neo4j_kurikulum) == before


def test_server_refuses_a_write_in_a_read_transaction(neo4j_kurikulum):
    before = neo4j_kurikulum.counts()
    with pytest.raises(QueryError) as info:
        neo4j_kurikulum._read("CREATE (n:Intruder {name: 'x'}) RETURN n")
    assert info.value.kind == "write"
    assert "read access mode" in str(info.value)
    assert neo4j_kurikulum.counts() == before
    assert "Intruder" not in neo4j_kurikulum.counts()


@pytest.mark.parametrize(
    "query,why",
    [
        ("CREATE (n:Intruder) RETURN n", "query type"),
        ("MATCH (m:MK) SET m.sks = 0", "query type"),
        ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "operator LoadCSV"),
        ("LOAD CSV FROM 'http://127.0.0.1:9/x.csv' AS line RETURN line", "operator LoadCSV"),
        ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "operator TerminateTransactions"),
        ("SHOW INDEXES", "operator ShowIndexes"),
        ("SHOW DATABASES", "query type"),
        ("CALL db.info()", "operator ProcedureCall"),
        ("CALL { MATCH (m:MK) RETURN m.nama AS n } IN TRANSACTIONS RETURN n", "operator"),
    ],
)
def test_explain_wall_refuses_before_execution(neo4j_kurikulum, monkeypatch, query, why):
    """The gate refuses each first; with the gate bypassed, the EXPLAIN plan wall refuses it on its own."""
    with pytest.raises(UnsafeQuery, match="refused before the database"):
        neo4j_kurikulum.query(query)
    import t2c_lib.graph.neo4j as store_module

    monkeypatch.setattr(store_module, "admit", lambda text, *args, **kwargs: text)
    with pytest.raises(UnsafeQuery) as info:
        neo4j_kurikulum.query(query)
    assert info.value.kind == "unsafe"
    assert why in str(info.value)


def test_allow_listed_schema_procedures_still_run(neo4j_kurikulum):
    assert ["MK"] in neo4j_kurikulum.query("CALL db.labels()").rows


def test_a_runaway_result_is_capped_on_neo4j(neo4j_kurikulum):
    with pytest.raises(ResultTooLarge, match="more than the limit of 10,000 rows"):
        neo4j_kurikulum.query("MATCH (a:topic), (b:topic) RETURN a.nama, b.nama", timeout_s=20)


# --- errors and time limits ----------------------------------------------------------------


@pytest.mark.parametrize(
    "query,kind",
    [
        ("MATCH (m:MK {nama: 'Basis Data' RETURN m.sks", "syntax"),
        ("MATCH (m:MK) RETURN m.nama; MATCH (t:topic) RETURN t", "syntax"),
        ("MATCH (m:MK) RETURN x.sks", "semantic"),
        ("MATCH (m:MK) RETURN fooBar(m.sks)", "semantic"),
        ("CALL db.noSuchProcedure()", "semantic"),
        ("RETURN 1 / 0", "runtime"),
        ("RETURN toInteger([1, 2])", "runtime"),
    ],
)
def test_errors_map_to_kinds(neo4j_kurikulum, gate_bypassed, query, kind):
    """The server's own errors, classified (the gate bypassed: it refuses two statements and unknown procedures first)."""
    with pytest.raises(QueryError) as info:
        neo4j_kurikulum.query(query)
    assert info.value.kind == kind, str(info.value)
    assert "\n" not in str(info.value)


def test_explain_compiles_without_running(neo4j_kurikulum):
    neo4j_kurikulum.explain(LONG_QUERY)  # would run for minutes; EXPLAIN returns at once
    with pytest.raises(QueryError) as info:
        neo4j_kurikulum.explain("MATCH (m:MK RETURN m")
    assert info.value.kind == "syntax"


def test_query_past_the_time_limit_is_stopped(neo4j_kurikulum):
    started = time.perf_counter()
    with pytest.raises(QueryTimeout):
        neo4j_kurikulum.query(LONG_QUERY, timeout_s=1.0)
    assert time.perf_counter() - started < 10.0
    assert neo4j_kurikulum.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]  # still serving


def test_timeout_is_reported_as_timeout_by_the_chain(neo4j_kurikulum):
    ctx = ValidationContext(store=neo4j_kurikulum, schema=neo4j_kurikulum.schema(), timeout_s=1.0)
    verdict = ExecutionStep().validate(LONG_QUERY, ctx)
    assert not verdict.ok and verdict.error_type is ErrorType.TIMEOUT


# --- construction ----------------------------------------------------------------------------


def test_constructed_from_the_environment_alone(neo4j_kurikulum, kurikulum, monkeypatch):
    monkeypatch.setenv("NEO4J_URI", neo4j_kurikulum.uri)
    store = Neo4jStore(kurikulum)
    try:
        assert store.uri == neo4j_kurikulum.uri
        assert store.is_loaded()
        assert store.query("MATCH (s:SO) RETURN count(s)").rows == [[11]]
    finally:
        store.close()


def test_open_store_picks_neo4j(neo4j_kurikulum, kurikulum, monkeypatch):
    from t2c_lib.graph import open_store

    monkeypatch.setenv("NEO4J_URI", neo4j_kurikulum.uri)
    store = open_store("neo4j", kurikulum)
    try:
        assert store.name == "neo4j" and store.counts() == kurikulum.expected_counts()
    finally:
        store.close()


def test_foreign_data_is_not_replaced_unasked(neo4j_session_store, kurikulum):
    store = neo4j_session_store
    store.load(kurikulum)
    store._admin("MATCH (n) DETACH DELETE n")
    for (name,) in store._admin("SHOW CONSTRAINTS YIELD name RETURN name"):
        store._admin(f"DROP CONSTRAINT `{name}`")
    store._admin("CREATE (:Precious {name: 'not t2c data'})")
    try:
        with pytest.raises(StoreError, match="holds data that t2c did not load"):
            store.load(kurikulum)
        assert store._read("MATCH (p:Precious) RETURN p.name").rows == [["not t2c data"]]
        store.replace_foreign = True
        assert store.load(kurikulum) == kurikulum.expected_counts()
    finally:
        store.replace_foreign = False
    assert "Precious" not in store.counts()


def test_unknown_database_is_named(neo4j_kurikulum, kurikulum):
    with pytest.raises(StoreUnavailable, match="no database 'nosuchdb'"):
        Neo4jStore(kurikulum, uri=neo4j_kurikulum.uri, database="nosuchdb")
