"""The gate every query passes before a database sees it, whoever sends it.

Both stores call `admit` on every text they are asked to run, plan or inspect (generated,
typed, gold, scored, evaluated, perturbed-copy and chat queries alike), and the guard
validator reports the same `gate_check` verdict to the model. Each store names its dialect (the
embedded store's, LadybugDB, by default; the Neo4j store passes `Dialect.NEO4J`). In order:

1. the text's length (before it is even read);
2. the lexer, by the store's dialect (a text it could read differently is refused, and so is
   one the two dialects would read differently, such as a `/* **/` comment);
3. the token count and nesting depth (a database parser recurses on nesting);
4. the read-only rules (`readonly.py`): an allow-list of read clauses, the store's procedures;
5. for the embedded store only, the Neo4j-dialect rewrite (`dialect.py`, on the same tokens),
   whose output is judged again by 2-4, so the text that runs is the text that was judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from t2c_lib.cypher.dialect import normalise
from t2c_lib.cypher.lexer import DEFAULT_DIALECT, Dialect, LexError, tokenize
from t2c_lib.cypher.limits import QueryLimits, text_problem, token_problem
from t2c_lib.cypher.readonly import find_violation
from t2c_lib.errors import QueryError, ResourceLimit, UnsafeQuery


class Refusal(str, Enum):
    """Why the gate refused a text."""

    EMPTY = "empty"  # nothing but whitespace and comments
    UNREADABLE = "unreadable"  # an unterminated string, comment or name: cannot be checked
    AMBIGUOUS = "ambiguous"  # the database could read the text differently from the guard
    NOT_READ_ONLY = "not_read_only"  # a write, admin, file or code command, or several statements
    UNKNOWN_WORD = (
        "unknown_word"  # a word no grammar knows at a clause position (a typo such as LIMT): refused as syntax
    )
    TOO_LARGE = "too_large"  # over a length, token or nesting limit


@dataclass(frozen=True)
class GateVerdict:
    """The gate's reading of one text: the text a store would run, or why none."""

    query: str
    refusal: Refusal | None = None
    message: str = ""
    clause: str | None = None
    offset: int | None = None
    rewrites: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.refusal is None


def gate_check(
    text: str, rewrite: bool = True, limits: QueryLimits | None = None, dialect: Dialect = DEFAULT_DIALECT
) -> GateVerdict:
    """The gate's verdict on `text` for a store of `dialect`; with `rewrite` (embedded store only), the
    Neo4j-dialect rewrite applied and judged again."""
    limits = limits or QueryLimits.from_env()
    text = text or ""
    first = _check_text(text, limits, "", dialect)
    if not first.ok or not rewrite or dialect is not Dialect.LADYBUG:
        return first
    normalised = normalise(text)
    if not normalised.applied:
        return first
    second = _check_text(normalised.query, limits, " (after the Neo4j-dialect rewrite)", dialect)
    if not second.ok:
        return second
    return GateVerdict(normalised.query, rewrites=normalised.applied)


def admit(
    text: str, rewrite: bool = True, limits: QueryLimits | None = None, dialect: Dialect = DEFAULT_DIALECT
) -> str:
    """The text a store of `dialect` may send to its database; raise UnsafeQuery, ResourceLimit or QueryError otherwise."""
    verdict = gate_check(text, rewrite, limits, dialect)
    if verdict.ok:
        return verdict.query
    message = f"refused before the database: {verdict.message}"
    if verdict.refusal is Refusal.TOO_LARGE:
        raise ResourceLimit(message)
    if verdict.refusal in (Refusal.UNREADABLE, Refusal.EMPTY, Refusal.UNKNOWN_WORD):
        raise QueryError(message, kind="syntax")
    raise UnsafeQuery(message)


def _check_text(text: str, limits: QueryLimits, where: str, dialect: Dialect) -> GateVerdict:
    problem = text_problem(text, limits)
    if problem:
        return GateVerdict(text, Refusal.TOO_LARGE, problem + where)
    try:
        tokens = tokenize(text, dialect)
    except LexError as exc:
        if exc.ambiguous:
            return GateVerdict(
                text,
                Refusal.AMBIGUOUS,
                f"{exc} at offset {exc.pos}{where}: the database could read this text differently from the guard, so it is refused",
                "ambiguous text",
                exc.pos,
            )
        return GateVerdict(
            text,
            Refusal.UNREADABLE,
            f"{exc} at offset {exc.pos}{where}: the query cannot be read, so it cannot be checked as read-only",
            None,
            exc.pos,
        )
    if not tokens:
        return GateVerdict(text, Refusal.EMPTY, "the query is empty")
    problem = token_problem(tokens, limits)
    if problem:
        return GateVerdict(text, Refusal.TOO_LARGE, problem + where)
    violation = find_violation(tokens, dialect)
    if violation is not None:
        refusal = Refusal.UNKNOWN_WORD if violation.unknown_word else Refusal.NOT_READ_ONLY
        return GateVerdict(text, refusal, violation.message + where, violation.clause)
    return GateVerdict(text)
