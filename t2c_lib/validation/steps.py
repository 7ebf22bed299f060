"""The chain's steps after the guard: syntax, schema, properties, execution, non-empty result.

How binder errors are classified. LadybugDB's EXPLAIN (like Kuzu's) already rejects
unknown labels and properties ("Binder exception: Table Foo does not exist", "Cannot find
property foo for n"), so a query whose only fault is a name would fail at the syntax step
with an unhelpful message. The syntax step therefore passes such a query on: when EXPLAIN
raises a *semantic* error, it runs this package's own schema and property checks
(`checks.py`, from the light pattern extractor) and, if they find the problem, or if the
binder message itself names a missing table or property, it defers the error (kept in
`ctx.deferred`) and reports the query as parsing. The schema and properties steps then
report SCHEMA_ERROR / PROPERTIES_ERROR with the valid names, closest matches and
directions. Any other semantic error (unbound variable, unknown function) is a compile
error and stays a SYNTAX_ERROR, as in CyVer, whose syntax check is EXPLAIN.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, ClassVar

from t2c_lib.cypher.dialect import normalise
from t2c_lib.cypher.lexer import LexError
from t2c_lib.graph.base import QueryError, QueryTimeout
from t2c_lib.records import ErrorType, ValidationResult
from t2c_lib.schema import GraphSchema
from t2c_lib.validation.base import ValidationContext
from t2c_lib.validation.checks import Problem, property_problems, schema_problems
from t2c_lib.validation.names import NameSet, quote_list
from t2c_lib.validation.patterns import QueryShape, extract

_MISSING_TABLE = re.compile(r"Table (\S+?)\.? does not exist", re.IGNORECASE)
_MISSING_PROPERTY = re.compile(r"Cannot find property (\S+) for (\S+?)\.?$", re.IGNORECASE | re.MULTILINE)
_NEO4J_MISSING = re.compile(
    r"(label|relationship type|property)[^`']*[`']([^`']+)[`'] (?:does not exist|is not in the database)", re.IGNORECASE
)

UNSAFE_KINDS = ("unsafe", "write")
"""QueryError kinds that mean the database itself refused the query as not a read."""

LIMIT_KINDS = ("resource", "too_large")
"""QueryError kinds that mean the query went over a limit (size, nesting, memory, rows, bytes)."""

MAX_VALUE_HINTS = 5


def shape_of(query: str, ctx: ValidationContext) -> QueryShape | None:
    """The query's shape, extracted once per query (None if it cannot be tokenized)."""
    if ctx.shape is None:
        try:
            ctx.shape = extract(query)
        except LexError:
            return None
    return ctx.shape


def _timed(
    name: str, fn: Callable[[], ValidationResult], query: str | None = None, ctx: ValidationContext | None = None
) -> ValidationResult:
    """Run one check, stamp its name and time; a failure also names the labels the query uses (for feedback)."""
    start = time.perf_counter()
    result = fn()
    result.validator = name
    if not result.ok and ctx is not None and query is not None and "labels_used" not in result.details:
        shape = shape_of(query, ctx)
        if shape is not None:
            labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
            result.details["labels_used"] = [labels.canonical(n) for n in shape.labels if n in labels]
    result.elapsed_s = time.perf_counter() - start
    return result


def dialect_rewrites(query: str, ctx: ValidationContext) -> list[str]:
    """The Neo4j-dialect rules the store applied to `query` before planning it (none for Neo4j)."""
    if not ctx.store.facts.normalises_dialect:
        return []
    return list(normalise(query).applied)


class _TimedStep:
    """A chain step whose `_check` is timed and stamped by `_timed`; a failure names the labels the query used
    unless the step's own finding already does (`names_labels = False`: the schema and properties steps)."""

    name: str
    names_labels: ClassVar[bool] = True

    def validate(self, query: str, ctx: ValidationContext) -> ValidationResult:
        if self.names_labels:
            return _timed(self.name, lambda: self._check(query, ctx), query, ctx)
        return _timed(self.name, lambda: self._check(query, ctx))

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:
        raise NotImplementedError


class SyntaxStep(_TimedStep):
    """The store parses and plans the query (EXPLAIN); name errors are deferred to the next steps."""

    name = "syntax"

    def validate(self, query: str, ctx: ValidationContext) -> ValidationResult:
        result = super().validate(query, ctx)
        rewrites = dialect_rewrites(query, ctx)
        if rewrites:
            result.details["dialect_rewrites"] = rewrites
        return result

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:
        try:
            ctx.store.explain(query)
        except QueryTimeout as exc:
            return ValidationResult(self.name, False, ErrorType.TIMEOUT, f"planning the query timed out: {exc}")
        except QueryError as exc:
            message = str(exc)
            if exc.kind in UNSAFE_KINDS:
                return ValidationResult(self.name, False, ErrorType.UNSAFE_QUERY, message, {"kind": exc.kind})
            if exc.kind in LIMIT_KINDS:
                return ValidationResult(self.name, False, ErrorType.RESOURCE_LIMIT, message, {"kind": exc.kind})
            if exc.kind == "semantic":
                deferred = self._deferred_kind(query, message, ctx)
                if deferred is not None:
                    ctx.deferred = (deferred, message)
                    step = "schema" if deferred is ErrorType.SCHEMA_ERROR else "properties"
                    return ValidationResult(
                        self.name,
                        True,
                        None,
                        f"parses; the binder's error is left to the {step} step: {message}",
                        {"deferred": deferred.value, "store_message": message},
                    )
            kind = "parse" if exc.kind == "syntax" else exc.kind
            return ValidationResult(self.name, False, ErrorType.SYNTAX_ERROR, message, {"kind": kind})
        return ValidationResult(self.name, True, None, "parses and plans")

    @staticmethod
    def _deferred_kind(query: str, message: str, ctx: ValidationContext) -> ErrorType | None:
        shape = shape_of(query, ctx)
        if shape is not None:
            if schema_problems(shape, ctx.schema, ctx.names_case_sensitive):
                return ErrorType.SCHEMA_ERROR
            if property_problems(shape, ctx.schema, ctx.names_case_sensitive):
                return ErrorType.PROPERTIES_ERROR
        if _MISSING_TABLE.search(message):
            return ErrorType.SCHEMA_ERROR
        if _MISSING_PROPERTY.search(message):
            return ErrorType.PROPERTIES_ERROR
        neo = _NEO4J_MISSING.search(message)
        if neo:
            return ErrorType.PROPERTIES_ERROR if neo.group(1).lower() == "property" else ErrorType.SCHEMA_ERROR
        return None


class _NameStep(_TimedStep):
    """A step that checks the names a query uses: its own finding first, then the binder's deferred error of its
    kind (`SyntaxStep` leaves a binder error it recognises to the step of that kind)."""

    names_labels = False
    error: ClassVar[ErrorType]
    problems: Callable[[QueryShape, GraphSchema, bool], Problem | None]
    """The step's own finding (`checks.schema_problems`, `checks.property_problems`)."""

    def _passed(self, shape: QueryShape | None, ctx: ValidationContext) -> ValidationResult:
        raise NotImplementedError

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:
        shape = shape_of(query, ctx)
        problem = self.problems(shape, ctx.schema, ctx.names_case_sensitive) if shape is not None else None
        if problem:
            message, details = problem
            return ValidationResult(self.name, False, self.error, message, details)
        if ctx.deferred and ctx.deferred[0] is self.error:
            return _from_binder(self.name, self.error, ctx.deferred[1], ctx, shape)
        return self._passed(shape, ctx)


class SchemaStep(_NameStep):
    """Labels, relationship types and directions exist in the introspected schema."""

    name = "schema"
    error = ErrorType.SCHEMA_ERROR
    problems = staticmethod(schema_problems)

    def _passed(self, shape: QueryShape | None, ctx: ValidationContext) -> ValidationResult:
        used = len(shape.labels) + len(shape.rel_types) if shape else 0
        return ValidationResult(
            self.name, True, None, f"{used} label(s)/type(s) and every relationship direction match the schema"
        )


class PropertiesStep(_NameStep):
    """Every property key used belongs to the label (or type) its variable is bound to."""

    name = "properties"
    error = ErrorType.PROPERTIES_ERROR
    problems = staticmethod(property_problems)

    def _passed(self, shape: QueryShape | None, ctx: ValidationContext) -> ValidationResult:
        if ctx.deferred:
            # A deferred binder error no step recognised: report it rather than lose it.
            return ValidationResult(
                self.name, False, ctx.deferred[0], ctx.deferred[1], {"store_message": ctx.deferred[1]}
            )
        return ValidationResult(self.name, True, None, "every property used exists on its label")


def _from_binder(
    step: str, error: ErrorType, message: str, ctx: ValidationContext, shape: QueryShape | None
) -> ValidationResult:
    """A failing result built from the store's binder message, with the closest valid names."""
    details: dict[str, Any] = {"store_message": message, "suggestions": {}}
    labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
    types = NameSet(ctx.schema.rel_types, ctx.names_case_sensitive)
    table = _MISSING_TABLE.search(message)
    prop = _MISSING_PROPERTY.search(message)
    text = message
    if error is ErrorType.SCHEMA_ERROR and table:
        name = table.group(1).strip("`'\"")
        close = labels.closest(name) + [t for t in types.closest(name) if t not in labels]
        details["unknown_names"] = [name]
        details["suggestions"][name] = close
        text = f"label or relationship type `{name}` does not exist" + (
            f"; did you mean {quote_list(close)}?" if close else ""
        )
    elif error is ErrorType.PROPERTIES_ERROR and prop:
        key, var = prop.group(1).strip("`'\""), prop.group(2).strip("`'\"")
        owners = sorted(shape.node_labels(var) | shape.rel_types_of(var)) if shape else []
        valid = sorted({p for o in owners for p in ctx.schema.properties_of(o)})
        close = NameSet(
            valid or {p for lab in ctx.schema.labels for p in ctx.schema.properties_of(lab)}, ctx.names_case_sensitive
        ).closest(key)
        details["unknown_properties"] = [
            {
                "variable": var,
                "owners": owners,
                "property": key,
                "relationship": False,
                "closest": close,
                "valid": valid,
                "elsewhere": [],
            }
        ]
        details["suggestions"][key] = close
        text = f"`{var}.{key}`: property `{key}` does not exist" + (f" on `{'|'.join(owners)}`" if owners else "")
        if close:
            text += f"; did you mean {quote_list(close)}?"
    if shape is not None:
        details["labels_used"] = [labels.canonical(n) or n for n in shape.labels if n in labels]
        details["types_used"] = [types.canonical(n) or n for n in shape.rel_types if n in types]
    return ValidationResult(step, False, error, text, details)


class ExecutionStep(_TimedStep):
    """The query runs read-only within the time limit; its result is kept for the next step."""

    name = "execution"

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:
        try:
            ctx.result = ctx.store.query(query, timeout_s=ctx.timeout_s)
        except QueryTimeout as exc:
            return ValidationResult(
                self.name,
                False,
                ErrorType.TIMEOUT,
                f"the query ran longer than {ctx.timeout_s:g} s and was stopped ({exc})",
                {"timeout_s": ctx.timeout_s},
            )
        except QueryError as exc:
            message = f"the read-only database refused a write: {exc}" if exc.kind == "write" else str(exc)
            if exc.kind in ("write", "unsafe"):
                error = ErrorType.UNSAFE_QUERY
            else:
                error = ErrorType.RESOURCE_LIMIT if exc.kind in LIMIT_KINDS else ErrorType.EXECUTION_ERROR
            return ValidationResult(self.name, False, error, message, {"kind": exc.kind})
        rows = len(ctx.result.rows)
        return ValidationResult(
            self.name, True, None, f"ran in {ctx.result.elapsed_s:.3f} s, {rows} row(s)", {"rows": rows}
        )


class NonEmptyStep(_TimedStep):
    """The result has at least one row with a non-null value; otherwise say which filter matched nothing."""

    name = "non_empty"

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:
        result = ctx.result
        if result is None:
            return ValidationResult(
                self.name, False, ErrorType.EXECUTION_ERROR, "no result to check: the execution step did not run"
            )
        if any(any(value is not None for value in row) for row in result.rows):
            return ValidationResult(self.name, True, None, f"{len(result.rows)} row(s)")
        what = "no rows" if not result.rows else f"{len(result.rows)} row(s), all values null"
        hints = value_hints(query, ctx)
        message = f"the query returned {what}"
        for hint in hints:
            spelled = (
                f"; closest stored values: {', '.join(repr(v) for v in hint['closest'])}" if hint["closest"] else ""
            )
            message += f"; no `{hint['label']}` has {hint['property']} {hint['op']} {hint['value']!r}{spelled}"
        return ValidationResult(
            self.name, False, ErrorType.EMPTY_RESULT, message, {"value_hints": hints, "rows": len(result.rows)}
        )


def value_hints(query: str, ctx: ValidationContext) -> list[dict[str, Any]]:
    """String literals in filters that match no stored value, with the closest stored values.

    The stored values come from the same `ValueIndex` (`graph/value_index.py`) that links a question's
    literals before generation, kept on the context (the store is read-only).
    """
    from t2c_lib.graph.value_index import ValueIndex, store_loader

    shape = shape_of(query, ctx)
    if shape is None:
        return []
    if ctx.values is None:
        ctx.values = ValueIndex(ctx.schema, store_loader(ctx.store, ctx.timeout_s))
    labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
    hints: list[dict[str, Any]] = []
    for lit in shape.literal_filters[:MAX_VALUE_HINTS]:
        owners = set(lit.labels) or (shape.node_labels(lit.var) if lit.var else set())
        canon = sorted({c for c in (labels.canonical(o) for o in owners) if c is not None})
        if len(canon) != 1:
            continue
        label = canon[0]
        key = NameSet(ctx.schema.properties_of(label), ctx.names_case_sensitive).canonical(lit.key)
        if key is None:
            continue
        closest = ctx.values.closest(label, key, lit.op, lit.value)
        if closest is None:
            continue
        hints.append({"label": label, "property": key, "op": lit.op, "value": lit.value, "closest": closest})
    return hints
