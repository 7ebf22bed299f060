"""Neo4j-dialect normalisation for the embedded store: exact rewrites, untouched queries,
answers equal to a plain LadybugDB query and (marker `neo4j`) to Neo4j's, the guard's
verdict unchanged, and the validator chain naming the rewrites it applied."""

from __future__ import annotations

import ladybug
import pytest
import yaml

from t2c_lib.cypher.dialect import RULES, normalise
from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.metrics.equivalence import results_equivalent
from t2c_lib.validation.chain import build_chain, make_context, run_chain
from t2c_lib.validation.guard import check_read_only
from tests.helpers import FIXTURES
from tests.helpers.neo4j import open_neo4j

CASES = yaml.safe_load((FIXTURES / "dialect" / "rewrites.yaml").read_text(encoding="utf-8"))


def write_queries() -> list[str]:
    """The guard's write/admin fixture queries (one per `##` case)."""
    cases, current = [], None
    for line in (FIXTURES / "guard" / "write_queries.cypher").read_text(encoding="utf-8").splitlines():
        if line.startswith("##"):
            current = []
            cases.append(current)
        elif current is not None:
            current.append(line)
    return ["\n".join(c).strip() for c in cases if "\n".join(c).strip()]


@pytest.mark.parametrize("case", CASES["rewrites"], ids=lambda c: c["name"])
def test_rewrite(case):
    out = normalise(case["input"])
    assert out.query == case["output"]
    assert list(out.applied) == case["applied"]
    if "substring_base" not in case["applied"]:  # substring's output is valid Neo4j too: it must run once
        assert normalise(out.query).query == out.query  # nothing left to rewrite


@pytest.mark.parametrize("query", CASES["untouched"])
def test_untouched(query):
    out = normalise(query)
    assert out.query == query and out.applied == ()


def test_every_rule_has_a_rewrite_case_and_an_agreement_case():
    names = {name for name, _ in RULES}
    assert names == {r for c in CASES["rewrites"] for r in c["applied"]}
    assert names == {c["rule"] for c in CASES["agreement"]}


@pytest.fixture(scope="module")
def movies():
    return load_dataset("movies")


@pytest.fixture(scope="module")
def movies_store(movies, tmp_path_factory):
    store = LadybugStore(movies, root=tmp_path_factory.mktemp("ladybug-dialect"))
    yield store
    store.close()


@pytest.mark.parametrize("case", CASES["agreement"], ids=lambda c: f"{c['rule']}:{c['query'][:40]}")
def test_rewritten_query_answers_like_a_plain_ladybug_query(case, movies_store):
    assert normalise(case["plain"]).applied == ()  # the reference needs no rewrite
    ours = movies_store.query(case["query"])
    plain = movies_store.query(case["plain"])
    assert ours.rows, "the case must have an answer to compare"
    assert results_equivalent(plain, ours, ordered=bool(case.get("ordered")))


def test_size_of_pattern_is_silently_wrong_without_the_rewrite(movies_store):
    # LadybugDB runs size((pattern)) without counting matches: the reason the rule exists
    db = ladybug.Database(str(movies_store.db_path), read_only=True)
    try:
        raw = ladybug.Connection(db).execute(
            "MATCH (m:Movie {title: 'The Matrix'}) RETURN size((m)<-[:ACTED_IN]-(:Person))"
        )
        assert raw.get_next()[0] != 5
    finally:
        db.close()
    assert movies_store.query("MATCH (m:Movie {title: 'The Matrix'}) RETURN size((m)<-[:ACTED_IN]-(:Person))").rows == [
        [5]
    ]


@pytest.mark.parametrize("query", write_queries()[:200])
def test_normalising_never_turns_a_rejected_query_into_an_accepted_one(query):
    assert not check_read_only(query).ok
    assert not check_read_only(normalise(query).query).ok


def test_validator_chain_reports_the_rewrites(movies_store):
    chain = build_chain(movies_store)
    ctx = make_context(movies_store)
    results = run_chain(
        "MATCH (p:Person)-[r]->(m:Movie) WHERE exists{ (p)-[:DIRECTED]->(m) } RETURN type(r)", chain, ctx
    )
    syntax = next(r for r in results if r.validator == "syntax")
    assert syntax.ok and syntax.details["dialect_rewrites"] == ["exists_subquery", "type_function"]
    assert all(r.ok for r in results)
    plain = run_chain("MATCH (m:Movie) RETURN m.title", chain, ctx)
    assert "dialect_rewrites" not in next(r for r in plain if r.validator == "syntax").details


@pytest.mark.neo4j
@pytest.mark.parametrize("case", CASES["agreement"], ids=lambda c: f"{c['rule']}:{c['query'][:40]}")
def test_rewritten_query_answers_like_neo4j(case, movies, movies_store):
    neo4j = open_neo4j(movies)
    try:
        if not neo4j.is_loaded():
            neo4j.load(movies)
        theirs = neo4j.query(case.get("neo4j") or case["query"])
    finally:
        neo4j.close()
    ours = movies_store.query(case["query"])
    assert theirs.rows
    assert results_equivalent(theirs, ours, ordered=bool(case.get("ordered")))
