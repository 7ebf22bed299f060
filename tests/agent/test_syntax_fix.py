"""The corrector's syntax rules (`agent/syntax_fix.py`) on token spans: what each fixes, and what each leaves alone."""

from __future__ import annotations

import pytest

from t2c_lib.agent.syntax_fix import clauses, fix_syntax, order_of_one_row, sort_in_projection, where_after_return
from t2c_lib.cypher.lexer import Dialect, tokenize

LB = Dialect.LADYBUG


@pytest.mark.parametrize(
    ("query", "fixed"),
    [
        (
            "MATCH (m:MK) WHERE m.semester = 3 RETURN m.sks DESC, m.nama ORDER BY m.sks DESC",
            "MATCH (m:MK) WHERE m.semester = 3 RETURN m.sks, m.nama ORDER BY m.sks DESC",
        ),
        (
            "MATCH (m:MK) RETURN m.nama, m.sks desc LIMIT 5",
            "MATCH (m:MK) RETURN m.nama, m.sks ORDER BY m.sks desc LIMIT 5",
        ),
        ("MATCH (m:MK) RETURN m.sks AS s ASC", "MATCH (m:MK) RETURN m.sks AS s ORDER BY s ASC"),
        (
            "MATCH (m:MK) WITH m.nama AS n, m.sks DESC RETURN n",
            "MATCH (m:MK) WITH m.nama AS n, m.sks ORDER BY m.sks DESC RETURN n",
        ),
    ],
)
def test_a_sort_direction_inside_a_projection_moves_to_an_order_by(query, fixed):
    text, changes = sort_in_projection(query, LB)
    assert text == fixed and len(changes) == 1


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (m:MK) RETURN m.nama ORDER BY m.sks DESC",
        "MATCH (m:MK) RETURN m.nama AS desc",
        "MATCH (m:MK) RETURN [x IN [1] | x] AS xs ORDER BY xs DESC",
        "MATCH (m:MK) WHERE m.nama = 'DESC' RETURN m.nama",
    ],
)
def test_a_valid_sort_or_a_word_that_only_looks_like_one_is_left_alone(query):
    assert sort_in_projection(query, LB) == (query, [])


def test_an_order_by_after_a_return_of_aggregates_only_is_dropped():
    text, changes = order_of_one_row(
        "MATCH (p:MK) RETURN count(DISTINCT p) AS n, max(p.sks) ORDER BY p.nama LIMIT 3", LB
    )
    assert text == "MATCH (p:MK) RETURN count(DISTINCT p) AS n, max(p.sks) LIMIT 3"
    assert changes == ["`ORDER BY p.nama` dropped: the RETURN holds only aggregates, so its result is one row"]


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (p:MK) RETURN p.semester, count(p) ORDER BY p.semester",  # a grouping key: many rows
        "MATCH (p:MK) RETURN count(p) * 2 AS n ORDER BY n",  # not one bare aggregate call
        "MATCH (p:MK) RETURN count(p) AS n ORDER BY n UNION MATCH (q:LO) RETURN count(q) AS n",
    ],
)
def test_an_order_by_that_may_order_several_rows_stays(query):
    assert order_of_one_row(query, LB) == (query, [])


@pytest.mark.parametrize(
    ("query", "fixed"),
    [
        (
            "MATCH (l:LO) RETURN count(DISTINCT l.x) AS n WHERE l.sks IN [2, 3] ORDER BY n",
            "MATCH (l:LO) WHERE l.sks IN [2, 3] RETURN count(DISTINCT l.x) AS n ORDER BY n",
        ),
        (
            "MATCH (m:MK) WHERE m.a = 1 OR m.b = 2 RETURN m.nama WHERE m.nama STARTS WITH 'A'",
            "MATCH (m:MK) WHERE (m.a = 1 OR m.b = 2) AND (m.nama STARTS WITH 'A') RETURN m.nama",
        ),
    ],
)
def test_a_where_after_return_moves_before_it(query, fixed):
    text, changes = where_after_return(query, LB)
    assert text == fixed and len(changes) == 1


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (m:MK) RETURN m.nama AS n WHERE n = 'x'",  # names the RETURN's alias
        "MATCH (p:MK) RETURN count(p) AS j WHERE count(p) <= 10 RETURN j",  # an aggregate, a second RETURN
        "UNWIND [1, 2] AS x RETURN x WHERE x > 1",  # UNWIND takes no WHERE
    ],
)
def test_a_where_after_return_with_another_reading_is_left_alone(query):
    assert where_after_return(query, LB) == (query, [])


def test_starts_with_and_a_pattern_where_are_not_clauses():
    found = clauses(tokenize("MATCH (m:MK WHERE m.sks > 2) WHERE m.nama STARTS WITH 'A' RETURN m", LB))
    assert [c.word for c in found] == ["MATCH", "WHERE", "RETURN"]


def test_fix_syntax_applies_every_rule_in_turn():
    text, changes = fix_syntax("MATCH (m:MK) RETURN count(m) AS n WHERE m.sks = 3 ORDER BY m.nama", LB)
    assert text == "MATCH (m:MK) WHERE m.sks = 3 RETURN count(m) AS n" and len(changes) == 2
