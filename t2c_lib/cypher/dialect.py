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
| `substring_base` | `substring(s, i[, n])`, 0-based | `substring(s, (i) + 1, n)`, 1-based; without `n`, `SUBSTRING_REST` characters (LadybugDB runs the original one character off) |

The store treats every query as Neo4j's Cypher and normalises it exactly once, just before
planning: a query already written for LadybugDB with a 1-based `substring` would be shifted,
so code that queries the embedded store writes Neo4j's Cypher too.

Safety. The rewriter reads the text through the same lexer as the read-only guard
(`cypher/lexer.py`), so it sees exactly the comments, strings and names the guard and the
database see; it rewrites only code tokens. When a rule applies, the output is rebuilt from
the tokens alone (comments dropped, whitespace kept), so no text the guard read as a comment
can become code. No rule copies an argument more than once, so the output grows by a
constant per rewritten call (linear in the input). The gate (`cypher/gate.py`) judges the
rewritten text again before any database sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from t2c_lib.cypher.lexer import Kind, LexError, Token, tokenize

NOT_REWRITTEN = {
    "toInteger(x)": "LadybugDB's to_int64 rounds floats (2.7 -> 3) where Neo4j truncates (2)",
    "toFloat(x) / toString(x)": "to_double fails on text Neo4j maps to NULL; to_string formats floats differently",
    "WITH ... ORDER BY without SKIP/LIMIT": "dropping the ORDER BY loses the order later clauses may rely on",
    "reduce(acc = v, x IN xs | e)": "LadybugDB's list_reduce has no initial value",
    "pattern comprehension [(a)-->(b) | e]": "no LadybugDB form returns the same list",
    "head(xs) / last(xs)": "LadybugDB's list_extract fails on an empty list where Neo4j gives NULL",
}
"""Neo4j-only forms left alone, and why no exact rewrite exists."""

RULES: tuple[tuple[str, str], ...] = (
    ("size_of_pattern", "size((a)-[:R]->(b)) -> COUNT { MATCH (a)-[:R]->(b) }"),
    ("exists_subquery", "EXISTS { (a)-->(b) } -> EXISTS { MATCH (a)-->(b) }"),
    ("count_subquery", "COUNT { (a)-->(b) } -> COUNT { MATCH (a)-->(b) }"),
    ("type_function", "type(r) -> label(r)"),
    ("exists_property", "exists(n.p) -> (n.p IS NOT NULL)"),
    ("substring_base", "substring(s, i[, n]) -> substring(s, (i) + 1, n)"),
)
"""The rules (name, what it does), in the order `Normalised.applied` lists them."""

SUBSTRING_REST = 2147483647
"""Length given to a two-argument substring: LadybugDB stops at the end of the string, as Neo4j does."""

_OPEN_TO_CLOSE = {"(": ")", "[": "]", "{": "}"}
_NOT_A_CALL_AFTER = (".", ":", "::")  # `n.type(...)`, `(:COUNT {...})`: a property or a label, not a function
_RELATIONSHIP_START = (("<", "-"), ("-", "["), ("-", "-"), ("-", ">"))


@dataclass(frozen=True)
class Normalised:
    """A query after normalisation and the rules that changed it (in RULES order)."""

    query: str
    applied: tuple[str, ...] = ()


def normalise(query: str) -> Normalised:
    """Rewrite the Neo4j-only forms of `query` into LadybugDB's (rules above); unchanged if none applies.

    Text the lexer cannot read is returned unchanged (the gate refuses it before any database)."""
    try:
        tokens = tokenize(query)
    except LexError:
        return Normalised(query)
    if not any(tok.upper in _TRIGGERS for tok in tokens):
        return Normalised(query)
    writer = _Writer(query, tokens)
    text = writer.render(0, len(tokens))
    if not writer.applied:
        return Normalised(query)
    return Normalised(text, tuple(name for name, _ in RULES if name in writer.applied))


_TRIGGERS = frozenset({"SIZE", "EXISTS", "COUNT", "TYPE", "SUBSTRING"})


def bracket_matches(tokens: list[Token]) -> dict[int, int]:
    """Index of the closing token for every opening bracket that is properly closed."""
    matches: dict[int, int] = {}
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.kind is not Kind.PUNCT:
            continue
        if tok.text in _OPEN_TO_CLOSE:
            stack.append(i)
        elif tok.text in (")", "]", "}"):
            if stack and _OPEN_TO_CLOSE[tokens[stack[-1]].text] == tok.text:
                matches[stack.pop()] = i
            else:
                stack.clear()  # unbalanced: nothing before this point is matched any further
    return matches


@dataclass
class _Writer:
    """Renders a token range back to text, rewriting the Neo4j-only forms it meets (recursively, one pass)."""

    query: str
    tokens: list[Token]
    applied: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.matches = bracket_matches(self.tokens)

    def gap(self, k: int) -> str:
        """What stands between token k-1 and token k: the whitespace, with any comment turned into a space or line break."""
        text = self.query[self.tokens[k - 1].end : self.tokens[k].pos]
        if "/" not in text:  # whitespace only (every comment starts with `/`)
            return text
        return "\n" if "\n" in text else " "

    def render(self, start: int, stop: int) -> str:
        out: list[str] = []
        k = start
        while k < stop:
            if k > start:
                out.append(self.gap(k))
            done = self._rewrite(k, stop)
            if done is None:
                out.append(self._raw(k))
                k += 1
                continue
            text, k = done
            out.append(text)
        return "".join(out)

    # --- rules: each returns (text, index after the form) or None --------------------------

    def _rewrite(self, k: int, stop: int) -> tuple[str, int] | None:
        word = self.tokens[k].upper
        if word not in _TRIGGERS or self._after_dot_or_colon(k):
            return None
        if word == "SIZE":
            return self._size_of_pattern(k, stop)
        if word in ("EXISTS", "COUNT"):
            return self._subquery_shorthand(k, stop) or (self._exists_property(k, stop) if word == "EXISTS" else None)
        if word == "TYPE" and self._is(k + 1, "(") and k + 1 < stop:
            self.applied.add("type_function")
            return "label", k + 1
        if word == "SUBSTRING":
            return self._substring(k, stop)
        return None

    def _size_of_pattern(self, k: int, stop: int) -> tuple[str, int] | None:
        outer, inner = k + 1, k + 2
        close = self.matches.get(outer) if self._is(outer, "(") else None
        inner_close = self.matches.get(inner) if self._is(inner, "(") else None
        if close is None or inner_close is None or close >= stop or not self._is(close - 1, ")"):
            return None
        if not self._relationship_at(inner_close + 1):
            return None
        self.applied.add("size_of_pattern")
        return f"COUNT {{ MATCH {self.render(inner, close)} }}", close + 1

    def _subquery_shorthand(self, k: int, stop: int) -> tuple[str, int] | None:
        if not (self._is(k + 1, "{") and self._is(k + 2, "(")) or k + 2 >= stop:
            return None
        self.applied.add("exists_subquery" if self.tokens[k].upper == "EXISTS" else "count_subquery")
        head = self._raw(k) + self.gap(k + 1) + "{" + self.gap(k + 2) + "MATCH ("
        return head, k + 3  # the pattern renders on with the rest of the range

    def _exists_property(self, k: int, stop: int) -> tuple[str, int] | None:
        t = self.tokens
        if not self._is(k + 1, "(") or self.matches.get(k + 1) != k + 5 or k + 5 >= stop:
            return None
        if not (t[k + 2].kind is Kind.WORD and self._is(k + 3, ".") and t[k + 4].kind is Kind.WORD):
            return None
        self.applied.add("exists_property")
        return f"({self.render(k + 2, k + 5)} IS NOT NULL)", k + 6

    def _substring(self, k: int, stop: int) -> tuple[str, int] | None:
        close = self.matches.get(k + 1) if self._is(k + 1, "(") else None
        if close is None or close >= stop:
            return None
        args = self._arguments(k + 2, close)
        if len(args) not in (2, 3) or any(a >= b for a, b in args):
            return None
        text, start = (self.render(a, b) for a, b in args[:2])
        length = self.render(*args[2]) if len(args) == 3 else str(SUBSTRING_REST)
        self.applied.add("substring_base")
        return f"{self._raw(k)}{self.gap(k + 1)}({text}, ({start}) + 1, {length})", close + 1

    # --- token helpers ----------------------------------------------------------------------

    def _raw(self, k: int) -> str:
        tok = self.tokens[k]
        return self.query[tok.pos : tok.end]

    def _is(self, k: int, punct: str) -> bool:
        return 0 <= k < len(self.tokens) and self.tokens[k].is_punct(punct)

    def _after_dot_or_colon(self, k: int) -> bool:
        return k > 0 and self.tokens[k - 1].is_punct(*_NOT_A_CALL_AFTER)

    def _relationship_at(self, k: int) -> bool:
        if k + 1 >= len(self.tokens):
            return False
        first, second = self.tokens[k], self.tokens[k + 1]
        adjacent = first.end == second.pos
        return adjacent and any(first.is_punct(a) and second.is_punct(b) for a, b in _RELATIONSHIP_START)

    def _arguments(self, start: int, stop: int) -> list[tuple[int, int]]:
        """Token ranges of the comma-separated arguments in [start, stop) (commas outside brackets only)."""
        spans: list[tuple[int, int]] = []
        begin = k = start
        while k < stop:
            if k in self.matches:
                k = self.matches[k] + 1
                continue
            if self.tokens[k].is_punct(","):
                spans.append((begin, k))
                begin = k + 1
            k += 1
        spans.append((begin, stop))
        return spans


__all__ = ["NOT_REWRITTEN", "Normalised", "RULES", "SUBSTRING_REST", "bracket_matches", "normalise"]
