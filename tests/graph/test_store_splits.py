"""A dataset's dev and test splits share one embedded store (issue 52, item 5).

`make test-fast` failed once, in random order, with `StoreUnavailable: the movies graph is not loaded` in
`test_movies_dev_pairs_...`, and passed alone: the store was keyed by the split's dataset hash, so loading the
dev split's store removed the test split's database as an "older version" of the same folder while a store of
it was open (and the other way round); a gold screen already cached hid it on later runs. Both splits ask
questions of the same graph, so both now open the same database.
"""

from __future__ import annotations

import shutil

import pytest

from t2c_lib.datasets import load_dataset
from t2c_lib.graph import ladybug
from t2c_lib.graph.ladybug import LadybugStore, StoreUnavailable
from tests.helpers import ROOT

QUERY = "MATCH (m:MK) RETURN count(m) AS n"


@pytest.fixture()
def splits(tmp_path):
    folder = tmp_path / "kurikulum"
    shutil.copytree(ROOT / "data" / "kurikulum", folder)
    return load_dataset(folder), load_dataset(folder, split="dev")


def open_both(splits, root):
    test, dev = splits
    first = LadybugStore(test, root=root)
    first.query(QUERY)  # open and used, as a test holding a store fixture
    first.close()
    second = LadybugStore(dev, root=root)  # another test (or worker) opens the dev split's store
    return first, second


def test_opening_the_dev_split_keeps_the_test_splits_database(splits, tmp_path):
    test, dev = splits
    assert test.hash != dev.hash  # other questions: the split's hash differs
    first, second = open_both(splits, tmp_path / "stores")
    try:
        assert first.version_dir == second.version_dir
        assert first.query(QUERY).rows == second.query(QUERY).rows
    finally:
        first.close()
        second.close()


def test_keyed_by_the_splits_hash_the_dev_store_removed_the_test_database(splits, tmp_path, monkeypatch):
    """The fault itself, with the old key: the first store's database is gone once the dev split is loaded."""
    monkeypatch.setattr(ladybug, "graph_key", lambda dataset: dataset.hash)
    first, second = open_both(splits, tmp_path / "stores")
    try:
        with pytest.raises(StoreUnavailable, match="graph is not loaded"):
            first.query(QUERY)
    finally:
        first.close()
        second.close()
