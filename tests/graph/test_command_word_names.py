"""Issue 55, item 6: a command word used as a name is a name; the command itself is still refused.

`MATCH (m:MK) RETURN m.sks AS install ORDER BY install` was refused by the query process's own
word check (`graph/ladybug_words.py`) as if it were `INSTALL`: the check read a command word
anywhere it was followed by another word. LadybugDB's grammar starts such a command only at a
statement's start; where a value or a name is owed (after `AS`, `RETURN`, `,`, `BY`, `.`, `:`,
...) the word is a name. Benign reads with such aliases, variables, properties and map keys now
run on the real embedded store and give rows; every command (`INSTALL x`, `LOAD EXTENSION`,
`ATTACH '...'`, `COPY`, a command after a complete value or after `;`) is still refused, by the
gate, by the word check alone, and the walls' regression fixtures stay green in their own files.
Neo4j's `CALL db.labels()` on the embedded store is a clear semantic error naming LadybugDB's
equivalent, not an unsafe query.
"""

from __future__ import annotations

import time

import pytest

from t2c_lib.cypher.gate import Refusal, gate_check
from t2c_lib.cypher.lexer import Dialect
from t2c_lib.cypher.readonly import NEO4J_SCHEMA_CALLS
from t2c_lib.errors import QueryError, UnsafeQuery
from t2c_lib.graph.ladybug_words import file_or_code_word, withheld_reason

WORDS = ("install", "uninstall", "attach", "detach", "copy", "export", "import", "use", "checkpoint", "update", "load")

BENIGN = (
    "MATCH (m:MK) RETURN m.sks AS {w} ORDER BY {w} DESC LIMIT 3",
    "MATCH (m:MK) WITH m.sks AS {w} WHERE {w} > 2 RETURN {w} LIMIT 3",
    "MATCH (m:MK) WITH m AS {w} RETURN {w}.nama AS nama LIMIT 3",
    "MATCH ({w}:MK) RETURN {w}.nama LIMIT 3",
    "MATCH (m:MK) RETURN count(*) AS {w}, m.tipe AS t ORDER BY {w} DESC",
    "UNWIND [1, 2] AS {w} RETURN {w}, {w} + 1 AS next",
    "MATCH (m:MK) WITH collect(m.sks) AS {w} UNWIND {w} AS s RETURN s LIMIT 3",
    "MATCH (m:MK) RETURN {{{w}: m.sks}} AS x LIMIT 3",
)


def _benign() -> list[str]:
    return [template.format(w=word) for word in WORDS for template in BENIGN]


@pytest.mark.parametrize("query", _benign())
def test_a_command_word_as_a_name_passes_gate_and_word_check(query):
    assert gate_check(query).ok, gate_check(query).message
    assert gate_check(query, dialect=Dialect.NEO4J).ok
    assert file_or_code_word(query) is None
    if "detach" not in query and "load" not in query:
        assert withheld_reason(query) is None  # DETACH and LOAD also start clauses: a name only right after AS there


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (m:MK) RETURN m.sks AS install",  # the issue's own query
        "MATCH (m:MK) RETURN m.sks AS uninstall ORDER BY uninstall",
        "MATCH (m:MK) RETURN m.sks AS attach, m.nama AS copy ORDER BY attach LIMIT 5",
        "MATCH (m:MK) WITH m.sks AS import WHERE import >= 3 RETURN import, count(*) AS n ORDER BY import",
        "MATCH (detach:MK) RETURN detach.nama AS use ORDER BY use LIMIT 2",
    ],
)
def test_benign_reads_with_keyword_names_give_rows_on_the_embedded_store(kurikulum_store, query):
    result = kurikulum_store.query(query, timeout_s=10)
    assert result.rows, query


@pytest.mark.parametrize("query", _benign()[:: len(BENIGN) + 1])
def test_the_word_check_alone_passes_them_in_the_query_process(kurikulum_store, query):
    """The worker with the gate skipped: its word check no longer refuses a name."""
    if "install" in query.split() or "{install" in query:
        pytest.skip("INSTALL is a reserved word of LadybugDB's parser: a bare `install` is its syntax error")
    reply = kurikulum_store._worker().call(
        {"op": "run", "text": query, "max_rows": 100, "max_bytes": 1 << 20}, time.perf_counter(), 10.0
    )
    assert reply is not None


COMMANDS = [
    "INSTALL json",
    "install httpfs",
    "UNINSTALL json",
    "EXPLAIN INSTALL json",
    "LOAD EXTENSION '/tmp/x.so'",
    "LOAD json",
    "ATTACH '/tmp/other.lbug' AS other (dbtype lbug)",
    "DETACH other",
    "USE other",
    "COPY MK FROM '/etc/passwd'",
    "COPY (MATCH (m:MK) RETURN m.nama) TO '/tmp/leak.csv'",
    "EXPORT DATABASE '/tmp/x'",
    "IMPORT DATABASE '/tmp/x'",
    "CHECKPOINT",
    "UPDATE json",
    "LOAD FROM '/etc/passwd' RETURN *",
    "MATCH (m:MK) LOAD FROM '/etc/passwd' RETURN *",
    "RETURN 1; INSTALL json",
    "RETURN 1; CHECKPOINT",
    "MATCH (m:MK) RETURN m AS x INSTALL json",  # a command after a complete value
    "MATCH (m:MK) WITH m AS install INSTALL json",  # after an alias named like it
    "MATCH (m:MK) RETURN m.sks AS explain INSTALL json",
    "MATCH (m:MK) RETURN 1 AS x UNION INSTALL json",
    "MATCH (m:MK) WITH * INSTALL json",
    "MATCH (m:MK) WITH m RETURN m ATTACH '/tmp/x' AS y",
    "CALL load_extension('/tmp/x.so')",
    "CALL db.labels() YIELD label INSTALL json",
]


@pytest.mark.parametrize("query", COMMANDS)
def test_the_commands_themselves_are_still_refused_by_the_gate(query):
    verdict = gate_check(query)
    assert not verdict.ok and verdict.refusal is not Refusal.TOO_LARGE, query


@pytest.mark.parametrize(
    "query",
    [
        q
        for q in COMMANDS
        if not q.startswith(("CALL", "MATCH (m:MK) RETURN 1 AS x UNION", "MATCH (m:MK) WITH m RETURN"))
    ],
)
def test_the_word_check_alone_still_refuses_the_commands(query):
    assert file_or_code_word(query) is not None, query
    assert withheld_reason(query) is not None, query


@pytest.mark.parametrize(
    "query", ["INSTALL json", "ATTACH '/tmp/x.lbug' AS y (dbtype lbug)", "LOAD EXTENSION '/tmp/x.so'"]
)
def test_the_embedded_store_refuses_the_commands(kurikulum_store, query):
    with pytest.raises(UnsafeQuery):
        kurikulum_store.query(query, timeout_s=5)
    with pytest.raises(UnsafeQuery):  # the gate skipped: the query process's word check
        kurikulum_store._worker().call(
            {"op": "run", "text": query, "max_rows": 10, "max_bytes": 1 << 16}, time.perf_counter(), 5.0
        )


@pytest.mark.parametrize("name", sorted(NEO4J_SCHEMA_CALLS))
def test_a_neo4j_schema_procedure_on_the_embedded_store_is_a_semantic_error_naming_the_equivalent(name):
    verdict = gate_check(f"CALL {name}()")
    assert verdict.refusal is Refusal.UNKNOWN_WORD, verdict
    assert "Neo4j procedure" in verdict.message and "LadybugDB" in verdict.message
    assert "show_tables" in verdict.message or "table_info" in verdict.message
    assert gate_check(f"CALL {name}()", dialect=Dialect.NEO4J).ok  # where it exists, it runs


def test_the_equivalent_the_refusal_names_runs_on_the_embedded_store(kurikulum_store):
    with pytest.raises(QueryError) as refused:
        kurikulum_store.query("CALL db.labels()", timeout_s=5)
    assert refused.value.kind == "syntax" and not isinstance(refused.value, UnsafeQuery)
    tables = kurikulum_store.query("CALL show_tables() RETURN name, type", timeout_s=10)
    assert {"MK", "NODE"} <= {value for row in tables.rows for value in row}


def test_a_forbidden_procedure_is_still_unsafe_on_both_stores():
    for dialect in (Dialect.LADYBUG, Dialect.NEO4J):
        verdict = gate_check("CALL dbms.security.createUser('x', 'y')", dialect=dialect)
        assert verdict.refusal is Refusal.NOT_READ_ONLY, verdict
    assert gate_check("CALL apoc.cypher.runWrite('CREATE (n)', {})", dialect=Dialect.NEO4J).refusal is (
        Refusal.NOT_READ_ONLY
    )


def test_a_ladybug_keyword_neo4j_does_not_have_is_backticked_as_an_alias_or_variable():
    from t2c_lib.cypher.dialect import normalise

    done = normalise("MATCH (m:MK) RETURN m.sks AS install ORDER BY install DESC")
    assert done.query == "MATCH (m:MK) RETURN m.sks AS `install` ORDER BY `install` DESC"
    assert normalise("RETURN install(1) AS x").query == "RETURN install(1) AS x"  # a function's name stays
    assert not gate_check("INSTALL json").ok  # the command is refused before any rewrite
