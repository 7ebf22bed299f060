"""CyVer's validators as the chain's syntax/schema/properties steps on the live Neo4j store."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import neo4j
import pytest

from t2c_lib.agent import KG_VALID_STEPS, ErrorType
from t2c_lib.errors import UnsafeQuery
from t2c_lib.graph.neo4j_limits import GRACE_S
from t2c_lib.validation import build_chain, make_context, run_chain
from t2c_lib.validation.chain import STEP_NAMES, chain_names
from t2c_lib.validation.cyver import CyVerPropertiesStep, CyVerSchemaStep, CyVerSyntaxStep, cyver_steps
from tests.helpers import FIXTURES, ROOT, read_cases
from tests.helpers import neo4j as neo4j_helpers

pytestmark = pytest.mark.neo4j

CASES = read_cases(FIXTURES / "neo4j" / "cyver_cases.cypher")


@pytest.fixture(scope="module")
def neo4j_chain(neo4j_session_store, kurikulum):
    store = neo4j_session_store
    if store.dataset is not kurikulum or not store.is_loaded():
        store.load(kurikulum)
    chain = build_chain(store)
    yield chain, make_context(store, timeout_s=5.0)
    chain[1].cyver.close()


def test_the_neo4j_chain_uses_cyver(neo4j_chain):
    chain, _ = neo4j_chain
    assert chain_names(chain) == list(STEP_NAMES)
    assert [type(s) for s in chain[1:4]] == [CyVerSyntaxStep, CyVerSchemaStep, CyVerPropertiesStep]


@pytest.mark.parametrize("title,query", CASES, ids=[c[0].split("|")[-1].strip() for c in CASES])
def test_cyver_verdicts_map_to_error_types(neo4j_chain, title, query):
    expected, step, code, needle, _ = (part.strip() for part in title.split("|"))
    chain, ctx = neo4j_chain
    results = run_chain(query, chain, ctx)
    by_name = {r.validator: r for r in results}
    if expected == "OK":
        assert all(r.ok for r in results) and len(results) == len(chain), results[-1].message
        assert all(by_name[s].ok for s in KG_VALID_STEPS)
        return
    last = results[-1]
    assert not last.ok and all(r.ok for r in results[:-1])
    assert last.validator == step, (last.validator, last.message)
    assert last.error_type is ErrorType(expected), (last.error_type, last.message)
    assert last.details.get("validator_impl") == "cyver" and "cyver_error" not in last.details
    assert code in last.details["codes"], last.details["codes"]
    assert needle.lower() in last.message.lower(), last.message
    assert "\n" not in last.message
    if step == "schema":
        assert last.details["cyver_score"] < 1
    if step == "properties":
        assert 0 <= last.details["cyver_score"] < 1


def test_every_gold_query_is_kg_valid_under_cyver(neo4j_chain, kurikulum):
    chain, ctx = neo4j_chain
    failures = []
    for item in kurikulum.questions:
        results = run_chain(item.cypher, chain, ctx)
        if not all(r.ok for r in results):
            failures.append((item.id, results[-1].validator, results[-1].message))
    assert failures == []


def test_suggestions_for_unknown_names(neo4j_chain):
    chain, ctx = neo4j_chain
    last = run_chain("MATCH (t:Topik)-[:PURSUED]->(m:MK) RETURN t.nama", chain, ctx)[-1]
    assert last.error_type is ErrorType.SCHEMA_ERROR
    assert last.details["suggestions"] == {"Topik": ["topic"], "PURSUED": ["PURSUED_IN"]}
    last = run_chain("MATCH (m:MK) RETURN m.semster", chain, ctx)[-1]
    (entry,) = last.details["unknown_properties"]
    assert entry["owners"] == ["MK"] and entry["closest"] == ["semester"]


def test_verdicts_repeat(neo4j_chain):
    """CyVer samples a label for unlabelled variables; the fixed seed makes verdicts repeat."""
    chain, ctx = neo4j_chain
    query = "MATCH (m:MK)<-[:PURSUED_IN]-(t) RETURN t.foo"
    first = [r.to_dict() for r in run_chain(query, chain, ctx)]
    for _ in range(3):
        again = [r.to_dict() for r in run_chain(query, chain, ctx)]
        assert [(r["validator"], r["ok"], r["message"]) for r in again] == [
            (r["validator"], r["ok"], r["message"]) for r in first
        ]


def test_cyver_driver_cannot_write(neo4j_chain, neo4j_kurikulum):
    chain, _ = neo4j_chain
    driver = chain[1].cyver.driver
    assert isinstance(driver, neo4j.Driver)
    before = neo4j_kurikulum.counts()
    with pytest.raises(UnsafeQuery, match="refused before the database"):  # the stores' gate
        driver.execute_query("CREATE (:Intruder)")
    with pytest.raises(UnsafeQuery, match="refused before the database"):
        driver.execute_query("CREATE (:Intruder)", routing_=neo4j.RoutingControl.WRITE)
    with pytest.raises(UnsafeQuery, match="LOAD CSV|data-loading"):
        driver.execute_query("EXPLAIN LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row")
    with driver.session() as session, pytest.raises(neo4j.exceptions.ClientError, match="read access mode"):
        session.run("CREATE (:Intruder)").consume()
    assert neo4j_kurikulum.counts() == before


def test_cyver_queries_carry_the_time_limit(neo4j_chain):
    chain, _ = neo4j_chain
    driver = chain[1].cyver.driver
    old = driver.t2c_timeout_s
    driver.t2c_timeout_s = 0.5
    try:
        with pytest.raises(neo4j.exceptions.ClientError, match="(?i)terminated|timed out"):
            driver.execute_query(
                "UNWIND range(1, 1000000) AS x UNWIND range(1, 1000000) AS y WITH x, y WHERE x + y < 0 RETURN count(*)"
            )
    finally:
        driver.t2c_timeout_s = old


def test_a_cyver_crash_falls_back_to_the_builtin_step(neo4j_kurikulum, monkeypatch):
    syntax, schema, properties = cyver_steps(neo4j_kurikulum)
    try:

        def broken(query, database_name=None):
            raise ValueError("regex trouble")

        monkeypatch.setattr(schema.cyver.schema, "validate", broken)
        ctx = make_context(neo4j_kurikulum)
        verdict = schema.validate("MATCH (m:Matkul) RETURN m", ctx)
        assert verdict.validator == "schema" and not verdict.ok
        assert verdict.error_type is ErrorType.SCHEMA_ERROR
        assert verdict.details["cyver_error"] == "ValueError: regex trouble"
        ctx.reset()
        assert schema.validate("MATCH (m:MK) RETURN m.nama", ctx).ok
    finally:
        syntax.cyver.close()


# --- a client deadline on every CyVer call (issue 36) -------------------------------------------------

NOTS = "RETURN " + "NOT " * 1995 + "true AS x"
"""1,995 chained NOTs: the server's parser overflows and it never answers (CyVer waited for ever)."""


def test_every_cyver_call_ends_at_the_deadline(neo4j_kurikulum, monkeypatch):
    """With the gate bypassed inside CyVer's driver, its EXPLAIN of a query the server never answers is
    cut at the time limit plus the grace and becomes a TIMEOUT verdict (no fallback that waits again)."""
    import t2c_lib.validation.cyver as cyver_module

    monkeypatch.setattr(cyver_module, "admit", lambda text, *args, **kwargs: text)
    syntax, schema, properties = cyver_steps(neo4j_kurikulum, timeout_s=1.0)
    try:
        ctx = make_context(neo4j_kurikulum, timeout_s=1.0)
        started = time.perf_counter()
        verdict = syntax.validate(NOTS, ctx)
        took = time.perf_counter() - started
        print(f"CyVer syntax on 1,995 NOTs: {verdict.error_type} after {took:.2f} s: {verdict.message}")
        assert verdict.error_type is ErrorType.TIMEOUT and "cyver_error" not in verdict.details
        assert took < 1.0 + GRACE_S + 1.0
        ctx.reset()
        assert syntax.validate("MATCH (m:MK) RETURN m.nama", ctx).ok  # the session goes on
    finally:
        syntax.cyver.close()


def test_validate_on_neo4j_returns_on_chained_nots(neo4j_session_store):
    """`t2c validate --store neo4j` on 1,995 NOTs never returned; the gate now refuses it at once (the fixture: a
    server answers, or the test skips as every Neo4j test does)."""
    env = {**os.environ, "NEO4J_URI": neo4j_helpers.test_uri()}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", "validate", "--store", "neo4j", "--timeout", "5", NOTS],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    took = time.perf_counter() - started
    print(f"t2c validate --store neo4j on 1,995 NOTs: exit {done.returncode} after {took:.1f} s")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "chains 1995 operators" in done.stdout
    assert took < 60
