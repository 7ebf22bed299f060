"""Issue 50, item 1: a graph whose names are LadybugDB keywords (`Order`, `Group`, `IN`, `end`, `desc`) works on both stores.

The keyword list is the installed parser's (`tools/ladybug_keywords.py`); the embedded store builds
the graph with quoted names, its gold (written for Neo4j, names bare) passes the gold screen, a
model's `(o:Order)` passes the validator chain, and (marker `neo4j`) Neo4j gives the same answers.
"""

from __future__ import annotations

import sys
import warnings

import ladybug
import pytest

from t2c_lib.cypher.dialect import normalise
from t2c_lib.cypher.ladybug_keywords import KEYWORDS
from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.metrics.equivalence import ordering, results_equivalent
from t2c_lib.study.screen import OrderProbe, screen_gold
from t2c_lib.validation.chain import build_chain, make_context, run_chain
from tests.helpers import FIXTURES, ROOT
from tests.helpers.neo4j import open_neo4j

sys.path.insert(0, str(ROOT / "tools"))

import ladybug_keywords

EXPECTED = {
    "keywords-001": [[3]],
    "keywords-002": [["Retail"]],
    "keywords-003": [[37.5]],
    "keywords-004": [[1002], [1003]],
    "keywords-005": [["Retail"]],
    "keywords-006": [["Retail"], ["Wholesale"]],
    "keywords-007": [["Semi-final"]],
    "keywords-008": [["Retail"], ["Wholesale"]],
    "keywords-009": [["Retail", 2], ["Wholesale", 1]],
    "keywords-010": [["third order"]],
    "keywords-011": [[2]],
}
"""The answer of every gold pair of tests/fixtures/keywords, worked out by hand from its CSVs."""


@pytest.fixture(scope="module")
def keywords():
    return load_dataset(FIXTURES / "keywords")


@pytest.fixture(scope="module")
def keywords_store(keywords, tmp_path_factory):
    store = LadybugStore(keywords, root=tmp_path_factory.mktemp("ladybug-keywords"))
    yield store
    store.close()


def _parses(conn, text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            prepared = conn.prepare(text)
        except RuntimeError as exc:
            return not str(exc).startswith("Parser exception")
    return prepared.is_success() or not prepared.get_error_message().startswith("Parser exception")


def test_the_listed_words_are_the_parsers_keywords_in_any_case():
    db = ladybug.Database(":memory:")
    conn = ladybug.Connection(db)
    try:
        for word in ("Order", "GROUP", "end", "Union", "desc"):
            assert word.upper() in KEYWORDS
            assert not _parses(conn, f"MATCH (n:{word}) RETURN n")
            assert _parses(conn, f"MATCH (n:`{word}`) RETURN n")
        for word in ("Match", "Set", "Call", "Limit", "Key"):  # Neo4j keywords LadybugDB takes as names
            assert word.upper() not in KEYWORDS
            assert _parses(conn, f"MATCH (n:{word}) RETURN n")
    finally:
        conn.close()
        db.close()


@pytest.mark.slow  # probes about 3,000 words (a few seconds)
def test_the_committed_keyword_list_is_what_the_installed_parser_says():
    assert ladybug_keywords.generated() == ladybug_keywords.TARGET.read_text(encoding="utf-8")


def test_a_keyword_graph_loads_and_every_neo4j_gold_query_keeps_its_answer(keywords, keywords_store, tmp_path):
    assert keywords_store.counts() == {"Order": 3, "Group": 2, "Match": 2, "IN": 3, "PLAYED_BY": 3}
    probe = OrderProbe.open(keywords, root=tmp_path, forward=keywords_store)
    try:
        screen = screen_gold(keywords, keywords_store, order_probe=probe)
    finally:
        probe.close()
    assert screen.dropped == [] and len(screen.kept) == len(EXPECTED)
    for item in keywords.questions:
        assert "`" not in item.cypher  # the gold is written for Neo4j: names bare
        rows = keywords_store.query(item.cypher).rows
        assert rows == EXPECTED[item.id], (item.id, rows)


def test_the_schema_text_shows_the_names_as_written_for_neo4j(keywords_store):
    text = keywords_store.schema().render("full_schema")
    assert "- (:Order {desc: STRING, end: STRING, number: INTEGER, total: FLOAT})-[:IN]->(:Group" in text
    assert "`" not in text


def test_a_models_keyword_label_is_not_a_syntax_error(keywords_store):
    chain = build_chain(keywords_store)
    ctx = make_context(keywords_store)
    results = run_chain("MATCH (o:Order)-[r:IN]->(g:Group) WHERE r.order = 1 RETURN o.desc, g.default", chain, ctx)
    assert all(r.ok for r in results), [(r.validator, r.message) for r in results if not r.ok]
    syntax = next(r for r in results if r.validator == "syntax")
    assert syntax.details["dialect_rewrites"] == ["keyword_name"]


def test_without_the_rewrite_the_embedded_parser_refuses_the_gold(keywords_store):
    # why the rule exists: the bare label is a parser error on LadybugDB
    db = ladybug.Database(str(keywords_store.db_path), read_only=True)
    conn = ladybug.Connection(db)
    try:
        assert not _parses(conn, "MATCH (o:Order) RETURN count(o)")
        assert _parses(conn, normalise("MATCH (o:Order) RETURN count(o)").query)
    finally:
        conn.close()
        db.close()


@pytest.mark.neo4j
def test_neo4j_gives_the_same_answers_to_the_same_gold(keywords, keywords_store):
    neo4j = open_neo4j(keywords)
    try:
        if not neo4j.is_loaded():
            neo4j.load(keywords)
        for item in keywords.questions:
            theirs = neo4j.query(item.cypher)
            ours = keywords_store.query(item.cypher)
            assert theirs.rows, item.id
            assert results_equivalent(theirs, ours, ordered=ordering(item.cypher) or False), item.id
    finally:
        neo4j.close()
