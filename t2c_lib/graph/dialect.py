"""Neo4j-dialect normalisation for the embedded store: Neo4j-only forms rewritten into LadybugDB's.

Models write Neo4j's Cypher (the thesis ran on Neo4j); LadybugDB rejects part of it, and
answers a few forms differently without an error. `normalise` rewrites those forms before
LadybugDB plans the query. Every rule is exact: the rewritten query returns on LadybugDB
what the original returns on Neo4j (each rule has a test running both, marker `neo4j`); a
form that cannot be rewritten exactly is left alone (see NOT_REWRITTEN).

| rule | Neo4j | LadybugDB |
| --- | --- | --- |
| `exists_subquery` | `EXISTS { (a)-[:R]->(b) [WHERE ...] }` | `EXISTS { MATCH (a)-[:R]->(b) [WHERE ...] }` |
| `count_subquery` | `COUNT { (a)-[:R]->(b) [WHERE ...] }` | `COUNT { MATCH (a)-[:R]->(b) [WHERE ...] }` |
| `type_function` | `type(r)` | `label(r)` (LadybugDB has no `type()`) |
| `size_of_pattern` | `size((a)-[:R]->())` (Neo4j 4: the number of matches) | `COUNT { MATCH (a)-[:R]->() }` (LadybugDB runs the original but does not count matches) |
| `exists_property` | `exists(n.p)` (Neo4j 4) | `(n.p IS NOT NULL)` |
| `substring_base` | `substring(s, i[, n])`, 0-based | `substring(s, (i) + 1, n)`, 1-based (LadybugDB runs the original one character off) |

The store treats every query as Neo4j's Cypher and normalises it exactly once, just before
planning: a query already written for LadybugDB with a 1-based `substring` would be shifted,
so code that queries the embedded store writes Neo4j's Cypher too.

Safety. The rules only insert `MATCH`, `COUNT`, `label`, `IS NOT NULL`, `size`, `+ 1` and
brackets, never a clause that writes, and they rewrite only code, never string literals,
quoted names or comments. So a query the read-only guard rejects stays rejected whether
the guard sees it before or after normalisation (tested over the guard's write fixtures);
the store normalises independently of the guard, just before planning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

NOT_REWRITTEN = {
    "toInteger(x)": "LadybugDB's to_int64 rounds floats (2.7 -> 3) where Neo4j truncates (2)",
    "toFloat(x) / toString(x)": "to_double fails on text Neo4j maps to NULL; to_string formats floats differently",
    "WITH ... ORDER BY without SKIP/LIMIT": "dropping the ORDER BY loses the order later clauses may rely on",
    "reduce(acc = v, x IN xs | e)": "LadybugDB's list_reduce has no initial value",
    "pattern comprehension [(a)-->(b) | e]": "no LadybugDB form returns the same list",
    "head(xs) / last(xs)": "LadybugDB's list_extract fails on an empty list where Neo4j gives NULL",
}
"""Neo4j-only forms left alone, and why no exact rewrite exists."""

_MASKED = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`|//[^\n]*|/\*.*?\*/""", re.DOTALL)


@dataclass(frozen=True)
class Normalised:
    """A query after normalisation and the rules that changed it (in the order they ran)."""

    query: str
    applied: tuple[str, ...] = ()


def mask(query: str) -> str:
    """The query with string literals, quoted names and comments blanked (same length, same positions)."""
    return _MASKED.sub(lambda m: " " * len(m.group(0)), query)


def _closing(masked: str, open_at: int) -> int | None:
    """Index of the bracket closing the one at `open_at`, or None if it is never closed."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    for i in range(open_at, len(masked)):
        c = masked[i]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return i
    return None


def split_top_level(masked: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the comma-separated arguments between `start` and `end` (depth 0 only)."""
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


MAX_REWRITES = 200  # per rule and query: far above any real query, a bound for hostile ones
Edit = tuple[int, int, str]  # replace query[start:end] by text
Rule = Callable[[str, str], list[Edit]]


def _subquery_shorthand(keyword: str) -> Rule:
    """`KEYWORD { (pattern) ... }` -> `KEYWORD { MATCH (pattern) ... }`."""
    pattern = re.compile(rf"(?<![\w.$]){keyword}\s*\{{(\s*)\(", re.IGNORECASE)

    def rule(query: str, masked: str) -> list[Edit]:
        return [(m.end(1), m.end(1), "MATCH ") for m in pattern.finditer(masked)]

    return rule


_TYPE = re.compile(r"(?<![\w.$])type(\s*)\(", re.IGNORECASE)


def _type_function(query: str, masked: str) -> list[Edit]:
    return [(m.start(), m.start() + 4, "label") for m in _TYPE.finditer(masked)]


_SIZE = re.compile(r"(?<![\w.$])size\s*\(\s*\(", re.IGNORECASE)
_REL_AFTER_NODE = re.compile(r"\)\s*(?:<-|-\[|--|->)")  # a relationship, not a minus sign


def _size_of_pattern(query: str, masked: str) -> list[Edit]:
    edits: list[Edit] = []
    for m in _SIZE.finditer(masked):
        outer = masked.index("(", m.start())
        close = _closing(masked, outer)
        inner_open = m.end() - 1
        inner_close = _closing(masked, inner_open)
        if close is None or inner_close is None:
            continue
        body = masked[inner_open:close]
        # a pattern: starts with a node, and a relationship follows that node at the top level
        if not _REL_AFTER_NODE.match(masked, inner_close) or not body.rstrip().endswith(")"):
            continue
        edits.append((m.start(), close + 1, f"COUNT {{ MATCH {query[inner_open:close].strip()} }}"))
    return edits


_EXISTS_PROP = re.compile(r"(?<![\w.$])exists\s*\(\s*([A-Za-z_]\w*\s*\.\s*[A-Za-z_]\w*)\s*\)", re.IGNORECASE)


def _exists_property(query: str, masked: str) -> list[Edit]:
    return [(m.start(), m.end(), f"({query[m.start(1):m.end(1)]} IS NOT NULL)") for m in _EXISTS_PROP.finditer(masked)]


_DONE = "\x00"  # marks a rewritten call during normalisation so it is not rewritten twice
_SUBSTRING = re.compile(r"(?<![\w.$\x00])substring\s*\(", re.IGNORECASE)


def _substring_base(query: str, masked: str) -> list[Edit]:
    edits: list[Edit] = []
    for m in _SUBSTRING.finditer(masked):
        open_at = m.end() - 1
        close = _closing(masked, open_at)
        if close is None:
            continue
        args = split_top_level(masked, open_at + 1, close)
        if len(args) not in (2, 3) or any(not query[a:b].strip() for a, b in args):
            continue
        text, start = (query[a:b].strip() for a, b in args[:2])
        length = query[args[2][0]:args[2][1]].strip() if len(args) == 3 else f"size({text})"
        edits.append((m.start(), close + 1, f"{_DONE}{query[m.start():open_at]}({text}, ({start}) + 1, {length})"))
    return edits


RULES: tuple[tuple[str, Rule], ...] = (
    ("size_of_pattern", _size_of_pattern),
    ("exists_subquery", _subquery_shorthand("EXISTS")),
    ("count_subquery", _subquery_shorthand("COUNT")),
    ("type_function", _type_function),
    ("exists_property", _exists_property),
    ("substring_base", _substring_base),
)
"""The rules in the order they run; each sees the output of the previous one."""


def normalise(query: str) -> Normalised:
    """Rewrite the Neo4j-only forms of `query` into LadybugDB's (rules above); unchanged if none applies.

    Each rule rewrites one occurrence at a time, the last one first (a nested form starts
    after the form enclosing it), until none is left; every rule's output no longer
    matches the rule, so this ends.
    """
    if _DONE in query:  # the marker cannot come from a real query; leave such input to the parser
        return Normalised(query)
    applied: list[str] = []
    for name, rule in RULES:
        for _ in range(MAX_REWRITES):
            edits = rule(query, mask(query))
            if not edits:
                break
            start, end, text = max(edits)
            query = query[:start] + text + query[end:]
            if name not in applied:
                applied.append(name)
    return Normalised(query.replace(_DONE, ""), tuple(applied))


__all__ = ["NOT_REWRITTEN", "Normalised", "RULES", "mask", "normalise"]
