"""The corrector's syntax rules (`corrector: schema+syntax`): clause-order slips a small model makes, fixed mechanically.

The rules run in the table's order; each edits token spans of the store's lexer (as the schema rules in `corrector.py` do), and
each keeps the meaning the query plainly has:

| rule | example | when |
| --- | --- | --- |
| sort direction in a projection | `RETURN m.sks DESC, m.nama ORDER BY m.sks DESC` -> `RETURN m.sks, m.nama ORDER BY m.sks DESC` | `ASC`/`DESC` ends an item of a RETURN or WITH; with no ORDER BY after that projection, `ORDER BY <item> DESC` is added |
| WHERE after RETURN | `MATCH (l:LO) RETURN count(l) AS n WHERE l.sks = 3` -> `MATCH (l:LO) WHERE l.sks = 3 RETURN count(l) AS n` | the condition names no alias of that RETURN and calls no aggregate, and the clause before the RETURN is a MATCH or WITH (an existing WHERE there is joined with AND) |
| ORDER BY of one aggregated row | `RETURN count(DISTINCT p) ORDER BY p` -> `RETURN count(DISTINCT p)` | every item of the query's last RETURN is one aggregate call: one row, nothing to order |

Chosen from the syntax errors of the first attempts on the curriculum development questions
(`benchmarks/loop_dev.py --attempts`, RESULTS.md "Loop options on the development set") and the
chat example of docs/chat.md; never from the test questions.
"""

from __future__ import annotations

from dataclasses import dataclass

from t2c_lib.cypher.lexer import Dialect, Kind, Token, tokenize

SORT_WORDS = frozenset({"ASC", "DESC", "ASCENDING", "DESCENDING"})
AGGREGATES = frozenset(
    {"COUNT", "SUM", "AVG", "MIN", "MAX", "COLLECT", "STDEV", "STDEVP", "PERCENTILECONT", "PERCENTILEDISC"}
)
CLAUSE_WORDS = frozenset(
    {"MATCH", "OPTIONAL", "WHERE", "WITH", "RETURN", "ORDER", "SKIP", "LIMIT", "UNWIND", "UNION", "CALL"}
)
CONDITION_WORDS = frozenset(
    {"AND", "OR", "NOT", "XOR", "IN", "IS", "NULL", "TRUE", "FALSE", "CONTAINS", "STARTS", "ENDS", "WITH"}
    | {"CASE", "WHEN", "THEN", "ELSE", "END", "DISTINCT"}
)

Edit = tuple[int, int, str]


@dataclass(frozen=True)
class Clause:
    """A top-level clause: its keyword, and the token indexes of its keyword and of the next clause's (or the end)."""

    word: str
    start: int
    end: int


def token_end(tok: Token) -> int:
    """Index just past the token's raw text (quotes and backticks included)."""
    return tok.end if tok.end >= 0 else tok.pos + len(tok.text)


def clauses(tokens: list[Token]) -> list[Clause]:
    """The query's clauses at bracket depth 0 (`STARTS WITH` / `ENDS WITH` and `OPTIONAL MATCH` read as one word)."""
    starts: list[tuple[str, int]] = []
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth = max(0, depth - 1)
        word = tok.upper
        if depth or word not in CLAUSE_WORDS:
            continue
        if word == "WITH" and i and tokens[i - 1].upper in ("STARTS", "ENDS"):
            continue
        if word == "MATCH" and i and tokens[i - 1].upper == "OPTIONAL":
            continue
        if word == "ORDER" and (i + 1 >= len(tokens) or tokens[i + 1].upper != "BY"):
            continue
        starts.append((word, i))
    return [
        Clause(word, start, starts[k + 1][1] if k + 1 < len(starts) else len(tokens))
        for k, (word, start) in enumerate(starts)
    ]


def items(tokens: list[Token], start: int, end: int) -> list[tuple[int, int]]:
    """The comma-separated items of tokens[start:end] at bracket depth 0, as (first, past-last) index pairs."""
    out, depth, first = [], 0, start
    for i in range(start, end):
        tok = tokens[i]
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth = max(0, depth - 1)
        elif depth == 0 and tok.is_punct(","):
            out.append((first, i))
            first = i + 1
    if first < end:
        out.append((first, end))
    return out


def _projection_start(tokens: list[Token], clause: Clause) -> int:
    first = clause.start + 1
    return first + 1 if first < clause.end and tokens[first].upper == "DISTINCT" else first


def _alias(tokens: list[Token], first: int, last: int) -> str | None:
    """The item's `AS name`, if it has one at depth 0 as its last two tokens."""
    if last - first >= 3 and tokens[last - 2].upper == "AS" and tokens[last - 1].name:
        return tokens[last - 1].name
    return None


def apply_edits(text: str, edits: list[Edit]) -> str:
    """`text` with every (start, end, replacement) edit made, last first so earlier spans stay valid."""
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def sort_in_projection(text: str, dialect: Dialect) -> tuple[str, list[str]]:
    """`RETURN x DESC` -> `RETURN x ORDER BY x DESC` (or the keyword dropped when an ORDER BY follows)."""
    tokens = tokenize(text, dialect)
    found = clauses(tokens)
    edits: list[Edit] = []
    changes: list[str] = []
    for k, clause in enumerate(found):
        if clause.word not in ("RETURN", "WITH"):
            continue
        keys: list[str] = []
        for first, last in items(tokens, _projection_start(tokens, clause), clause.end):
            word = tokens[last - 1].upper
            if last - first < 2 or word not in SORT_WORDS or tokens[last - 2].upper == "AS":
                continue
            before = tokens[last - 2]
            edits.append((token_end(before), token_end(tokens[last - 1]), ""))
            expr = text[tokens[first].pos : token_end(before)]
            keys.append(f"{_alias(tokens, first, last - 1) or expr} {tokens[last - 1].text}")
            changes.append(f"sort direction `{tokens[last - 1].text}` moved out of {clause.word} `{expr}`")
        ordered = k + 1 < len(found) and found[k + 1].word == "ORDER" and found[k + 1].start == clause.end
        if keys and not ordered:
            edits.append(
                (token_end(tokens[clause.end - 1]), token_end(tokens[clause.end - 1]), " ORDER BY " + ", ".join(keys))
            )
    return apply_edits(text, edits), changes


def _is_aggregate_item(tokens: list[Token], first: int, last: int) -> bool:
    """The item is one aggregate call, `agg(...)` optionally followed by `AS name`."""
    if last - first < 3 or tokens[first].upper not in AGGREGATES or not tokens[first + 1].is_punct("("):
        return False
    depth = 0
    for i in range(first + 1, last):
        if tokens[i].is_punct("(", "[", "{"):
            depth += 1
        elif tokens[i].is_punct(")", "]", "}"):
            depth -= 1
            if depth == 0:
                rest = last - i - 1
                return rest == 0 or (rest == 2 and tokens[i + 1].upper == "AS" and bool(tokens[i + 2].name))
    return False


def order_of_one_row(text: str, dialect: Dialect) -> tuple[str, list[str]]:
    """Drop the ORDER BY after a last RETURN whose every item is an aggregate (its result is one row)."""
    tokens = tokenize(text, dialect)
    found = clauses(tokens)
    if any(c.word == "UNION" for c in found):
        return text, []
    returns = [k for k, c in enumerate(found) if c.word == "RETURN"]
    if not returns or returns[-1] + 1 >= len(found) or found[returns[-1] + 1].word != "ORDER":
        return text, []
    ret, order = found[returns[-1]], found[returns[-1] + 1]
    parts = items(tokens, _projection_start(tokens, ret), ret.end)
    if not parts or not all(_is_aggregate_item(tokens, a, b) for a, b in parts):
        return text, []
    removed = text[tokens[order.start].pos : token_end(tokens[order.end - 1])]
    edit = (token_end(tokens[ret.end - 1]), token_end(tokens[order.end - 1]), "")
    return apply_edits(text, [edit]), [
        f"`{removed}` dropped: the RETURN holds only aggregates, so its result is one row"
    ]


def _condition_ok(tokens: list[Token], first: int, last: int, aliases: set[str]) -> bool:
    """The condition calls no aggregate and names no alias (names after `.` or before `:` are keys)."""
    for i in range(first, last):
        tok = tokens[i]
        if tok.kind is not Kind.WORD and tok.kind is not Kind.QUOTED:
            continue
        if tok.upper in AGGREGATES and i + 1 < last and tokens[i + 1].is_punct("("):
            return False
        after_dot = i > first and tokens[i - 1].is_punct(".")
        if not after_dot and tok.name in aliases and tok.upper not in CONDITION_WORDS:
            return False
    return True


def where_after_return(text: str, dialect: Dialect) -> tuple[str, list[str]]:
    """`... RETURN items WHERE cond` -> `... WHERE cond RETURN items` when that reading is the only one."""
    tokens = tokenize(text, dialect)
    found = clauses(tokens)
    for k, clause in enumerate(found):
        if clause.word != "RETURN" or k == 0 or k + 1 >= len(found) or found[k + 1].word != "WHERE":
            continue
        where = found[k + 1]
        if any(c.word in ("RETURN", "WITH") for c in found[k + 2 :]) or where.end - where.start < 2:
            return text, []
        aliases = {
            a for a in (_alias(tokens, *p) for p in items(tokens, _projection_start(tokens, clause), clause.end)) if a
        }
        if not _condition_ok(tokens, where.start + 1, where.end, aliases):
            return text, []
        before = [c for c in found[:k] if c.word != "WHERE"]
        if not before or before[-1].word not in ("MATCH", "OPTIONAL", "WITH"):
            return text, []
        existing = found[k - 1] if found[k - 1].word == "WHERE" else None
        cond = text[tokens[where.start + 1].pos : token_end(tokens[where.end - 1])]
        edits: list[Edit] = [(token_end(tokens[clause.end - 1]), token_end(tokens[where.end - 1]), "")]
        at = tokens[clause.start].pos
        if existing is None:
            edits.append((at, at, f"WHERE {cond} "))
        else:
            first_cond = tokens[existing.start + 1].pos
            edits += [(first_cond, first_cond, "("), (token_end(tokens[clause.start - 1]), at, f") AND ({cond}) ")]
        return apply_edits(text, edits), [f"`WHERE {cond}` moved before the RETURN it followed"]
    return text, []


RULES = (sort_in_projection, where_after_return, order_of_one_row)
"""The syntax rules in the order the corrector applies them."""


def fix_syntax(text: str, dialect: Dialect) -> tuple[str, list[str]]:
    """Every syntax rule in turn on `text`; the result and one line per change (LexError passes through)."""
    changes: list[str] = []
    for rule in RULES:
        text, made = rule(text, dialect)
        changes.extend(made)
    return text, changes
