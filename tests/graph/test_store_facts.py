"""Stores declare what their callers decide by (`graph/facts.py`); validation and the command line never compare a
store's name."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from t2c_lib.cypher.lexer import Dialect
from t2c_lib.graph import DEFAULT_STORE, STORES, store_facts
from t2c_lib.graph.facts import LADYBUG_FACTS, NEO4J_FACTS, Checks, StoreFacts
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.graph.neo4j import Neo4jStore
from tests.helpers import ROOT

PACKAGE = ROOT / "t2c_lib"
STORE_CLASSES = {"ladybug": LadybugStore, "neo4j": Neo4jStore}
STORE_NAMES = frozenset(STORES.names()) | {"kuzu"}  # kuzu: the embedded store's former name


@pytest.mark.parametrize("name", STORES.names())
def test_each_registered_store_class_declares_the_facts_the_registry_holds(name):
    cls = STORE_CLASSES[name]
    assert cls.name == name
    assert isinstance(cls.facts, StoreFacts) and cls.facts is store_facts(name)


@pytest.mark.parametrize("name", STORES.names())
def test_the_declared_opener_options_are_the_constructors_keywords(name):
    params = set(inspect.signature(STORE_CLASSES[name].__init__).parameters) - {"self", "dataset"}
    assert store_facts(name).opener_options == params


def test_the_facts_of_each_store():
    assert (LADYBUG_FACTS.dialect, NEO4J_FACTS.dialect) == (Dialect.LADYBUG, Dialect.NEO4J)
    assert not LADYBUG_FACTS.case_sensitive_names and NEO4J_FACTS.case_sensitive_names
    assert LADYBUG_FACTS.normalises_dialect and not NEO4J_FACTS.normalises_dialect
    assert (LADYBUG_FACTS.checks, NEO4J_FACTS.checks) == (Checks.BUILTIN, Checks.CYVER)
    assert LADYBUG_FACTS.embedded and not NEO4J_FACTS.embedded
    assert DEFAULT_STORE in STORES


def _store_name_lines(path: Path) -> list[int]:
    """The lines of `path` holding a comparison or a name set with a store's name as a string literal."""
    lines = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        is_set = isinstance(node, ast.Set) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset")
        )
        if not (is_set or isinstance(node, ast.Compare)):
            continue
        literals = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        if literals & STORE_NAMES:
            lines.add(node.lineno)
    return sorted(lines)


def test_validation_and_the_command_line_compare_no_store_name():
    files = sorted((PACKAGE / "validation").rglob("*.py")) + sorted((PACKAGE / "cli").rglob("*.py"))
    assert files
    assert [f"{path.relative_to(PACKAGE)}:{line}" for path in files for line in _store_name_lines(path)] == []


def test_the_scan_finds_a_store_name_compare(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('x = store == "ladybug"\ny = name in {"neo4j"}\nz = frozenset(("kuzu",))\nw = a == "b"\n')
    assert _store_name_lines(probe) == [1, 2, 3]
