"""The `Validator` protocol and the context a chain of validators shares.

A chain is an ordered tuple of validators; it stops at the first failure. Each step
returns a `ValidationResult` with an `ErrorType` that selects the feedback template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from t2c_lib.graph.base import DEFAULT_TIMEOUT_S, GraphStore, QueryResult
from t2c_lib.records import ErrorType, ValidationResult
from t2c_lib.schema import GraphSchema

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.graph.value_index import ValueIndex
    from t2c_lib.validation.patterns import QueryShape


@dataclass
class ValidationContext:
    """What validators may use: the store, its introspected schema, limits, shared results."""

    store: GraphStore
    schema: GraphSchema
    timeout_s: float = DEFAULT_TIMEOUT_S
    result: QueryResult | None = field(default=None)  # set by the execution step for the next steps
    case_sensitive_names: bool | None = None  # None: as the store declares (`store.facts`)
    values: ValueIndex | None = field(default=None)  # stored strings, read lazily (kept across queries)
    # Per-query scratch, cleared by `reset` (run_chain does it before every query):
    shape: QueryShape | None = field(default=None)  # what the query uses (patterns.extract), computed once
    deferred: tuple[ErrorType, str] | None = field(default=None)  # a binder error left for schema/properties
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def names_case_sensitive(self) -> bool:
        """Whether `MK` and `mk` are different names in this store (Neo4j: yes; LadybugDB: no)."""
        if self.case_sensitive_names is not None:
            return self.case_sensitive_names
        return self.store.facts.case_sensitive_names

    def reset(self) -> None:
        """Forget everything learned about the previous query."""
        self.result = None
        self.shape = None
        self.deferred = None
        self.notes = {}


@runtime_checkable
class Validator(Protocol):
    """One step of the chain."""

    name: str

    def validate(self, query: str, ctx: ValidationContext) -> ValidationResult:
        """Judge `query`; never raise for a bad query, return a failing result instead."""
        ...
