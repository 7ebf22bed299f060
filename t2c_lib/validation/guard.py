"""The read-only guard: the chain's first validator, the gate's verdict said to the model.

Every store runs the same gate (`cypher/gate.py`) on every query before its database sees
it; this step runs it first so the loop can explain a refusal in its feedback: an empty
text is NO_QUERY, an unreadable one SYNTAX_ERROR, one over a size or nesting limit
RESOURCE_LIMIT, and a write, admin, file or code command, a second statement or text the
database could read differently UNSAFE_QUERY. The rules themselves are in
`cypher/readonly.py`; the dialect is the context's store's (Neo4j's for the Neo4j store, the
embedded store's otherwise), so the model hears the verdict the store's own gate would give.
"""

from __future__ import annotations

import time

from t2c_lib.cypher.gate import Refusal, gate_check
from t2c_lib.cypher.lexer import DEFAULT_DIALECT, Dialect
from t2c_lib.records import ErrorType, ValidationResult

_ERROR_TYPES = {
    Refusal.EMPTY: ErrorType.NO_QUERY,
    Refusal.UNREADABLE: ErrorType.SYNTAX_ERROR,
    Refusal.UNKNOWN_WORD: ErrorType.SYNTAX_ERROR,
    Refusal.AMBIGUOUS: ErrorType.UNSAFE_QUERY,
    Refusal.NOT_READ_ONLY: ErrorType.UNSAFE_QUERY,
    Refusal.TOO_LARGE: ErrorType.RESOURCE_LIMIT,
}


class ReadOnlyGuard:
    """Validator step "guard": refuse anything but one read-only query of bounded size."""

    name = "guard"

    def validate(self, query: str, ctx: object = None) -> ValidationResult:
        """Judge `query` in the dialect ctx's store declares (the guard needs no database; none: the default)."""
        start = time.perf_counter()
        facts = getattr(getattr(ctx, "store", None), "facts", None)
        verdict = check_read_only(query, facts.dialect if facts is not None else DEFAULT_DIALECT)
        verdict.elapsed_s = time.perf_counter() - start
        return verdict


def check_read_only(query: str, dialect: Dialect = DEFAULT_DIALECT) -> ValidationResult:
    """The gate's verdict on one query text for a store of `dialect`, as the guard step's result."""
    verdict = gate_check(query or "", dialect=dialect)
    if verdict.ok:
        return ValidationResult("guard", True, None, "read-only")
    details: dict[str, object] = {}
    if verdict.clause is not None:
        details["clause"] = verdict.clause
    if verdict.offset is not None:
        details["offset"] = verdict.offset
    assert verdict.refusal is not None
    return ValidationResult("guard", False, _ERROR_TYPES[verdict.refusal], verdict.message, details)
