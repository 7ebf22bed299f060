"""Shared fixtures: datasets and embedded stores built in temporary directories."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


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
