"""Limits on a query's text, checked before any database parses it.

A database parser recurses on nesting (LadybugDB's crashed at ~3,000 nested brackets, Neo4j's
overflowed its stack at ~400) and plans in time and memory that grow with the text, all before
a query timeout applies. So the gate bounds the text first: its length, the number of its
tokens and how deeply its brackets and CASE expressions nest. The bounds sit far above any
real query (the gold queries and examples of both datasets: at most 452 characters, 142 tokens, nested 3 deep).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from t2c_lib.cypher.lexer import Kind, Token

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*(?:[*+}]|\|)(?:[^()\\]|\\.)*\)\s*(?:[*+]|\{\d*,)")
"""A group holding a quantifier or an alternation, itself repeated: `(a+)+`, `(a|aa)*`, `(x*){2,}`."""
_BACKREFERENCE = re.compile(r"\\[1-9]")


@dataclass(frozen=True)
class QueryLimits:
    """How large a query text may be before a database sees it."""

    max_chars: int = 8_000
    max_tokens: int = 2_000
    max_depth: int = 32

    @classmethod
    def from_env(cls) -> "QueryLimits":
        """Defaults, with `T2C_MAX_QUERY_CHARS` / `T2C_MAX_QUERY_DEPTH` when set (positive integers)."""
        return cls(max_chars=_setting("T2C_MAX_QUERY_CHARS", cls.max_chars), max_depth=_setting("T2C_MAX_QUERY_DEPTH", cls.max_depth))


def _setting(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return int(raw)


def nesting_depth(tokens: list[Token]) -> int:
    """The deepest nesting of brackets and CASE ... END in a token list (unbalanced closers ignored)."""
    depth = deepest = 0
    for tok in tokens:
        if tok.kind is Kind.PUNCT and tok.text in _OPENERS or tok.upper == "CASE":
            depth += 1
            deepest = max(deepest, depth)
        elif (tok.kind is Kind.PUNCT and tok.text in (")", "]", "}") or tok.upper == "END") and depth:
            depth -= 1
    return deepest


def text_problem(text: str, limits: QueryLimits) -> str | None:
    """Why a text is too long to read, or None."""
    if len(text) > limits.max_chars:
        return f"the query is {len(text):,} characters long, over the limit of {limits.max_chars:,} (T2C_MAX_QUERY_CHARS)"
    return None


def regex_problem(tokens: list[Token]) -> str | None:
    """Why a regular expression (`=~`) could run for minutes inside one expression, where no timeout reaches, or None.

    Neo4j's regex engine backtracks, and its transaction timeout does not stop a match in progress;
    so a pattern must be a string literal without a repeated group that itself repeats or alternates,
    and without backreferences."""
    for i, tok in enumerate(tokens):
        if not tok.is_punct("=~"):
            continue
        pattern = tokens[i + 1] if i + 1 < len(tokens) else None
        if pattern is None or pattern.kind is not Kind.STRING:
            return "a regular expression (=~) must be a string literal, so it can be checked before it runs"
        body = pattern.text[1:-1]
        if _NESTED_QUANTIFIER.search(body) or _BACKREFERENCE.search(body):
            return (f"the regular expression {pattern.text[:60]} repeats a group that itself repeats or alternates "
                    "(or uses a backreference): such a pattern can backtrack for minutes; write a simpler one")
    return None


MAX_RANGE_VALUES = 1_000_000
"""Values a `range()` with literal bounds may produce: a list that size is built in one expression, where
neither store's transaction memory accounting nor every timeout reaches (Neo4j filled its heap on 10**8)."""


def range_problem(tokens: list[Token]) -> str | None:
    """Why a `range(a, b[, step])` with integer-literal bounds builds too large a list, or None."""
    for i, tok in enumerate(tokens):
        if tok.upper != "RANGE" or (i and tokens[i - 1].is_punct(".", ":")) or i + 1 >= len(tokens) or not tokens[i + 1].is_punct("("):
            continue
        bounds, j = [], i + 2
        for _ in range(2):
            negative = j < len(tokens) and tokens[j].is_punct("-")
            j += negative
            if j >= len(tokens) or tokens[j].kind is not Kind.NUMBER or not tokens[j].text.isdigit():
                break
            bounds.append(-int(tokens[j].text) if negative else int(tokens[j].text))
            j += 1
            if len(bounds) == 1:
                if j >= len(tokens) or not tokens[j].is_punct(","):
                    break
                j += 1
        if len(bounds) == 2 and bounds[1] - bounds[0] + 1 > MAX_RANGE_VALUES:
            return (f"range({bounds[0]}, {bounds[1]}) builds a list of {bounds[1] - bounds[0] + 1:,} values in one expression, "
                    f"over the limit of {MAX_RANGE_VALUES:,}")
    return None


def token_problem(tokens: list[Token], limits: QueryLimits) -> str | None:
    """Why a token list is too large or too deeply nested for a database to parse safely, or None."""
    if len(tokens) > limits.max_tokens:
        return f"the query has {len(tokens):,} tokens, over the limit of {limits.max_tokens:,}"
    depth = nesting_depth(tokens)
    if depth > limits.max_depth:
        return f"the query nests brackets or CASE {depth} deep, over the limit of {limits.max_depth} (T2C_MAX_QUERY_DEPTH)"
    return regex_problem(tokens) or range_problem(tokens)
