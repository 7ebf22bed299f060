"""The read-only guard on fixture corpora: every write/admin query refused, every read query passed, in both dialects."""

from __future__ import annotations

import pytest

from t2c_lib.agent import ErrorType
from t2c_lib.cypher.lexer import Dialect, Kind, tokenize
from t2c_lib.graph.facts import LADYBUG_FACTS, NEO4J_FACTS, StoreFacts
from t2c_lib.validation.guard import ReadOnlyGuard, check_read_only
from tests.helpers import READ_CASES, WRITE_CASES


def dialects_of(title: str) -> list[Dialect]:
    """The dialects a read case is for: a procedure case names its store ("(Neo4j)", "(LadybugDB)"), others are both."""
    if "(Neo4j)" in title:
        return [Dialect.NEO4J]
    if "(LadybugDB)" in title:
        return [Dialect.LADYBUG]
    return list(Dialect)


READ_BY_DIALECT = [(t, q, d) for t, q in READ_CASES for d in dialects_of(t)]
WRITE_BY_DIALECT = [(t, q, d) for t, q in WRITE_CASES for d in Dialect]


def test_corpora_are_large_enough():
    assert len(WRITE_CASES) >= 60
    assert len(READ_CASES) >= 30
    assert all(q.strip() for _, q in WRITE_CASES + READ_CASES)


@pytest.mark.parametrize(
    "title,query,dialect", WRITE_BY_DIALECT, ids=[f"{d.value}-{t}" for t, _, d in WRITE_BY_DIALECT]
)
def test_write_and_admin_queries_are_rejected(title, query, dialect):
    clause = title.split("|")[0].strip()
    verdict = check_read_only(query, dialect)
    assert verdict.validator == "guard"
    assert not verdict.ok
    assert verdict.error_type is ErrorType.UNSAFE_QUERY
    assert clause.lower() in verdict.message.lower(), verdict.message
    assert clause.lower().split()[-1] in verdict.details["clause"].lower()


@pytest.mark.parametrize("title,query,dialect", READ_BY_DIALECT, ids=[f"{d.value}-{t}" for t, _, d in READ_BY_DIALECT])
def test_read_queries_pass(title, query, dialect):
    verdict = check_read_only(query, dialect)
    assert verdict.ok, verdict.message
    assert verdict.error_type is None


def test_each_store_calls_only_its_own_procedures():
    assert not check_read_only("CALL db.labels() YIELD label RETURN label", Dialect.LADYBUG).ok
    assert not check_read_only("CALL show_tables() RETURN *", Dialect.NEO4J).ok
    assert check_read_only("CALL show_tables() RETURN *").ok  # the default is the embedded store's dialect


def test_the_guard_step_judges_in_its_stores_dialect():
    class Store:
        def __init__(self, facts: StoreFacts) -> None:
            self.facts = facts

    class Context:
        def __init__(self, facts: StoreFacts) -> None:
            self.store = Store(facts)

    query = "CALL db.labels() YIELD label RETURN label"
    assert ReadOnlyGuard().validate(query, Context(NEO4J_FACTS)).ok
    refused = ReadOnlyGuard().validate(query, Context(LADYBUG_FACTS))
    assert not refused.ok and refused.validator == "guard" and "db.labels" in refused.message
    assert not ReadOnlyGuard().validate(query, None).ok


def test_issue_examples():
    assert check_read_only("MATCH (n {name: 'CREATE'}) RETURN n").ok
    refused = check_read_only("MATCH (n) SET n.x = 'a'")
    assert not refused.ok and "SET" in refused.message
    tricked = check_read_only("MATCH (n) RETURN n // ' \n CREATE (m)")
    assert not tricked.ok and "CREATE" in tricked.message


@pytest.mark.parametrize("query", ["", "   \n\t", "// only a comment", "/* nothing */"])
def test_empty_query_is_no_query(query):
    verdict = check_read_only(query)
    assert not verdict.ok and verdict.error_type is ErrorType.NO_QUERY


@pytest.mark.parametrize("query", ["MATCH (n {nama: 'open) RETURN n", "MATCH (n) /* RETURN n", "MATCH (`n) RETURN 1"])
def test_unreadable_query_is_a_syntax_error_not_a_pass(query):
    verdict = check_read_only(query)
    assert not verdict.ok and verdict.error_type is ErrorType.SYNTAX_ERROR
    assert "unterminated" in verdict.message


def test_tokenizer_keeps_literals_whole_and_drops_comments():
    toks = tokenize("MATCH (n:`My Label` {x: 'a // b'}) /* c */ RETURN n.x // d")
    texts = [t.text for t in toks]
    assert "My Label" in texts and "'a // b'" in texts
    assert "c" not in texts and "d" not in texts
    assert [t.kind for t in toks if t.text == "'a // b'"] == [Kind.STRING]


def test_number_dot_is_not_property_access():
    toks = tokenize("WHERE n.x = 1.5 AND m.y = 2 RETURN 1..3")
    assert [t.text for t in toks if t.kind is Kind.NUMBER] == ["1.5", "2", "1", "3"]
