"""Result equivalence (rules "eq:v3"): when do two query results denote the same answer?

Pure functions over `QueryResult`s; running queries lives in `output.py`. The rules follow
test-suite-sql-eval and CypherBench's execution accuracy:

- Column names are ignored and columns may be permuted: the results are equivalent when
  some one-to-one mapping of generated columns onto gold columns makes the rows match.
  Candidate mappings are pruned by column signatures (a gold column can only map to a
  generated column holding the same bag of values, or the same sequence when ordered);
  the identity mapping is tried first, and at most `MAX_MAPPINGS` mappings are tried.
- Rows are compared as bags (duplicates count), in order only when the gold query sorts
  its final RETURN (`has_order_by`: `ORDER BY` outside string literals, quoted names and
  comments, after the last RETURN at bracket depth 0; so `WITH ... ORDER BY` before the
  RETURN, `CALL { ... }` subqueries and, under UNION, all but the last branch do not
  count).
- Ties under ORDER BY (`ordering`, eq:v2). When every sort key of the final ORDER BY is a
  returned column (by its alias or its expression), gold rows with equal sort keys form a
  tie group, and the generated rows at a group's positions may come in any order (a bag
  per group). When the final RETURN has a LIMIT, the last tie group may have been cut: the
  generated rows there need only the gold's sort-key values (any of the tied rows is
  right; the rows past the LIMIT are unknown to the comparison); likewise the first group
  under a SKIP. A LIMIT of a literal integer that the gold's rows do not reach cut nothing
  (eq:v3), so there the last group is compared whole. When a sort key is not a returned column the ties cannot be seen in the
  result, and rows must come in the gold's order, as under eq:v1. The cases are fixtures
  (`tests/fixtures/metrics/equivalence.yaml`, "tie").
- Different column counts are not equivalent; two empty results are equivalent whatever
  their columns (there is no row to disagree on); one empty result is not.
- Values are normalised (`normalize`): NULL is a value of its own; booleans are not
  numbers; ints and floats compare by value within `FLOAT_TOLERANCE` (absolute and
  relative, `math.isclose`); NaN equals NaN; lists are compared as bags of normalised
  items (CypherBench's default: `collect()` order is unspecified without ORDER BY); maps
  by their keys and values, leaving out NULL-valued entries; nodes by their labels and
  properties, relationships by their type and properties (properties starting with `_`
  and NULL-valued ones ignored, never by internal id); paths by their node and
  relationship sequences; temporal values by their ISO text; anything else by `str()`.

Matching is exact on normalised values first, then on values with floats rounded to 9
significant digits (float noise); only rows still left over, and only when they hold
floats (on either side: an int against a float counts), are paired up under the float tolerance by a maximum bipartite matching among
rows of the same shape (equal apart from their numbers), within a budget of
`MAX_TOLERANT_PAIRS` comparisons: past it, left-over rows count as unmatched, so two
large results that differ everywhere by more than float noise (yet within 1e-6) may be
judged different.

History: eq:v1 -> eq:v2 adds the tie rules and applies the float tolerance in unordered
comparisons when only one side holds a float (eq:v1 judged `[[3]]` and
`[[3.0000000000000004]]` different unordered, equal ordered). eq:v2 -> eq:v3: a LIMIT the
gold's rows do not reach no longer frees the last tie group (eq:v2 accepted
`RETURN m.released, count(m) ... LIMIT 3` for a one-row gold `RETURN m.title, m.released
ORDER BY m.released DESC LIMIT 3`, because only the sort key was compared).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

from t2c_lib.graph.base import GraphNode, GraphPath, GraphRel, QueryResult

EQUIVALENCE_VERSION = "eq:v3"
FLOAT_TOLERANCE = 1e-6
MAX_MAPPINGS = 40_320  # 8! : every mapping of up to 8 interchangeable columns
ROUND_DIGITS = 9  # floats equal at 9 significant digits differ by < 1e-8 relative: within tolerance
MAX_TOLERANT_PAIRS = 250_000  # beyond this many pairwise comparisons, left-over rows stay unmatched

Key = tuple
"""A normalised value: a tuple whose first item is a type tag ("num", "str", "node", ...)."""


# ---------------------------------------------------------------- normalisation


def normalize(value: Any) -> Key:
    """The comparable, hashable, totally ordered form of one result value (rules above)."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float, Decimal)):
        x = value if isinstance(value, int) else float(value)
        return ("nan",) if isinstance(x, float) and math.isnan(x) else ("num", x)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, GraphNode):
        return ("node", tuple(sorted(value.labels)), _properties(value.properties))
    if isinstance(value, GraphRel):
        return ("rel", value.type, _properties(value.properties))
    if isinstance(value, GraphPath):
        return ("path", tuple(normalize(n) for n in value.nodes), tuple(normalize(r) for r in value.rels))
    if isinstance(value, dict):
        return ("map", _entries(value, skip_internal=False))
    if isinstance(value, (list, tuple, set, frozenset)):
        return ("list", tuple(sorted(normalize(v) for v in value)))
    if hasattr(value, "isoformat"):
        return ("temporal", value.isoformat())
    return ("other", str(value))


def _entries(d: dict[Any, Any], skip_internal: bool) -> tuple:
    """Sorted (key, normalised value) pairs of a map, without NULLs (and `_` keys if asked)."""
    return tuple(
        sorted(
            (str(k), normalize(v))
            for k, v in d.items()
            if v is not None and not (skip_internal and str(k).startswith("_"))
        )
    )


def _properties(props: dict[str, Any]) -> tuple:
    """A node's or relationship's user-visible, non-NULL properties."""
    return _entries(props, skip_internal=True)


def row_key(row: Sequence[Any]) -> tuple[Key, ...]:
    """A row as a tuple of normalised values, in column order."""
    return tuple(normalize(v) for v in row)


def unordered_row_key(row: Sequence[Any]) -> tuple[Key, ...]:
    """A row as a sorted tuple of normalised values, so permuted columns give the same key."""
    return tuple(sorted(normalize(v) for v in row))


# ---------------------------------------------------------------- tolerant matching


def approx_equal(a: Any, b: Any) -> bool:
    """Equality of normalised values, with numbers equal within `FLOAT_TOLERANCE`."""
    if a == b:
        return True
    if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
        return False
    if len(a) == 2 and a[0] == b[0] == "num" and _is_number(a[1]) and _is_number(b[1]):
        return math.isclose(a[1], b[1], rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)
    return all(approx_equal(x, y) for x, y in zip(a, b))


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _has_float(key: Any) -> bool:
    """Whether a normalised value holds a float anywhere (only then can tolerance matter)."""
    if isinstance(key, float):
        return True
    return isinstance(key, tuple) and any(_has_float(k) for k in key)


def match_count(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Size of a largest pairing of items of bag `a` with items of bag `b` that are `approx_equal`.

    Three passes: exact equality; equality after rounding floats to `ROUND_DIGITS`
    significant digits (float noise, in linear time); then, for what is left and only
    within `MAX_TOLERANT_PAIRS` comparisons, a maximum bipartite matching under
    `approx_equal` among items of the same shape (equal apart from their numbers).
    """
    matched, rest_a, rest_b = _exact_pass(list(a), list(b), key=None)
    if not rest_a or not rest_b or not (any(map(_has_float, rest_a)) or any(map(_has_float, rest_b))):
        return matched  # tolerance can only matter when a float is on either side (int 3 vs 3.0000000000000004)
    more, rest_a, rest_b = _exact_pass(rest_a, rest_b, key=_rounded)
    matched += more
    by_shape: dict[Any, tuple[list[Any], list[Any]]] = {}
    for side, items in ((0, rest_a), (1, rest_b)):
        for item in items:
            by_shape.setdefault(_shape(item), ([], []))[side].append(item)
    groups = [(xs, ys) for xs, ys in by_shape.values() if xs and ys]
    if sum(len(xs) * len(ys) for xs, ys in groups) > MAX_TOLERANT_PAIRS:
        return matched
    return matched + sum(_bipartite_matching(xs, ys) for xs, ys in groups)


def _exact_pass(a: list[Any], b: list[Any], key: Any) -> tuple[int, list[Any], list[Any]]:
    """Pair items whose (keyed) forms are equal; return the count and the unpaired items."""
    f = key or (lambda x: x)
    pool: dict[Any, list[Any]] = {}
    for y in b:
        pool.setdefault(f(y), []).append(y)
    matched, rest_a = 0, []
    for x in a:
        ys = pool.get(f(x))
        if ys:
            ys.pop()
            matched += 1
        else:
            rest_a.append(x)
    return matched, rest_a, [y for ys in pool.values() for y in ys]


def _rounded(key: Any) -> Any:
    """A value with its floats rounded to `ROUND_DIGITS` significant digits."""
    if isinstance(key, float):
        return float(f"{key:.{ROUND_DIGITS}g}")
    if isinstance(key, tuple):
        return tuple(_rounded(k) for k in key)
    return key


def _shape(key: Any) -> Any:
    """A value with its numbers blanked: only values of the same shape can be approximately equal."""
    if isinstance(key, tuple):
        if len(key) == 2 and key[0] == "num" and _is_number(key[1]):
            return ("num",)
        return tuple(_shape(k) for k in key)
    return key


def _bipartite_matching(a: list[Any], b: list[Any]) -> int:
    """Maximum matching between `a` and `b` under `approx_equal` (augmenting paths)."""
    edges = [[j for j, y in enumerate(b) if approx_equal(x, y)] for x in a]
    owner: list[int | None] = [None] * len(b)

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            held = owner[j]
            if held is None or augment(held, seen):
                owner[j] = i
                return True
        return False

    return sum(1 for i in range(len(a)) if edges[i] and augment(i, set()))


def bags_equal(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two bags hold the same items, up to the float tolerance."""
    return len(a) == len(b) and match_count(a, b) == len(a)


def sequences_equal(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two sequences hold the same items in the same order, up to the float tolerance."""
    return len(a) == len(b) and all(approx_equal(x, y) for x, y in zip(a, b))


# ---------------------------------------------------------------- ORDER BY detection

_STRIP = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`|//[^\n]*|/\*.*?\*/""",
    re.DOTALL,
)
_WORD = re.compile(r"\bRETURN\b|\bORDER\s+BY\b|[()\[\]{}]", re.IGNORECASE)


def strip_literals(query: str) -> str:
    """The query with string literals, quoted names and comments blanked out."""
    return _STRIP.sub(lambda m: " " * len(m.group(0)), query)


def has_order_by(query: str | None) -> bool:
    """Whether the final top-level RETURN of a query has an ORDER BY (outside literals/comments)."""
    if not query:
        return False
    depth, last_return, ordered = 0, False, False
    for m in _WORD.finditer(strip_literals(query)):
        tok = m.group(0)
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and tok.upper() == "RETURN":
            last_return, ordered = True, False
        elif depth == 0 and last_return:
            ordered = True
    return ordered


_CLAUSE = re.compile(r"\bRETURN\b|\bORDER\s+BY\b|\bSKIP\b|\bLIMIT\b|\bUNION\b|[()\[\]{}]", re.IGNORECASE)
_DIRECTION = re.compile(r"\s+(?:ASC|DESC|ASCENDING|DESCENDING)\s*$", re.IGNORECASE)
_ALIAS = re.compile(r"^(?P<expr>.*?)\s+AS\s+(?P<alias>`[^`]+`|\w+)\s*$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Ordering:
    """How the gold query orders its final rows (the tie rules need the sort keys).

    `key_columns`: the result columns of the sort keys, in ORDER BY order, or None when a
    sort key is not a returned column (ties are then invisible: rows must come in order).
    `limited` / `skipped`: the final RETURN has a LIMIT / SKIP, which may cut a tie group.
    `limit`: the LIMIT's value when it is a literal integer (None otherwise): fewer gold
    rows than that means the LIMIT cut nothing.
    """

    key_columns: tuple[int, ...] | None
    limited: bool = False
    skipped: bool = False
    limit: int | None = None

    def cuts(self, n_rows: int) -> bool:
        """Whether the LIMIT may have cut the last tie group of `n_rows` gold rows."""
        return self.limited and (self.limit is None or n_rows >= self.limit)


def ordering(query: str | None) -> Ordering | None:
    """The ordering of the final top-level RETURN (None when it has no ORDER BY); see `Ordering`."""
    if not has_order_by(query):
        return None
    masked = strip_literals(query or "")
    depth = 0
    marks: list[tuple[str, int, int]] = []  # (keyword, start, end) at depth 0 after the last RETURN
    for m in _CLAUSE.finditer(masked):
        tok = m.group(0)
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0:
            word = " ".join(tok.upper().split())
            if word in ("RETURN", "UNION"):
                marks = []
            marks.append((word, m.start(), m.end()))
    bounds = [start for _, start, _ in marks[1:]] + [len(query or "")]
    part = {word: (end, bounds[i]) for i, (word, _, end) in enumerate(marks)}
    if "RETURN" not in part or "ORDER BY" not in part:
        return None
    text = query or ""
    items = [
        _ALIAS.match(text[a:b].strip()) or text[a:b].strip() for a, b in _top_level_items(masked, *part["RETURN"], text)
    ]
    if items and isinstance(items[0], str) and items[0].upper().startswith("DISTINCT "):
        items[0] = items[0][len("DISTINCT ") :]
    elif items and not isinstance(items[0], str) and items[0]["expr"].upper().startswith("DISTINCT "):
        # matches again: the alias is still there and the expression still holds a character
        items[0] = cast("re.Match[str]", _ALIAS.match(items[0].group(0)[len("DISTINCT ") :].strip()))
    names: list[set[str]] = []
    for item in items:
        if isinstance(item, str):
            names.append({_expr_key(item)})
        else:
            names.append({_expr_key(item["expr"]), _expr_key(item["alias"])})
    limited, skipped = "LIMIT" in part, "SKIP" in part
    limit = _literal_count(masked[slice(*part["LIMIT"])]) if limited else None
    keys: list[int] = []
    if not items:
        return Ordering(None, limited, skipped, limit)
    for a, b in _top_level_items(masked, *part["ORDER BY"], text):
        key = _expr_key(_DIRECTION.sub("", text[a:b].strip()))
        found = [i for i, n in enumerate(names) if key in n]
        if not found or any(_expr_key(i) == "*" for i in items if isinstance(i, str)):
            return Ordering(None, limited, skipped, limit)
        keys.append(found[0])
    return Ordering(tuple(keys), limited, skipped, limit)


def _literal_count(expr: str) -> int | None:
    """The value of a LIMIT written as a plain integer (`3`, ` 10 ;`), else None (a parameter, an expression)."""
    expr = expr.strip().rstrip(";").strip()
    return int(expr) if expr.isdigit() else None


def split_top_level(masked: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the comma-separated parts between `start` and `end` of masked text (commas at bracket depth 0)."""
    spans, depth, begin = [], 0, start
    for i in range(start, end):
        c = masked[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((begin, i))
            begin = i + 1
    spans.append((begin, end))
    return spans


def _top_level_items(masked: str, start: int, end: int, text: str) -> list[tuple[int, int]]:
    """Spans of the comma-separated items of a clause body (commas at bracket depth 0), empty ones left out."""
    spans = split_top_level(masked, start, end)
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _expr_key(expr: str) -> str:
    """An expression's text without whitespace, lower-cased: how a sort key is matched to a returned item."""
    expr = expr.strip()
    if re.fullmatch(r"`[^`]+`", expr):  # a quoted name means the name itself
        expr = expr[1:-1]
    return "".join(expr.split()).lower()


# ---------------------------------------------------------------- result comparison


def results_equivalent(gold: QueryResult, generated: QueryResult, ordered: bool | Ordering = False) -> bool:
    """Whether `generated` denotes the same answer as `gold` under the eq:v3 rules.

    `ordered`: False compares rows as bags; True in the gold's order; an `Ordering` (from
    `ordering(gold_query)`) in order up to ties on its sort keys (strict order when its
    key columns are unknown).
    """
    g_rows = [row_key(r) for r in gold.rows]
    p_rows = [row_key(r) for r in generated.rows]
    if not g_rows and not p_rows:
        return True
    if len(g_rows) != len(p_rows):
        return False
    width = len(g_rows[0])
    if any(len(r) != width for r in g_rows) or any(len(r) != width for r in p_rows):
        return False
    ties = ordered if isinstance(ordered, Ordering) and ordered.key_columns is not None else None
    tie_keys = ties.key_columns if ties is not None else None
    if tie_keys is not None and any(k >= width for k in tie_keys):
        ties = None
    if ties is not None and tie_keys is not None:
        groups = tie_groups(g_rows, ties)
        loose = set(tie_keys) if (ties.cuts(len(g_rows)) or ties.skipped) else None

        def same_rows(a: Sequence[Any], b: Sequence[Any]) -> bool:
            return _tied_equal(a, b, groups, tie_keys)

        def same_column(i: int, a: Sequence[Any], b: Sequence[Any]) -> bool:
            return loose is not None and i not in loose or bags_equal(a, b)
    else:
        plain = sequences_equal if ordered else bags_equal

        def same_rows(a: Sequence[Any], b: Sequence[Any]) -> bool:
            return plain(a, b)

        def same_column(i: int, a: Sequence[Any], b: Sequence[Any]) -> bool:
            return plain(a, b)

    g_cols = [[r[i] for r in g_rows] for i in range(width)]
    p_cols = [[r[j] for r in p_rows] for j in range(width)]
    candidates = [[j for j in _identity_first(i, width) if same_column(i, g_cols[i], p_cols[j])] for i in range(width)]
    for mapping in _mappings(candidates):
        if same_rows(g_rows, [tuple(r[j] for j in mapping) for r in p_rows]):
            return True
    return False


@dataclass(frozen=True)
class TieGroup:
    """Gold rows [start, end) tied on the sort keys; `cut`: a LIMIT or SKIP may have cut it."""

    start: int
    end: int
    cut: bool = False


def tie_groups(rows: Sequence[tuple[Key, ...]], order: Ordering) -> list[TieGroup]:
    """Runs of consecutive gold rows with equal sort-key values (floats compared at `ROUND_DIGITS`)."""
    keys = [_rounded(tuple(r[k] for k in order.key_columns or ())) for r in rows]
    groups: list[TieGroup] = []
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or keys[i] != keys[start]:
            groups.append(TieGroup(start, i))
            start = i
    if groups and order.cuts(len(rows)):
        groups[-1] = TieGroup(groups[-1].start, groups[-1].end, cut=True)
    if groups and order.skipped:
        groups[0] = TieGroup(groups[0].start, groups[0].end, cut=True)
    return groups


def _tied_equal(
    gold: Sequence[tuple], generated: Sequence[tuple], groups: list[TieGroup], keys: tuple[int, ...]
) -> bool:
    """Rows equal group by group: a bag per tie group; a cut group on its sort-key values only."""
    for g in groups:
        a, b = gold[g.start : g.end], generated[g.start : g.end]
        if g.cut:
            a = [tuple(r[k] for k in keys) for r in a]
            b = [tuple(r[k] for k in keys) for r in b]
        if not bags_equal(a, b):
            return False
    return True


def _identity_first(i: int, width: int) -> list[int]:
    return [i] + [j for j in range(width) if j != i]


def _mappings(candidates: list[list[int]]) -> Iterator[tuple[int, ...]]:
    """One-to-one column mappings allowed by the candidates, at most `MAX_MAPPINGS` of them."""
    chosen: list[int] = []
    used: set[int] = set()
    budget = [MAX_MAPPINGS]

    def walk(i: int) -> Iterator[tuple[int, ...]]:
        if i == len(candidates):
            budget[0] -= 1
            yield tuple(chosen)
            return
        for j in candidates[i]:
            if j in used or budget[0] <= 0:
                continue
            chosen.append(j)
            used.add(j)
            yield from walk(i + 1)
            chosen.pop()
            used.discard(j)

    return walk(0)


def rows_jaccard(gold: QueryResult, generated: QueryResult) -> float:
    """|A & B| / |A | B| over the sets of rows, each row an order-insensitive tuple of values."""
    a = sorted({unordered_row_key(r) for r in gold.rows})
    b = sorted({unordered_row_key(r) for r in generated.rows})
    if not a and not b:
        return 1.0
    both = match_count(a, b)
    return both / (len(a) + len(b) - both)
