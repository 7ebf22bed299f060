"""The gate's limits on work inside one expression (issue 36): regex, nested range loops, doubling
reduce, nesting and operator chains. Text only: no database; the Neo4j tests show the same texts
end on a live server (tests/graph/test_neo4j_walls.py)."""

from __future__ import annotations

import pytest

from t2c_lib.cypher.gate import Refusal, gate_check
from t2c_lib.cypher.lexer import tokenize
from t2c_lib.cypher.limits import (
    MAX_EXPRESSION_DEPTH,
    MAX_OPERATOR_CHAIN,
    QueryLimits,
    nesting_depth,
    operator_depth,
    token_problem,
)
from t2c_lib.cypher.regex_check import MAX_UNBOUNDED_QUANTIFIERS, decode_literal, pattern_problem
from t2c_lib.datasets import load_dataset

SUBJECT = "'" + "a" * 40 + "'"

ISSUE_REGEXES = [r"(.*a){8}x", r"\u0028a+\u0029+$", ".*.*.*.*.*.*.*.*x"]
"""The issue's three patterns that ran 10-17 s+ past the client deadline (as written in the query)."""

REFUSED_REGEXES = [
    *ISSUE_REGEXES,
    "(a+)+$",
    "((a+)+)+$",
    "(a*)*b",
    "(x+x+)+y",
    "(ab|a)*c",
    "(a|b)*c",
    "(a|[a-z])*x",
    "(a|aa){2,}",
    "(?:a{2,3}){5}",
    "(?>a+)+",
    "(?=(a+)+)b",
    ".{0,500}.{0,500}.{0,500}.{0,500}x",
    ".*.*.*x",
    "(?i).*the.*of.*",
    ".*.{0,9}.*x",
    r"(a)\\1",
    "(?<name>a)",
    "[a-",
    "(?x)a b",
    "a**",
]
ALLOWED_REGEXES = [
    "(?i).*matrix.*",
    "^[A-Z][a-z]+$",
    "(?i)^the .*",
    "[A-Za-z ]{1,50}",
    r"\\d{1,3}(,\\d{3})*",
    r"\\d{4}-\\d{2}-\\d{2}",
    "(?i)(tom|keanu) .*",
    "[a|b]+c",
    r"\\p{L}+ \\p{Lu}",
    "a{3}b{2}",
    r"\\Q(a+)+\\E",
]


def refusal(query: str) -> Refusal | None:
    return gate_check(query, rewrite=False).refusal


def gold_queries() -> list[str]:
    """Every gold query, few-shot example and conversation query of both datasets."""
    texts: list[str] = []
    for name in ("kurikulum", "movies"):
        ds = load_dataset(name)
        texts += [item.cypher for item in ds.questions]
        texts += [ex.cypher for ex in ds.examples]
        for dialogue in ds.conversations:
            texts += [getattr(turn, "cypher", "") for turn in getattr(dialogue, "turns", [])]
    return [text for text in texts if text]


# --- regex ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", REFUSED_REGEXES)
def test_dangerous_or_unreadable_patterns_are_refused(pattern):
    verdict = gate_check(f"RETURN {SUBJECT} =~ '{pattern}' AS m", rewrite=False)
    assert verdict.refusal is Refusal.TOO_LARGE, verdict.message
    assert "regular expression" in verdict.message


@pytest.mark.parametrize("pattern", ALLOWED_REGEXES)
def test_ordinary_patterns_pass(pattern):
    verdict = gate_check(f"MATCH (m:Movie) WHERE m.title =~ '{pattern}' RETURN m.title", rewrite=False)
    assert verdict.ok, verdict.message


def test_the_pattern_is_judged_decoded():
    """`\\u0028` is `(` to the database's regex engine, so it is to the rule."""
    assert decode_literal(r"'\u0028a+\u0029+$'") == "(a+)+$"
    assert decode_literal(r"'\U00000028\\d\''") == "(\\d'"
    assert pattern_problem("(a+)+$") is not None
    assert pattern_problem(decode_literal(r"'\u0028a\u0029+$'")) is None


def test_the_unbounded_quantifier_cap():
    at_cap = ".*a" * MAX_UNBOUNDED_QUANTIFIERS
    assert pattern_problem(at_cap) is None
    assert "unbounded or wide quantifiers" in (pattern_problem(at_cap + ".*") or "")


@pytest.mark.parametrize(
    "operand",
    ["$pattern", "m.title", "'a' + '(b+)+$'", "'(b+)' + '+$'", "('(a+)+$')", "toString('x')", "'a' || '(b+)+'"],
)
def test_a_pattern_must_be_one_literal(operand):
    verdict = gate_check(f"MATCH (m:Movie) WHERE m.title =~ {operand} RETURN m", rewrite=False)
    assert verdict.refusal is Refusal.TOO_LARGE and "one string literal" in verdict.message


# --- nested loops over ranges, doubling reduce -------------------------------------------------------

REFUSED_LOOPS = [
    "RETURN size([a IN range(1, 999) | [b IN range(1, 999) | [c IN range(1, 999) | c]]]) AS n",
    "RETURN [a IN range(1, 999) | [b IN range(1, 999) | size(range(1, 999))]] AS n",
    "RETURN any(a IN range(1, 999) WHERE any(b IN range(1, 999) WHERE any(c IN range(1, 999) WHERE a + b = c))) AS x",
    "RETURN reduce(s = 0, a IN range(1, 999) | s + reduce(t = 0, b IN range(1, 999) | t + size(range(1, 999)))) AS x",
    "WITH range(1, 999) AS r RETURN size([a IN r | [b IN r | [c IN r | 1]]]) AS n",
    "WITH range(1, 999) AS r WITH r AS s RETURN size([a IN s | [b IN s | [c IN s | 1]]]) AS n",
    "WITH [x IN range(1, 999) | x] AS r RETURN size([a IN r | [b IN r | [c IN r | 1]]]) AS n",
    "UNWIND range(1, 999) AS x WITH collect(x) AS xs RETURN size([a IN xs | [b IN xs | [c IN xs | 1]]]) AS n",
    "UNWIND [a IN range(1, 999) | [b IN range(1, 999) | [c IN range(1, 999) | c]]] AS r RETURN count(r)",
    "RETURN size([a IN range(1, 3000) | [b IN range(1, 3000) | b]]) AS n",
    "RETURN [a IN range(1, 10) | range(1, 1000000)] AS n",
    "RETURN size([a IN range(0, size([1, 2]) + 999) | [b IN range(0, size([1]) + 999) | range(1, 999)]]) AS n",
]
ALLOWED_LOOPS = [
    "RETURN size([a IN range(1, 999) | [b IN range(1, 999) | b]]) AS n",
    "RETURN size(range(1, 1000000)) AS n",
    "UNWIND range(1, 999) AS a UNWIND range(1, 999) AS b RETURN count(*) AS n",
    "UNWIND range(1, 1000) AS a RETURN size([b IN range(1, 1000) | b]) AS n",
    "MATCH (m:Movie) WITH collect(m) AS ms RETURN size([a IN ms | [b IN ms | 1]]) AS n",
    "RETURN reduce(s = 0, x IN range(1, 1000) | s + x) AS total",
    "RETURN reduce(m = 0, x IN [3, 1, 2] | CASE WHEN x > m THEN x ELSE m END) AS biggest",
    "RETURN [x IN range(0, 10, 2) | x * x] AS squares",
]


@pytest.mark.parametrize("query", REFUSED_LOOPS)
def test_nested_range_loops_are_bounded_by_their_product(query):
    verdict = gate_check(query, rewrite=False)
    assert verdict.refusal is Refusal.TOO_LARGE and "nested loops over ranges" in verdict.message, verdict.message


@pytest.mark.parametrize("query", ALLOWED_LOOPS)
def test_loops_within_the_bound_pass(query):
    verdict = gate_check(query, rewrite=False)
    assert verdict.ok, verdict.message


@pytest.mark.parametrize(
    "query",
    [
        "RETURN reduce(s = 'a', x IN range(1, 40) | s + s) AS s",
        "RETURN size(reduce(s = 'ab', i IN range(1, 25) | s + 'x' + s)) AS n",
        "RETURN reduce(l = [1], x IN range(1, 40) | l + [y IN l | y]) AS l",
        "RETURN reduce(s = 'a', x IN [1, 2, 3] | s || s) AS s",
        "RETURN reduce(`s` = 'a', x IN range(1, 40) | `s` + `s`) AS s",
    ],
)
def test_a_doubling_reduce_is_refused(query):
    verdict = gate_check(query, rewrite=False)
    assert verdict.refusal is Refusal.TOO_LARGE and "double" in verdict.message, verdict.message


# --- nesting, operator chains ---------------------------------------------------------------------------


def test_end_closes_only_case():
    """`end` as a name closed a bracket in the old count, so 320 real levels counted as 1."""
    query = "WITH 1 AS end RETURN " + "(end + " * 320 + "1" + ")" * 320 + " AS x"
    assert nesting_depth(tokenize(query)) == 320
    assert refusal(query) is Refusal.TOO_LARGE
    query = "WITH {end: 1} AS m RETURN " + "(" * 20 + "m.end + CASE WHEN m.end > 0 THEN 1 END" + ")" * 20 + " AS x"
    assert nesting_depth(tokenize(query)) == 21
    assert refusal(query) is None


def test_case_nesting_counts():
    query = "RETURN " + "CASE WHEN true THEN " * 40 + "1" + " END" * 40 + " AS x"
    assert nesting_depth(tokenize(query)) == 40
    assert refusal(query) is Refusal.TOO_LARGE


@pytest.mark.parametrize(
    "query",
    [
        "RETURN " + "NOT " * 1995 + "true AS x",
        "RETURN " + "NOT " * (MAX_OPERATOR_CHAIN + 1) + "true AS x",
        "RETURN " + " + ".join(["1"] * 300) + " AS x",
        "RETURN " + " AND ".join(["true"] * 100) + " AS x",
        "MATCH (n) RETURN n" + ".a" * 100,
        "RETURN -" + "(-" * 30 + "1" + ")" * 30 + " " + "- 1 " * 100,
    ],
)
def test_long_operator_chains_are_refused(query):
    verdict = gate_check(query, rewrite=False)
    assert verdict.refusal is Refusal.TOO_LARGE, verdict.message


def test_operators_and_brackets_add_up():
    """30 brackets deep (under the bracket limit), each holding 5 NOTs: 180 levels along one path."""
    query = "RETURN " + "NOT NOT NOT NOT NOT (" * 30 + "true" + ")" * 30 + " AS x"
    chain, depth = operator_depth(tokenize(query))
    assert chain == 5 and depth > MAX_EXPRESSION_DEPTH
    assert refusal(query) is Refusal.TOO_LARGE


# --- no false refusals ------------------------------------------------------------------------------------


def test_no_gold_query_or_example_meets_a_limit():
    """The limits (not the read-only rules, tested elsewhere) refuse none of the 535 gold/example queries."""
    texts = gold_queries()
    assert len(texts) > 400
    refused = [(text, token_problem(tokenize(text), QueryLimits())) for text in texts]
    assert [pair for pair in refused if pair[1]] == []
    deepest = max(operator_depth(tokenize(text))[1] for text in texts)
    assert deepest * 4 < MAX_EXPRESSION_DEPTH
