"""Limits on a query's text, checked before any database parses it.

A database parser recurses on nesting (LadybugDB's crashed at ~3,000 nested brackets, Neo4j's
overflowed its stack at ~400, and went silent on 1,995 chained NOTs) and plans in time and
memory that grow with the text, all before a query timeout applies. So the gate bounds the
text first: its length, the number of its tokens, how deeply its brackets and CASE
expressions nest, how long its operator chains are; then the work one expression may do where
no timeout reaches: regular expressions (`regex_check.py`), ranges, nested loops and doubling
accumulators (`loops.py`). The bounds sit far above any real query (the gold queries and
examples of both datasets: at most 452 characters, 142 tokens, nested 3 deep).
"""

from __future__ import annotations

from dataclasses import dataclass

from t2c_lib.config import int_setting
from t2c_lib.cypher.brackets import BRACKETS, CLOSERS
from t2c_lib.cypher.lexer import Kind, Token
from t2c_lib.cypher.loops import MAX_RANGE_VALUES, call_arguments, integer_value, loop_problem, reduce_problem
from t2c_lib.cypher.regex_check import RegexUnreadable, decode_literal, pattern_problem

__all__ = [
    "MAX_EXPRESSION_DEPTH",
    "MAX_OPERATOR_CHAIN",
    "MAX_RANGE_VALUES",
    "QueryLimits",
    "nesting_depth",
    "operator_depth",
    "range_problem",
    "regex_problem",
    "text_problem",
    "token_problem",
]

_OPERATOR_PUNCT = frozenset({"+", "-", "*", "/", "%", "^", "=", "<>", "!=", "<", ">", "<=", ">=", "=~", "."})
_OPERATOR_WORDS = frozenset({"AND", "OR", "XOR", "NOT", "CONTAINS", "STARTS", "ENDS", "IN", "IS"})
_SEGMENT_WORDS = frozenset(
    {"MATCH", "OPTIONAL", "WHERE", "WITH", "RETURN", "UNWIND", "ORDER", "BY", "SKIP", "LIMIT", "UNION", "CALL"}
    | {"YIELD", "WHEN", "THEN", "ELSE", "AS", "DISTINCT", "ASC", "DESC", "ASCENDING", "DESCENDING"}
)
"""Words that end one operator chain and start the next (a clause, a CASE branch, an alias)."""
_REGEX_OPERAND_GLUE = frozenset({"+", "|", "*", "/", "%", "^", "-", "[", "."})
"""Tokens after a `=~` literal that would make the pattern an expression (`'a' + $p`), not the literal."""

MAX_OPERATOR_CHAIN = 64
"""Operators one chain may hold (`NOT NOT ... x`, `1 + 1 + ...`, `n.a.b.c`): a parser builds one tree level
per operator, and 1,995 chained NOTs left Neo4j without an answer."""
MAX_EXPRESSION_DEPTH = 128
"""Brackets, CASEs and chained operators along one path into an expression, together."""


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


def _opens(tokens: list[Token], i: int) -> bool:
    tok = tokens[i]
    return tok.kind is Kind.PUNCT and tok.text in BRACKETS or _is_keyword(tokens, i, "CASE")


def _is_keyword(tokens: list[Token], i: int, word: str) -> bool:
    """Whether tokens[i] is the keyword `word`, not a property (`n.end`), map key (`{end: 1}`) or label (`:End`)."""
    if tokens[i].upper != word:
        return False
    if i and tokens[i - 1].is_punct(".", ":"):
        return False
    return not (i + 1 < len(tokens) and tokens[i + 1].is_punct(":"))


def nesting_depth(tokens: list[Token]) -> int:
    """The deepest nesting of brackets and CASE ... END in a token list (unbalanced closers ignored).

    END closes a CASE only: counting every `end` as a closer (a property, a map key, a stray END)
    let 320 real levels count as 1."""
    stack: list[str] = []
    deepest = 0
    for i, tok in enumerate(tokens):
        if _opens(tokens, i):
            stack.append("CASE" if tok.kind is Kind.WORD else tok.text)
            deepest = max(deepest, len(stack))
        elif tok.kind is Kind.PUNCT and tok.text in CLOSERS:
            while stack and stack.pop() == "CASE":  # a CASE left open inside brackets closes with them
                pass
        elif _is_keyword(tokens, i, "END") and stack and stack[-1] == "CASE":
            stack.pop()
    return deepest


def operator_depth(tokens: list[Token]) -> tuple[int, int]:
    """(longest operator chain, deepest brackets + CASEs + chained operators along one path) of a token list.

    A chain is the operators between two separators (a comma, `|`, a clause, CASE-branch or
    alias word) at one bracket level; the depth counts, for each open bracket or CASE, one level
    plus the operators chained around it so far."""
    chains: list[int] = [0]  # operators in the current chain at each open level, the query's first
    kinds: list[str] = [""]
    longest = deepest = 0
    for i, tok in enumerate(tokens):
        if _opens(tokens, i):
            chains.append(0)
            kinds.append("CASE" if tok.kind is Kind.WORD else tok.text)
        elif tok.kind is Kind.PUNCT and tok.text in CLOSERS:
            while len(chains) > 1 and kinds.pop() == "CASE":
                chains.pop()
            if len(chains) > 1:
                chains.pop()
        elif _is_keyword(tokens, i, "END") and kinds[-1] == "CASE":
            chains.pop()
            kinds.pop()
        elif tok.is_punct(",", "|", ";") or (
            tok.upper in _SEGMENT_WORDS
            and not (tok.upper == "WITH" and i and tokens[i - 1].upper in ("STARTS", "ENDS"))
        ):
            chains[-1] = 0
        elif tok.kind is Kind.PUNCT and tok.text in _OPERATOR_PUNCT or tok.upper in _OPERATOR_WORDS:
            chains[-1] += 1
            longest = max(longest, chains[-1])
        deepest = max(deepest, len(chains) - 1 + sum(chains))
    return longest, deepest


def text_problem(text: str, limits: QueryLimits) -> str | None:
    """Why a text is too long to read, or None."""
    if len(text) > limits.max_chars:
        return (
            f"the query is {len(text):,} characters long, over the limit of {limits.max_chars:,} (T2C_MAX_QUERY_CHARS)"
        )
    return None


def regex_problem(tokens: list[Token]) -> str | None:
    """Why a regular expression (`=~`) could run for minutes inside one expression, where no timeout reaches, or None.

    Neo4j's regex engine backtracks, and neither its transaction timeout nor termination stops
    a match in progress. So the pattern must be one string literal (no parameter, name or
    concatenation), and its decoded value must pass `regex_check.pattern_problem`: no repeated
    part that itself repeats or alternates, at most MAX_UNBOUNDED_QUANTIFIERS unbounded
    quantifiers, no backreference, readable by a regex parser."""
    for i, tok in enumerate(tokens):
        if not tok.is_punct("=~"):
            continue
        pattern = tokens[i + 1] if i + 1 < len(tokens) else None
        after = tokens[i + 2] if i + 2 < len(tokens) else None
        if (
            pattern is None
            or pattern.kind is not Kind.STRING
            or (after is not None and after.kind is Kind.PUNCT and after.text in _REGEX_OPERAND_GLUE)
        ):
            return "a regular expression (=~) must be one string literal, so it can be checked before it runs"
        try:
            problem = pattern_problem(decode_literal(pattern.text))
        except RegexUnreadable as exc:
            problem = f"cannot be read ({exc}), so it cannot be checked before it runs"
        if problem:
            return f"the regular expression {pattern.text[:60]} {problem}; write a simpler one"
    return None


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
        args = call_arguments(tokens, i + 1)
        literal = [integer_value(arg) for arg in args[:2]]
        if len(args) >= 2 and literal[0] is not None and literal[1] is not None:
            low, high = literal[0], literal[1]
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


def token_problem(tokens: list[Token], limits: QueryLimits) -> str | None:
    """Why a token list is too large, too deeply nested or too costly inside one expression to send, or None."""
    if len(tokens) > limits.max_tokens:
        return f"the query has {len(tokens):,} tokens, over the limit of {limits.max_tokens:,}"
    depth = nesting_depth(tokens)
    if depth > limits.max_depth:
        return (
            f"the query nests brackets or CASE {depth} deep, over the limit of {limits.max_depth} (T2C_MAX_QUERY_DEPTH)"
        )
    chain, expression_depth = operator_depth(tokens)
    if chain > MAX_OPERATOR_CHAIN:
        return f"the query chains {chain} operators in one expression, over the limit of {MAX_OPERATOR_CHAIN}"
    if expression_depth > MAX_EXPRESSION_DEPTH:
        return (
            f"the query nests brackets, CASE and operators {expression_depth} deep in one expression, over the "
            f"limit of {MAX_EXPRESSION_DEPTH}"
        )
    return regex_problem(tokens) or range_problem(tokens) or loop_problem(tokens) or reduce_problem(tokens)
