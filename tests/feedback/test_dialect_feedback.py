"""Issue 50, item 5: the feedback names the LadybugDB form of a Neo4j form the embedded store refuses and no exact
rewrite covers (`toFloat`, `WITH ... ORDER BY` without LIMIT, a keyword as an alias), on the real chain; and no
published run met one of these messages, so their replies still answer the same requests."""

from __future__ import annotations

import gzip

import pytest

from t2c_lib.datasets import load_dataset
from t2c_lib.feedback.builder import FeedbackBuilder
from t2c_lib.feedback.dialect_hints import dialect_hints
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.validation.chain import build_chain, make_context, run_chain
from tests.helpers import FIXTURES, ROOT


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = LadybugStore(load_dataset(FIXTURES / "keywords"), root=tmp_path_factory.mktemp("ladybug-keywords"))
    yield store
    store.close()


@pytest.mark.parametrize(
    ("query", "language", "line"),
    [
        ("MATCH (o:Order) RETURN toFloat(o.number)", "en", "- LadybugDB has no toFloat(); write CAST(x AS DOUBLE)."),
        ("MATCH (o:Order) WITH o ORDER BY o.number RETURN o.desc", "en", "move the ORDER BY to the final RETURN"),
        (
            "MATCH (g:Group) RETURN g.name AS end",
            "en",
            "- `end` is a keyword of LadybugDB: write the name in backticks, `end`.",
        ),
        (
            "MATCH (o:Order) RETURN toFloat(o.number)",
            "id",
            "- LadybugDB tidak punya toFloat(); tulis CAST(x AS DOUBLE).",
        ),
    ],
)
def test_the_feedback_names_the_ladybug_form(store, query, language, line):
    failed = [r for r in run_chain(query, build_chain(store), make_context(store)) if not r.ok]
    assert failed, query
    text = FeedbackBuilder(store.schema(), language).build(failed[0], query)
    assert line in text


def test_an_ordinary_error_gets_no_dialect_line(store):
    query = "MATCH (o:Order) RETURN o.numbr"
    failed = [r for r in run_chain(query, build_chain(store), make_context(store)) if not r.ok]
    assert failed and dialect_hints(failed[0].message) == []
    assert dialect_hints("Parser exception: mismatched input 'WHERE' expecting ... RETURN x WHERE") == []


def test_no_published_attempt_meets_a_dialect_line():
    logs = sorted((ROOT / "results" / "published").rglob("attempts.jsonl.gz"))
    assert logs
    for path in logs:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            assert not any(dialect_hints(line) for line in handle), path
