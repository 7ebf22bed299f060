"""A read query split at its final RETURN: what a follow-up edit changes (items, order, limit, filters).

Only the shape `<head> RETURN [DISTINCT] items [ORDER BY keys] [LIMIT n]` is split, read with the
store's own lexer; anything else (UNION, SKIP, CALL after RETURN, text the lexer refuses) is not,
and the follow-up goes to the model instead. Nothing here runs a query: an edited query is judged by
the same validator chain as every other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from t2c_lib.agent.syntax_fix import items
from t2c_lib.cypher.lexer import Dialect, Kind, LexError, Token, tokenize

AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX", "COLLECT"})


@dataclass(frozen=True)
class ReturnItem:
    """One returned expression, its alias, and the variable and property it reads (when it is `v.prop`)."""

    expr: str
    alias: str = ""
    variable: str = ""
    prop: str = ""
    aggregate: bool = False

    @property
    def key(self) -> str:
        """How ORDER BY names it: its alias, else its expression."""
        return self.alias or self.expr

    def render(self) -> str:
        return f"{self.expr} AS {self.alias}" if self.alias else self.expr


@dataclass(frozen=True)
class QueryParts:
    """`head RETURN [DISTINCT] items [ORDER BY order] [LIMIT limit]`, with the head's variable bindings."""

    head: str
    items: tuple[ReturnItem, ...]
    distinct: bool = False
    order: tuple[str, ...] = ()
    limit: str = ""
    bindings: tuple[tuple[str, str], ...] = ()  # (variable, label or relationship type), in order of appearance

    def render(self) -> str:
        text = f"{self.head} RETURN {'DISTINCT ' if self.distinct else ''}{', '.join(i.render() for i in self.items)}"
        if self.order:
            text += " ORDER BY " + ", ".join(self.order)
        if self.limit:
            text += f" LIMIT {self.limit}"
        return text

    def with_items(self, items: tuple[ReturnItem, ...]) -> QueryParts:
        return replace(self, items=items)

    @property
    def aggregated(self) -> bool:
        return any(i.aggregate for i in self.items)

    def bound(self, variable: str) -> str:
        """The label or type `variable` is bound to in the head (empty if none)."""
        return next((name for var, name in self.bindings if var == variable), "")


def split_query(query: str, dialect: Dialect = Dialect.LADYBUG) -> QueryParts | None:
    """The parts of `query`, or None when it is not one plain RETURN at the end."""
    try:
        tokens = tokenize(query, dialect)
    except LexError:
        return None
    top = _top_level(tokens)
    words = [(i, t.upper) for i, t in top]
    if not top or any(w == "UNION" for _, w in words):
        return None
    returns = [i for i, w in words if w == "RETURN"]
    if len(returns) != 1:
        return None
    r = returns[0]
    after = [(i, w) for i, w in words if i > r]
    if any(w in ("UNION", "SKIP", "MATCH", "WITH", "CALL", "UNWIND", "WHERE") for _, w in after):
        return None
    order_at = next((i for i, w in after if w == "ORDER"), None)
    limit_at = next((i for i, w in after if w == "LIMIT"), None)
    if order_at is not None and limit_at is not None and limit_at < order_at:
        return None
    end_items = min(x for x in (order_at, limit_at, len(tokens)) if x is not None)
    start = r + 1
    distinct = start < len(tokens) and tokens[start].upper == "DISTINCT"
    if distinct:
        start += 1
    items = _items(query, tokens, start, end_items)
    if not items:
        return None
    order: tuple[str, ...] = ()
    if order_at is not None:
        if order_at + 1 >= len(tokens) or tokens[order_at + 1].upper != "BY":
            return None
        end_order = limit_at if limit_at is not None else len(tokens)
        order = tuple(_text(query, tokens, a, b) for a, b in _commas(tokens, order_at + 2, end_order))
    limit = ""
    if limit_at is not None:
        rest = tokens[limit_at + 1 :]
        if len(rest) != 1 or rest[0].kind is not Kind.NUMBER:
            return None
        limit = rest[0].text
    head = query[: tokens[r].pos].strip()
    return QueryParts(head, items, distinct, order, limit, _bindings(tokens[:r]))


def _top_level(tokens: list[Token]) -> list[tuple[int, Token]]:
    """Tokens outside brackets, with their index."""
    depth = 0
    out = []
    for i, tok in enumerate(tokens):
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        elif depth == 0:
            out.append((i, tok))
    return out


def _commas(tokens: list[Token], start: int, end: int) -> list[tuple[int, int]]:
    """Spans [a, b) of tokens between top-level commas in tokens[start:end] (the dialect fixer's splitter), none empty."""
    return [(a, b) for a, b in items(tokens, start, end) if b > a]


def _text(query: str, tokens: list[Token], a: int, b: int) -> str:
    last = tokens[b - 1]
    return query[tokens[a].pos : last.end if last.end >= 0 else last.pos + len(last.text)].strip()


def _items(query: str, tokens: list[Token], start: int, end: int) -> tuple[ReturnItem, ...]:
    items = []
    for a, b in _commas(tokens, start, end):
        alias = ""
        if b - a >= 3 and tokens[b - 2].upper == "AS" and tokens[b - 1].name:
            alias = tokens[b - 1].text if tokens[b - 1].kind is Kind.WORD else ""
            if not alias:
                return ()
            b -= 2
        part = tokens[a:b]
        expr = _text(query, tokens, a, b)
        variable = prop = ""
        if len(part) == 3 and part[0].kind is Kind.WORD and part[1].is_punct(".") and part[2].kind is Kind.WORD:
            variable, prop = part[0].text, part[2].text
        elif len(part) == 1 and part[0].kind is Kind.WORD:
            variable = part[0].text
        aggregate = bool(part) and part[0].upper in AGGREGATES and len(part) > 1 and part[1].is_punct("(")
        if aggregate:
            inner = [t for t in part[2:-1] if t.kind is Kind.WORD and t.upper != "DISTINCT"]
            variable = inner[0].text if inner else ""
        items.append(ReturnItem(expr, alias, variable, prop, aggregate))
    return tuple(items)


def _bindings(tokens: list[Token]) -> tuple[tuple[str, str], ...]:
    """`(v:Label` and `[r:TYPE` in the head, in order (first binding of a variable wins)."""
    seen: dict[str, str] = {}
    for i in range(len(tokens) - 3):
        if tokens[i].is_punct("(", "[") and tokens[i + 1].kind is Kind.WORD and tokens[i + 2].is_punct(":"):
            name = tokens[i + 3].name
            if name:
                seen.setdefault(tokens[i + 1].text, name)
    return tuple(seen.items())


def in_stable_order(query: str, dialect: Dialect = Dialect.LADYBUG) -> str | None:
    """`query` with `ORDER BY` over every returned column, when it sorts nothing and limits nothing; else None.

    Without ORDER BY a store lists rows in its own order (another on Neo4j than on LadybugDB); sorting by the
    returned columns, in their order, gives one order on every store and changes no row (issue 53).
    """
    parts = split_query(query, dialect)
    if parts is None or parts.order or parts.limit:
        return None
    return replace(parts, order=tuple(item.key for item in parts.items)).render()
