"""CyVer's validators as the chain's syntax, schema and properties steps on a Neo4j store.

CyVer (PyPI `CyVer`) judges a Cypher query against a live Neo4j database:
`SyntaxValidator` (EXPLAIN, selected notifications, explicit division by zero, one variable
with two labels) gives a verdict; `SchemaValidator` scores the labels, relationship types
and one-hop paths the query uses in [0, 1] by checking that they exist in the graph;
`PropertiesValidator` gives the share of accessed properties that exist on their labels
(None when none is accessed). Each comes with metadata `{code, description}`.
A query is KG-valid in CyVer's sense when the syntax is valid, the schema score is 1 and
the properties score is 1 or None; each step here passes exactly then, and a failure
becomes SYNTAX_ERROR, SCHEMA_ERROR or PROPERTIES_ERROR with CyVer's descriptions as the
message, its codes and score in `details`, and the closest valid names as suggestions.

CyVer runs its own queries through a driver. It gets one whose every session and
`execute_query` is forced into READ access mode with the chain's time limit, and whose
`execute_query` (where CyVer sends the model's query and the queries it builds from it)
passes every text through the stores' gate first, so nothing it sends can write, read a
file or escape the limits. Every CyVer call (and the validators' set-up) runs under one
client deadline (`neo4j_limits.Watch`): every session CyVer opens meanwhile is watched, and
at the time limit plus a grace their connections are cut and the server transactions
terminated, so a query the server never answers (1,995 chained NOTs) ends as TIMEOUT; the
driver does not retry a cut transaction. Where the server's own time limit fires first, CyVer
reports its error as a finding (a failed syntax check): that is a TIMEOUT too
(`server_timed_out`), whatever the machine's load. CyVer picks a random label combination when
it infers unlabelled variables; the global NumPy seed is fixed around each call (and restored) so verdicts
repeat. If CyVer itself fails on a query, the step falls back to this package's own
check and records `cyver_error`.
"""

from __future__ import annotations

import logging
import re
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import neo4j
import numpy as np
from neo4j import exceptions as nx

from t2c_lib.cypher.gate import admit
from t2c_lib.cypher.lexer import Dialect
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S, GraphStore, QueryTimeout, StoreUnavailable
from t2c_lib.graph.neo4j import is_timeout_error
from t2c_lib.graph.neo4j_limits import Watch
from t2c_lib.records import ErrorType, ValidationResult
from t2c_lib.validation.base import ValidationContext, Validator
from t2c_lib.validation.names import NameSet
from t2c_lib.validation.steps import PropertiesStep, SchemaStep, SyntaxStep, shape_of

CYVER_SEED = 0

# CyVer reads `summary.notifications` (deprecated in driver 6) and the driver logs every
# notification it receives; neither is news for the chain.
warnings.filterwarnings("ignore", message=r"ResultSummary\.notifications is deprecated", category=DeprecationWarning)
logging.getLogger("neo4j.notifications").addHandler(logging.NullHandler())
_MISSING_NAME = re.compile(r"\(the missing (label name|relationship type|property name) is: ([^)]+)\)")
_SHORT = {
    "label name": "label `{}` does not exist in the graph",
    "relationship type": "relationship type `{}` does not exist in the graph",
    "property name": "property `{}` does not exist on any node or relationship",
}
_LABEL_LACKS = re.compile(r"The label (\S+) does not have the following properties:\s*(.+?)\.?$")


# --- a read-only driver for CyVer ------------------------------------------------------------


class _ReadOnlyDriverMixin:
    """Forces READ access mode and a transaction time limit on everything CyVer runs."""

    t2c_timeout_s: float = DEFAULT_TIMEOUT_S
    t2c_watch: Watch | None = None

    def session(self, **config: Any) -> neo4j.Session:
        config["default_access_mode"] = neo4j.READ_ACCESS
        return super().session(**config)  # type: ignore[misc]  # a mixin: the driver follows it

    def _session(self, session_config: Any) -> neo4j.Session:
        """Every session, `execute_query`'s own included: the call's watch cuts it at the deadline."""
        session = super()._session(session_config)  # type: ignore[misc]  # a mixin: the driver follows it
        watch = self.t2c_watch
        if watch is not None:
            watch.add(session)
        return session

    def execute_query(self, query_: Any, parameters_: Any = None, routing_: Any = None, **kwargs: Any) -> Any:
        text = query_.text if isinstance(query_, neo4j.Query) else query_
        admit(
            _without_explain(str(text)), rewrite=False, dialect=Dialect.NEO4J
        )  # the stores' gate: CyVer's queries are built from the model's
        watch = self.t2c_watch
        metadata = watch.metadata if watch is not None else None
        query = neo4j.Query(text, timeout=self.t2c_timeout_s, metadata=metadata)
        return super().execute_query(query, parameters_, neo4j.RoutingControl.READ, **kwargs)  # type: ignore[misc]  # (mixin)


if TYPE_CHECKING:

    class _ReadOnlyDriver(neo4j.Driver):
        """What `read_only_driver` returns, as mypy sees it (the class is made at run time, with the mixin)."""

        t2c_timeout_s: float
        t2c_watch: Watch | None


def _without_explain(text: str) -> str:
    """The query CyVer asks the server to EXPLAIN (the gate judges the query, and refuses a leading EXPLAIN of its own)."""
    stripped = text.lstrip()
    return stripped[len("EXPLAIN") :] if stripped[:8].upper() == "EXPLAIN " else text


def read_only_driver(driver: neo4j.Driver, timeout_s: float = DEFAULT_TIMEOUT_S) -> _ReadOnlyDriver:
    """`driver` turned into its read-only variant (same object, so CyVer's isinstance check holds)."""
    cls = type(driver)
    if not issubclass(cls, _ReadOnlyDriverMixin):
        driver.__class__ = type(f"ReadOnly{cls.__name__}", (_ReadOnlyDriverMixin, cls), {})
    read_only = cast("_ReadOnlyDriver", driver)
    read_only.t2c_timeout_s = timeout_s
    return read_only


class CyVerSession:
    """CyVer's three validators on one read-only driver to the store's server."""

    def __init__(self, store: GraphStore, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        from CyVer import PropertiesValidator, SchemaValidator, SyntaxValidator

        new_driver = getattr(store, "new_driver", None)
        if new_driver is None:
            raise TypeError(f"CyVer needs a Neo4j store, not {getattr(store, 'name', type(store).__name__)!r}")
        self.store = store
        self.database = getattr(store, "database", None)
        # Its own driver: CyVer needs the server's notifications, which the store's driver turns off.
        # No retries: a transaction the deadline cut must end the call, not start again.
        self.driver = read_only_driver(
            new_driver(warn_notification_severity="OFF", max_transaction_retry_time=0.0), timeout_s
        )
        try:
            with self._deadline() as watch:
                try:
                    self.syntax = SyntaxValidator(self.driver)
                    self.schema = SchemaValidator(self.driver)
                    self.properties = PropertiesValidator(self.driver)
                finally:
                    self.driver.t2c_watch = None
            if watch.reason == "deadline":
                raise StoreUnavailable(f"CyVer's set-up got no answer from Neo4j within {timeout_s:g} s")
        except (nx.ServiceUnavailable, nx.SessionExpired) as exc:
            self.driver.close()
            why = f"no answer within {timeout_s:g} s" if watch.reason == "deadline" else str(exc)
            raise StoreUnavailable(f"CyVer cannot reach Neo4j at {getattr(store, 'uri', '?')}: {why}") from None
        except StoreUnavailable:
            self.driver.close()
            raise

    def _deadline(self) -> Watch:
        """A client deadline on everything CyVer sends until it closes (armed here, entered by the caller)."""
        watch = Watch(None, self.driver.t2c_timeout_s, terminate=getattr(self.store, "_terminate", None))
        self.driver.t2c_watch = watch
        return watch

    def set_timeout(self, timeout_s: float) -> None:
        self.driver.t2c_timeout_s = timeout_s

    def call(self, fn: Callable[..., Any], query: str) -> Any:
        """One CyVer call under the client deadline, with a fixed NumPy seed (restored after).

        Past the deadline it raises QueryTimeout (even where CyVer caught the cut connection and
        made a verdict of it); a lost server is StoreUnavailable."""
        state = np.random.get_state()
        np.random.seed(CYVER_SEED)
        watch = self._deadline()
        try:
            with watch, warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"CyVer\.")
                result = fn(query, database_name=self.database)
        except Exception as exc:
            if watch.reason == "deadline":
                raise _cyver_timeout(watch) from None
            if isinstance(exc, (nx.ServiceUnavailable, nx.SessionExpired)):
                raise StoreUnavailable(f"CyVer lost Neo4j at {getattr(self.store, 'uri', '?')}: {exc}") from None
            raise
        finally:
            self.driver.t2c_watch = None
            np.random.set_state(state)
        if watch.reason == "deadline":
            raise _cyver_timeout(watch)
        if server_timed_out(result):  # the server's own limit fired first: CyVer made a finding of its error
            raise _cyver_timeout(watch, "the server's timeout")
        return result

    def close(self) -> None:
        self.driver.close()


def server_timed_out(result: Any) -> bool:
    """CyVer's `(verdict, metadata)` holds the server's transaction timeout: CyVer catches the server's error and
    reports it as a finding (a failed syntax check), so under load a query the server stopped at the time limit
    would otherwise read as SYNTAX_ERROR instead of TIMEOUT."""
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], list)):
        return False
    return any(
        isinstance(m, dict) and is_timeout_error(str(m.get("code") or ""), str(m.get("description") or ""))
        for m in result[1]
    )


def _cyver_timeout(watch: Watch, stopped_by: str = "the client cut the connection") -> QueryTimeout:
    return QueryTimeout(
        f"CyVer's check stopped after {watch.elapsed_s:.1f} s (time limit {watch.timeout_s:g} s; {stopped_by})"
    )


# --- the three steps --------------------------------------------------------------------------


class _CyVerStep:
    """Shared plumbing: timing, the CyVer call, fallback to the built-in step when CyVer fails."""

    name = ""
    fallback: Validator

    def __init__(self, cyver: CyVerSession) -> None:
        self.cyver = cyver

    def validate(self, query: str, ctx: ValidationContext) -> ValidationResult:
        started = time.perf_counter()
        self.cyver.set_timeout(ctx.timeout_s)
        try:
            result = self._check(query, ctx)
        except StoreUnavailable:
            raise
        except QueryTimeout as exc:  # no fallback: the built-in step would wait out the same limit again
            result = ValidationResult(
                self.name, False, ErrorType.TIMEOUT, f"CyVer's {self.name} check timed out: {exc}"
            )
        except Exception as exc:  # CyVer's own failure on an odd query: judge it with our step instead
            result = self.fallback.validate(query, ctx)
            result.details = {**result.details, "cyver_error": f"{type(exc).__name__}: {exc}"}
        result.validator = self.name
        result.details.setdefault("validator_impl", "cyver")
        result.elapsed_s = time.perf_counter() - started
        return result

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def _called(
        self, validate: Any, query: str, key: str, ctx: ValidationContext | None = None
    ) -> tuple[Any, Any, dict[str, Any]]:
        """One CyVer validator on `query`: its value, its metadata, and the details every step records (`key`:
        the value; with `ctx`, the labels the query uses)."""
        value, metadata = self.cyver.call(validate, query)
        details: dict[str, Any] = {key: value, "codes": _codes(metadata), "cyver_metadata": metadata}
        if ctx is not None:
            _add_labels_used(details, query, ctx)
        return value, metadata, details

    def _failed(
        self, error: ErrorType, metadata: Any, details: dict[str, Any], default: str, **found: Any
    ) -> ValidationResult:
        """The failing result: CyVer's findings as the message (`default` when it has none); each non-empty
        `found` (suggestions, unknown properties) added to the details."""
        details.update({key: value for key, value in found.items() if value})
        return ValidationResult(self.name, False, error, _message(metadata, default), details)


class CyVerSyntaxStep(_CyVerStep):
    """CyVer's SyntaxValidator: valid or SYNTAX_ERROR."""

    name = "syntax"
    fallback = SyntaxStep()

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:
        valid, metadata, details = self._called(self.cyver.syntax.validate, query, "cyver_valid")
        details["cyver_valid"] = bool(valid)
        if valid:
            return ValidationResult(self.name, True, None, "CyVer: valid syntax", details)
        return self._failed(ErrorType.SYNTAX_ERROR, metadata, details, "invalid syntax")


class CyVerSchemaStep(_CyVerStep):
    """CyVer's SchemaValidator: score 1 or SCHEMA_ERROR (unknown label/type, wrong direction, unknown path)."""

    name = "schema"
    fallback = SchemaStep()

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:
        score, metadata, details = self._called(self.cyver.schema.validate, query, "cyver_score", ctx)
        if score is not None and score >= 1:
            return ValidationResult(self.name, True, None, "CyVer: schema score 1", details)
        default = f"the labels, relationship types or paths do not match the graph (CyVer schema score {score:.2f})"
        return self._failed(
            ErrorType.SCHEMA_ERROR, metadata, details, default, suggestions=_name_suggestions(metadata, ctx)
        )


class CyVerPropertiesStep(_CyVerStep):
    """CyVer's PropertiesValidator: score 1 (or no property accessed) or PROPERTIES_ERROR."""

    name = "properties"
    fallback = PropertiesStep()

    def _check(self, query: str, ctx: ValidationContext) -> ValidationResult:
        score, metadata, details = self._called(self.cyver.properties.validate, query, "cyver_score", ctx)
        if score is None or score >= 1:
            what = "no property accessed" if score is None else "properties score 1"
            return ValidationResult(self.name, True, None, f"CyVer: {what}", details)
        default = f"some properties do not exist on their labels (CyVer properties score {score:.2f})"
        return self._failed(
            ErrorType.PROPERTIES_ERROR,
            metadata,
            details,
            default,
            unknown_properties=_unknown_properties(metadata, ctx),
        )


def cyver_steps(store: GraphStore, timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[Validator, Validator, Validator]:
    """The chain's syntax, schema and properties steps for a Neo4j store, backed by CyVer."""
    cyver = CyVerSession(store, timeout_s)
    return CyVerSyntaxStep(cyver), CyVerSchemaStep(cyver), CyVerPropertiesStep(cyver)


# --- metadata -> messages and details ------------------------------------------------------------


def _codes(metadata: list[dict[str, Any]]) -> list[str]:
    return sorted({str(m.get("code", "")) for m in metadata or [] if m.get("code")})


def _message(metadata: list[dict[str, Any]], default: str) -> str:
    """CyVer's findings on one line, in a stable order; the server's long 'unknown name' notices shortened."""
    seen: list[str] = []
    for entry in sorted(metadata or [], key=lambda m: (str(m.get("code", "")), str(m.get("description", "")))):
        text = " ".join(str(entry.get("description", "")).split()).rstrip(".")
        missing = _MISSING_NAME.search(text)
        if missing:
            text = _SHORT[missing.group(1)].format(missing.group(2).strip())
        if text and text not in seen:
            seen.append(text)
    return "; ".join(seen) if seen else default


def _add_labels_used(details: dict[str, Any], query: str, ctx: ValidationContext) -> None:
    shape = shape_of(query, ctx)
    if shape is not None:
        labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
        details["labels_used"] = [labels.canonical(n) for n in shape.labels if n in labels]


def _name_suggestions(metadata: list[dict[str, Any]], ctx: ValidationContext) -> dict[str, list[str]]:
    """Closest valid names for the unknown labels and relationship types CyVer reports."""
    labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
    types = NameSet(ctx.schema.rel_types, ctx.names_case_sensitive)
    suggestions: dict[str, list[str]] = {}
    for entry in metadata or []:
        missing = _MISSING_NAME.search(" ".join(str(entry.get("description", "")).split()))
        if not missing:
            continue
        kind, name = missing.group(1), missing.group(2).strip()
        if kind == "label name":
            suggestions[name] = labels.closest(name)
        elif kind == "relationship type":
            suggestions[name] = types.closest(name)
    return suggestions


def _unknown_properties(metadata: list[dict[str, Any]], ctx: ValidationContext) -> list[dict[str, Any]]:
    """`unknown_properties` entries (the feedback builder's format) from CyVer's per-label reports."""
    entries = []
    for entry in metadata or []:
        if entry.get("code") != "InvalidPropertyAccessByLabelWarning":
            continue
        found = _LABEL_LACKS.search(" ".join(str(entry.get("description", "")).split()))
        if not found:
            continue
        owner = found.group(1)
        valid = sorted(ctx.schema.properties_of(owner))
        for prop in (p.strip() for p in found.group(2).split(",")):
            if not prop:
                continue
            elsewhere = sorted(
                label for label in ctx.schema.labels if label != owner and prop in ctx.schema.properties_of(label)
            )
            entries.append(
                {
                    "variable": "",
                    "owners": [owner],
                    "property": prop,
                    "relationship": owner in ctx.schema.rel_props,
                    "closest": NameSet(valid, ctx.names_case_sensitive).closest(prop),
                    "valid": valid,
                    "elsewhere": elsewhere,
                }
            )
    return entries
