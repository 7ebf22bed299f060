"""Shared fixtures: datasets and embedded stores built in temporary directories, a scored run, Neo4j.

Helpers that are not fixtures live in `tests/helpers` (`from tests.helpers import ...`); the
live-Neo4j fixtures are registered from `tests/helpers/neo4j.py` below.
"""

from __future__ import annotations

import pytest

from tests.helpers import FIXTURES, write_scored_run

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
    """A scored run of the tiny dataset: single-pass and feedback cells, two schema formats (`write_scored_run`)."""
    return write_scored_run(tmp_path / "run", tiny_dataset, tiny_store)
