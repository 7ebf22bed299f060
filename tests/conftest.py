"""Shared fixtures: datasets and embedded stores built in temporary directories, a scored run, Neo4j.

Helpers that are not fixtures live in `tests/helpers` (`from tests.helpers import ...`); the
live-Neo4j fixtures are registered from `tests/helpers/neo4j.py` below.
"""

from __future__ import annotations

import pytest

from t2c_lib.records import ErrorType
from t2c_lib.study.evaluation import evaluate_cell
from t2c_lib.study.layout import Cell
from tests.helpers import FIXTURES, WRONG, recorded, write_cell

pytest_plugins = ["tests.helpers.neo4j"]


@pytest.fixture(scope="session")
def tiny_dataset():
    from t2c_lib.datasets import load_dataset

    return load_dataset(FIXTURES / "tiny")


@pytest.fixture(scope="session")
def tiny_store(tiny_dataset, tmp_path_factory):
    from t2c_lib.graph.ladybug import LadybugStore

    store = LadybugStore(tiny_dataset, root=tmp_path_factory.mktemp("ladybug-tiny"))
    yield store
    store.close()


@pytest.fixture(scope="session")
def kurikulum():
    from t2c_lib.datasets import load_dataset

    return load_dataset("kurikulum")


@pytest.fixture(scope="session")
def kurikulum_store(kurikulum, tmp_path_factory):
    """The curriculum graph in a fresh embedded store (a private copy, not the user's .cache)."""
    from t2c_lib.graph.ladybug import LadybugStore

    store = LadybugStore(kurikulum, root=tmp_path_factory.mktemp("ladybug-kurikulum"))
    yield store
    store.close()


@pytest.fixture()
def scored_run(tiny_dataset, tiny_store, tmp_path):
    questions = tiny_dataset.questions
    run_dir = tmp_path / "run"
    for schema_format in ("full_schema", "only_paths"):
        # single-pass: one syntax error, then the gold query right, then a wrong-but-valid query
        def single(item):
            if item.id == "tiny-001":
                return [recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR)]
            if item.id == "tiny-002":
                return [recorded(item.id, 1, item.cypher, None)]
            return [recorded(item.id, 1, WRONG, None)]

        # agentic: recovers question 1 at iteration 2; the rest as single-pass
        def agentic(item):
            if item.id == "tiny-001":
                return [
                    recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR),
                    recorded(item.id, 2, item.cypher, None),
                ]
            return single(item)

        for mode, plan in (("single-pass", single), ("agentic", agentic)):
            cell = Cell(mode, "Zero-Shot", schema_format)
            write_cell(run_dir, cell, questions, plan)
            evaluate_cell(
                cell,
                run_dir,
                questions,
                tiny_dataset,
                tiny_store,
                "kg-axel",
                1 if mode == "single-pass" else 3,
                10.0,
                scoring="kg-axel",
            )
    return run_dir
