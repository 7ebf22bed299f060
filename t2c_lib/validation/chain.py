"""The ordered validator chain: guard -> syntax -> schema -> properties -> execution -> non_empty.

Like sqlglot's optimizer rules: a plain tuple of steps behind one protocol, run in order,
stopping at the first failure. For a store whose facts name CyVer's checks (Neo4j) the syntax, schema and
properties steps come from CyVer (`t2c_lib.validation.cyver.cyver_steps`) when that module is present.
"""

from __future__ import annotations

import importlib
import logging

from t2c_lib.graph.base import GraphStore
from t2c_lib.graph.facts import Checks
from t2c_lib.records import ValidationResult
from t2c_lib.validation.base import ValidationContext, Validator
from t2c_lib.validation.guard import ReadOnlyGuard
from t2c_lib.validation.steps import ExecutionStep, NonEmptyStep, PropertiesStep, SchemaStep, SyntaxStep

log = logging.getLogger(__name__)

STEP_NAMES = ("guard", "syntax", "schema", "properties", "execution", "non_empty")


def default_chain() -> tuple[Validator, ...]:
    """This package's own six steps (any store)."""
    return (ReadOnlyGuard(), SyntaxStep(), SchemaStep(), PropertiesStep(), ExecutionStep(), NonEmptyStep())


def build_chain(store: GraphStore) -> tuple[Validator, ...]:
    """The chain for `store`: CyVer's syntax/schema/properties where it declares them and CyVer is available, else ours."""
    guard, syntax, schema, properties, execution, non_empty = default_chain()
    middle: tuple[Validator, ...] = (syntax, schema, properties)
    if store.facts.checks is Checks.CYVER:
        try:
            cyver = importlib.import_module("t2c_lib.validation.cyver")
        except ImportError as exc:  # the CyVer adapter is optional; fall back to our own checks
            log.info("CyVer adapter unavailable (%s); using the built-in syntax/schema/properties steps", exc)
        else:
            middle = tuple(cyver.cyver_steps(store))
    return (guard, *middle, execution, non_empty)


def chain_names(chain: tuple[Validator, ...]) -> list[str]:
    """Step names in order (recorded in run signatures)."""
    return [step.name for step in chain]


def run_chain(query: str, chain: tuple[Validator, ...], ctx: ValidationContext) -> list[ValidationResult]:
    """Run the steps in order on one query; stop after the first failing step."""
    ctx.reset()
    results: list[ValidationResult] = []
    for step in chain:
        result = step.validate(query, ctx)
        results.append(result)
        if not result.ok:
            break
    return results


def make_context(store: GraphStore, timeout_s: float | None = None) -> ValidationContext:
    """A context for `store` with its introspected schema."""
    ctx = ValidationContext(store=store, schema=store.schema())
    if timeout_s is not None:
        ctx.timeout_s = timeout_s
    return ctx
