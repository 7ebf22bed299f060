"""The validator chain on the real embedded store, driven by fixture cases."""

from __future__ import annotations

import pytest

from t2c_lib.agent import ErrorType
from t2c_lib.graph.facts import NEO4J_FACTS
from t2c_lib.validation import build_chain, make_context, run_chain
from t2c_lib.validation.chain import STEP_NAMES, chain_names
from tests.helpers import FIXTURES, read_cases

CASES = read_cases(FIXTURES / "validation" / "chain_cases.cypher")


@pytest.fixture(scope="module")
def chain_ctx(kurikulum_store):
    ctx = make_context(kurikulum_store, timeout_s=1.0)
    return build_chain(kurikulum_store), ctx


def test_chain_order(kurikulum_store):
    assert chain_names(build_chain(kurikulum_store)) == list(STEP_NAMES)


@pytest.mark.parametrize(
    "title,query",
    # a TIMEOUT case waits out the store's time limit twice (the timeout retry): `make test` runs it
    [pytest.param(*c, marks=pytest.mark.slow) if c[0].startswith("TIMEOUT") else c for c in CASES],
    ids=[c[0].split("|")[-1].strip() for c in CASES],
)
def test_chain_case(chain_ctx, title, query):
    expected, validator, needle, _ = (part.strip() for part in title.split("|"))
    chain, ctx = chain_ctx
    results = run_chain(query, chain, ctx)
    if expected == "OK":
        assert [r.validator for r in results] == list(STEP_NAMES)
        assert all(r.ok for r in results), results[-1].message
        assert ctx.result is not None and ctx.result.rows
        return
    last = results[-1]
    assert not last.ok
    assert all(r.ok for r in results[:-1]), "the chain must stop at the first failure"
    assert last.validator == validator, (last.validator, last.message)
    assert last.error_type is ErrorType(expected), (last.error_type, last.message)
    assert needle.lower() in last.message.lower(), last.message
    assert last.elapsed_s >= 0.0


def test_binder_error_on_name_is_deferred_not_a_syntax_error(chain_ctx):
    """LadybugDB's EXPLAIN rejects an unknown label; the syntax step passes it on to the schema step."""
    chain, ctx = chain_ctx
    results = run_chain("MATCH (m:Matkul) RETURN m.nama", chain, ctx)
    by_name = {r.validator: r for r in results}
    assert by_name["syntax"].ok and by_name["syntax"].details["deferred"] == "SCHEMA_ERROR"
    assert by_name["schema"].details["suggestions"] == {"Matkul": ["MK"]}


def test_wrong_direction_details_name_the_valid_pattern(chain_ctx):
    chain, ctx = chain_ctx
    last = run_chain("MATCH (m:MK)-[:PURSUED_IN]->(t:topic) RETURN t", chain, ctx)[-1]
    edge = last.details["bad_edges"][0]
    assert edge["reversed"] is True
    assert edge["valid"] == ["(:topic)-[:PURSUED_IN]->(:MK)"]


def test_empty_result_value_hint(chain_ctx):
    chain, ctx = chain_ctx
    last = run_chain("MATCH (m:MK) WHERE m.nama = 'basis data' RETURN m.sks", chain, ctx)[-1]
    hint = last.details["value_hints"][0]
    assert (hint["label"], hint["property"], hint["value"]) == ("MK", "nama", "basis data")
    assert hint["closest"][0] == "Basis Data"


def test_case_sensitive_store_rejects_other_case(kurikulum_store):
    """With case-sensitive names (Neo4j's rule) the same query is a schema error naming the right case."""
    ctx = make_context(kurikulum_store)
    ctx.case_sensitive_names = True
    last = run_chain("MATCH (m:mk) RETURN m.nama", build_chain(kurikulum_store), ctx)[-1]
    assert last.error_type is ErrorType.SCHEMA_ERROR and "`MK`" in last.message


def test_neo4j_store_without_cyver_falls_back(kurikulum_store, monkeypatch):
    """build_chain for a store that declares CyVer's checks uses them when present, else the built-in ones."""
    import importlib

    class NamedNeo4j:
        name = "neo4j"
        facts = NEO4J_FACTS

    real_import = importlib.import_module

    def no_cyver(name, *args):
        if name == "t2c_lib.validation.cyver":
            raise ImportError("no module named t2c_lib.validation.cyver")
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_cyver)
    assert chain_names(build_chain(NamedNeo4j())) == list(STEP_NAMES)


def test_context_reset_between_queries(chain_ctx):
    chain, ctx = chain_ctx
    run_chain("MATCH (m:Matkul) RETURN m", chain, ctx)
    assert ctx.deferred is not None
    results = run_chain("MATCH (m:MK) RETURN m.nama LIMIT 1", chain, ctx)
    assert all(r.ok for r in results) and ctx.deferred is None


def test_every_gold_query_and_example_passes_the_whole_chain(chain_ctx, kurikulum):
    """No false alarms: the 52 gold queries and the few-shot examples are valid, non-empty reads."""
    chain, ctx = chain_ctx
    queries = [(item.id, item.cypher) for item in kurikulum.questions]
    queries += [(f"example-{i}", ex.cypher) for i, ex in enumerate(kurikulum.examples, 1)]
    assert len(queries) >= 52
    for name, query in queries:
        results = run_chain(query, chain, ctx)
        assert all(r.ok for r in results) and len(results) == len(chain), (name, query, results[-1].message)
