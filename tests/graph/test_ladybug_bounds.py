"""Issue 50, item 6: the embedded store refuses a graph past its bound before building, pointing to Neo4j."""

from __future__ import annotations

import pytest

from t2c_lib.datasets import load_dataset
from t2c_lib.errors import StoreUnavailable
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.graph.ladybug_bounds import MAX_ELEMENTS, max_elements
from tests.helpers import FIXTURES


def test_a_graph_past_the_bound_is_refused_with_the_way_to_neo4j(tmp_path, monkeypatch):
    keywords = load_dataset(FIXTURES / "keywords")  # 7 nodes, 6 relationships
    monkeypatch.setenv("T2C_EMBEDDED_MAX_ELEMENTS", "12")
    with pytest.raises(StoreUnavailable) as caught:
        LadybugStore(keywords, root=tmp_path)
    message = str(caught.value)
    assert "has 7 nodes and 6 relationships, more than the 12 the embedded store builds" in message
    assert "store: neo4j" in message and "\n" not in message
    assert list(tmp_path.iterdir()) == []  # refused before anything was built
    monkeypatch.setenv("T2C_EMBEDDED_MAX_ELEMENTS", "13")
    store = LadybugStore(keywords, root=tmp_path)
    assert store.counts()["Order"] == 3
    store.close()


@pytest.mark.parametrize("text", ["", "0", "-5", "many", "1e9"])
def test_an_unusable_bound_setting_keeps_the_default(monkeypatch, text):
    monkeypatch.setenv("T2C_EMBEDDED_MAX_ELEMENTS", text)
    assert max_elements() == MAX_ELEMENTS
