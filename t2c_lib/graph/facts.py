"""What callers decide by a store, declared by the store: `StoreFacts`.

Each store class carries its facts as the class attribute `facts` (the `GraphStore` protocol
names it), and the store registry (`t2c_lib.graph.STORES`) holds the same object beside the
store's opener, so a command that has only a store's name reads them before opening it (and
without importing its driver). Validators, the chain, the guard and the command line read these
facts; none of them compares a store's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from t2c_lib.cypher.lexer import Dialect


class Checks(str, Enum):
    """Which syntax/schema/properties steps the validator chain runs for a store."""

    BUILTIN = "builtin"  # this package's own steps (`validation/steps.py`)
    CYVER = "cyver"  # CyVer's, when its adapter imports (`validation/cyver.py`); else the built-in ones


@dataclass(frozen=True)
class StoreFacts:
    """One store's declaration of what its callers need to know about it."""

    dialect: Dialect
    """Whose lexer and grammar the guard reads a query by, and which dialect hints feedback gives."""
    case_sensitive_names: bool
    """Whether `MK` and `mk` name different labels, types and property keys (LadybugDB's binder: no)."""
    normalises_dialect: bool
    """Whether the store rewrites Neo4j-only forms before planning (`t2c_lib.cypher.dialect.normalise`)."""
    checks: Checks
    """Which syntax/schema/properties steps the validator chain runs."""
    embedded: bool
    """Whether the database is a local copy built from the dataset (the row-order probe's kind of store)."""
    opener_options: frozenset[str]
    """Keyword options the store's constructor takes beyond the dataset (`auto_load`, ...)."""


LADYBUG_FACTS = StoreFacts(
    dialect=Dialect.LADYBUG,
    case_sensitive_names=False,
    normalises_dialect=True,
    checks=Checks.BUILTIN,
    embedded=True,
    opener_options=frozenset({"root", "auto_load", "variant", "max_rows"}),
)
"""The embedded LadybugDB store's facts (`graph/ladybug.py`)."""

NEO4J_FACTS = StoreFacts(
    dialect=Dialect.NEO4J,
    case_sensitive_names=True,
    normalises_dialect=False,
    checks=Checks.CYVER,
    embedded=False,
    opener_options=frozenset(
        {"uri", "user", "password", "database", "auto_load", "replace_foreign", "max_rows", "max_result_bytes"}
    ),
)
"""The Neo4j server store's facts (`graph/neo4j.py`)."""


__all__ = ["LADYBUG_FACTS", "NEO4J_FACTS", "Checks", "StoreFacts"]
