"""Limits on a query's text, checked before any database parses it.

A database parser recurses on nesting (LadybugDB's crashed at ~3,000 nested brackets, Neo4j's
overflowed its stack at ~400) and plans in time and memory that grow with the text, all before
a query timeout applies. So the gate bounds the text first: its length, the number of its
tokens and how deeply its brackets and CASE expressions nest. The bounds sit far above any
real query (the gold queries and examples of both datasets: at most 452 characters, 142 tokens, nested 3 deep).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from t2c_lib.config import int_setting
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
    def from_env(cls) -> QueryLimits:
        """Defaults, with `T2C_MAX_QUERY_CHARS` / `T2C_MAX_QUERY_DEPTH` when set (positive integers)."""
        return cls(
            max_chars=int_setting("T2C_MAX_QUERY_CHARS", cls.max_chars),
            max_depth=int_setting("T2C_MAX_QUERY_DEPTH", cls.max_depth),
        )


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
        return (
            f"the query is {len(text):,} characters long, over the limit of {limits.max_chars:,} (T2C_MAX_QUERY_CHARS)"
        )
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
            return (
                f"the regular expression {pattern.text[:60]} repeats a group that itself repeats or alternates "
                "(or uses a backreference): such a pattern can backtrack for minutes; write a simpler one"
            )
    return None


MAX_RANGE_VALUES = 1_000_000
"""Values a `range()` with literal bounds may produce: a list that size is built in one expression, where
neither store's transaction memory accounting nor every timeout reaches (Neo4j filled its heap on 10**8)."""


def range_problem(tokens: list[Token]) -> str | None:
    """Why a `range(a, b[, step])` could build too large a list, or None.

    Integer-literal bounds may span MAX_RANGE_VALUES; computed bounds may use names, properties,
    calls such as `size(xs)`, `+`, `-` and numbers below 1,000 only (no `*`, `^`, `/`, strings or
    large numbers), so `range(0, size(xs) - 1)` passes and `range(1, 10000 * 10000)` does not."""
    for i, tok in enumerate(tokens):
        if (
            tok.upper != "RANGE"
            or (i and tokens[i - 1].is_punct(".", ":"))
            or i + 1 >= len(tokens)
            or not tokens[i + 1].is_punct("(")
        ):
            continue
        args = _call_arguments(tokens, i + 1)
        literal = [_integer(arg) for arg in args[:2]]
        if len(args) >= 2 and None not in literal:
            low, high = literal
            if high - low + 1 > MAX_RANGE_VALUES:
                return (
                    f"range({low}, {high}) builds a list of {high - low + 1:,} values in one expression, "
                    f"over the limit of {MAX_RANGE_VALUES:,}"
                )
            continue
        for arg in args[:3]:
            if any(
                t.kind is Kind.STRING
                or t.is_punct("*", "^", "/", "%")
                or (t.kind is Kind.NUMBER and (not t.text.isdigit() or int(t.text) >= 1000))
                for t in arg
            ):
                return (
                    "range() with computed bounds may only add and subtract names, properties, calls and numbers "
                    f"below 1,000 (a list of up to {MAX_RANGE_VALUES:,} values needs literal bounds)"
                )
    return None


def _call_arguments(tokens: list[Token], open_at: int) -> list[list[Token]]:
    """The argument token lists of the call whose `(` is at `open_at` (up to its closing bracket)."""
    args: list[list[Token]] = [[]]
    depth = 0
    for tok in tokens[open_at + 1 :]:
        if tok.kind is Kind.PUNCT and tok.text in _OPENERS:
            depth += 1
        elif tok.kind is Kind.PUNCT and tok.text in (")", "]", "}"):
            if depth == 0:
                break
            depth -= 1
        elif tok.is_punct(",") and depth == 0:
            args.append([])
            continue
        args[-1].append(tok)
    return args


def _integer(arg: list[Token]) -> int | None:
    """The value of an argument that is an integer literal (optionally negative), else None."""
    if len(arg) == 1 and arg[0].kind is Kind.NUMBER and arg[0].text.isdigit():
        return int(arg[0].text)
    if len(arg) == 2 and arg[0].is_punct("-") and arg[1].kind is Kind.NUMBER and arg[1].text.isdigit():
        return -int(arg[1].text)
    return None


def token_problem(tokens: list[Token], limits: QueryLimits) -> str | None:
    """Why a token list is too large or too deeply nested for a database to parse safely, or None."""
    if len(tokens) > limits.max_tokens:
        return f"the query has {len(tokens):,} tokens, over the limit of {limits.max_tokens:,}"
    depth = nesting_depth(tokens)
    if depth > limits.max_depth:
        return (
            f"the query nests brackets or CASE {depth} deep, over the limit of {limits.max_depth} (T2C_MAX_QUERY_DEPTH)"
        )
    return regex_problem(tokens) or range_problem(tokens)
