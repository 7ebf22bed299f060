"""CypherBench's execution accuracy (EX) as a pure function, so a t2c number can sit beside theirs.

The rules as CypherBench defines them (its `execution_accuracy`, adapted there from
test-suite-sql-eval), reproduced here over t2c's `QueryResult`s:

- Text shortcut: a generated query whose text equals the gold's exactly scores 1, before
  anything runs (even when the gold query fails).
- Row order matters when the gold text contains `order by` anywhere, lower-cased, with one
  space: in a WITH, a subquery, a string literal or a comment alike; `ORDER\\nBY` does not.
- Values: lists (and sets) are sorted, so `collect()` order never matters; maps become
  sorted (key, value) pairs, NULL-valued entries kept; nodes are the maps of their
  properties (what the Neo4j driver's `Record.data()` gives: labels are not compared);
  dates their ISO text. Numbers compare with Python's `==`: `3 == 3.0`, `True == 1`,
  no float tolerance. A value that cannot be sorted or hashed (a path; a list mixing
  NULL or incomparable types) makes the comparison fail: CypherBench scores such a
  prediction 0 (and crashes on such a gold; here it scores 0).
- Two empty results are equal, one empty result is not; different row or column counts
  are not. Otherwise some column permutation must make the rows equal: as lists when
  order matters, else as bags (after a quick check on the sets of rows whose values are
  sorted within the row).
- A query that fails scores 0.

Where t2c's own rules (`equivalence.py`) differ: t2c treats only a final ORDER BY as
ordering, lets tied rows come in any order, compares numbers with a float tolerance,
keeps booleans apart from numbers, drops NULL map entries, compares nodes with their
labels, compares paths, and never scores a query by its text.
Deviations forced by t2c's stores: relationships become (type, properties) (the driver's
form needs both end nodes, which t2c's values do not carry), and t2c's internal node key
(`_key`) is left out of node properties.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from t2c_lib.graph.base import INTERNAL_KEY, GraphNode, GraphPath, GraphRel, QueryResult


class Executed(Protocol):
    """What `output.execute` returns, as far as EX needs it (the scoring presets import this module, output imports them)."""

    result: QueryResult | None


CYPHERBENCH_VERSION = "cypherbench-ex:v1"


class Unhashable(TypeError):
    """A value CypherBench's conversion cannot turn into a comparable form."""


def hashable(value: Any) -> Any:
    """CypherBench's hashable form of one result value (rules above)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, GraphPath):
        raise Unhashable("a path has no hashable form under CypherBench's rules")
    if isinstance(value, GraphNode):
        return hashable({k: v for k, v in value.properties.items() if k != INTERNAL_KEY})
    if isinstance(value, GraphRel):
        return (value.type, hashable(dict(value.properties)))
    if isinstance(value, dict):
        return _sorted(tuple((hashable(k), hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set, frozenset)):
        return _sorted(tuple(hashable(v) for v in value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise Unhashable(f"unhashable value of type {type(value).__name__}")


def _sorted(items: tuple) -> tuple:
    try:
        return tuple(sorted(items))
    except TypeError as exc:  # NULL beside a number, a string beside a number, ...
        raise Unhashable(str(exc)) from None


def order_matters(gold_query: str) -> bool:
    """CypherBench's reading: `order by` anywhere in the lower-cased gold text."""
    return "order by" in gold_query.lower()


def cypherbench_equivalent(
    gold_query: str,
    generated_query: str | None,
    gold: QueryResult | None,
    generated: QueryResult | None,
) -> bool:
    """Whether CypherBench's EX counts `generated` correct (None = that query failed)."""
    if generated_query is not None and generated_query == gold_query:
        return True
    if gold is None or generated is None:
        return False
    try:
        g_rows = [tuple(hashable(v) for v in row) for row in gold.rows]
        p_rows = [tuple(hashable(v) for v in row) for row in generated.rows]
    except Unhashable:
        return False
    return rows_equal(g_rows, p_rows, order_matters(gold_query))


def rows_equal(gold: Sequence[tuple], generated: Sequence[tuple], ordered: bool) -> bool:
    """test-suite-sql-eval's denotation equality: some column permutation makes the rows equal."""
    if not gold and not generated:
        return True
    if len(gold) != len(generated) or not gold or not generated:
        return False
    width = len(gold[0])
    if len(generated[0]) != width:
        return False
    if not _same_unordered_rows(gold, generated, ordered):
        return False
    gold_columns = [{row[i] for row in gold} for i in range(width)]
    generated_columns = [{row[j] for row in generated} for j in range(width)]
    # a generated column can only stand for a gold column whose values include all of its own
    candidates = [[j for j in range(width) if generated_columns[j] <= gold_columns[i]] for i in range(width)]
    for perm in _permutations(candidates):
        permuted = [tuple(row[j] for j in perm) for row in generated]
        if ordered:
            if list(gold) == permuted:
                return True
        elif set(gold) == set(permuted) and Counter(gold) == Counter(permuted):
            return True
    return False


def _permutations(candidates: list[list[int]]) -> Iterator[tuple[int, ...]]:
    """One-to-one column assignments allowed by the candidates (depth-first)."""
    chosen: list[int] = []

    def walk(i: int) -> Iterator[tuple[int, ...]]:
        if i == len(candidates):
            yield tuple(chosen)
            return
        for j in candidates[i]:
            if j not in chosen:
                chosen.append(j)
                yield from walk(i + 1)
                chosen.pop()

    return walk(0)


def _same_unordered_rows(gold: Sequence[tuple], generated: Sequence[tuple], ordered: bool) -> bool:
    """The quick check: rows with their values sorted (by text and type) agree, as lists or as sets."""
    a = [_unordered(row) for row in gold]
    b = [_unordered(row) for row in generated]
    return a == b if ordered else set(a) == set(b)


def _unordered(row: tuple) -> tuple:
    return tuple(sorted(row, key=lambda x: str(x) + str(type(x))))


def cypherbench_pass_at_1(
    gold_query: str,
    generated_query: str | None,
    gold: QueryResult | None,
    generated: QueryResult | None,
) -> float:
    """1.0 when CypherBench's EX counts the generated query correct, else 0.0."""
    return 1.0 if cypherbench_equivalent(gold_query, generated_query, gold, generated) else 0.0


def cypherbench_score(gold_query: str, generated_query: str | None, gold: Executed, generated: Executed) -> float:
    """`cypherbench_pass_at_1` over `Execution`s (what `output.execute` returns): the scoring-preset form."""
    return cypherbench_pass_at_1(gold_query, generated_query, gold.result, generated.result)


__all__ = [
    "CYPHERBENCH_VERSION",
    "cypherbench_score",
    "Unhashable",
    "cypherbench_equivalent",
    "cypherbench_pass_at_1",
    "hashable",
    "order_matters",
    "rows_equal",
]
