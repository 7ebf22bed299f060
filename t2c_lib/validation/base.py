"""The `Validator` protocol and the context a chain of validators shares.

A chain is an ordered tuple of validators; it stops at the first failure. Each step
returns a `ValidationResult` with an `ErrorType` that selects the feedback template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from t2c_lib.agent import ValidationResult
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S, GraphStore, QueryResult
from t2c_lib.graph.schema import GraphSchema


@dataclass
class ValidationContext:
    """What validators may use: the store, its introspected schema, limits, shared results."""

    store: GraphStore
    schema: GraphSchema
    timeout_s: float = DEFAULT_TIMEOUT_S
    result: QueryResult | None = field(default=None)  # set by the execution step for the next steps


@runtime_checkable
class Validator(Protocol):
    """One step of the chain."""

    name: str

    def validate(self, query: str, ctx: ValidationContext) -> ValidationResult:
        """Judge `query`; never raise for a bad query, return a failing result instead."""
        ...
