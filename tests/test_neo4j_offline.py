"""The Neo4j store without a server: an unreachable server is one clear line naming the URI."""

from __future__ import annotations

import socket

import pytest

from t2c_lib.graph.base import StoreUnavailable
from t2c_lib.graph.neo4j import Neo4jStore, _unquote_rel_type, _map_types
from t2c_lib.schema import PropType


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_is_one_clear_line(monkeypatch):
    uri = f"bolt://127.0.0.1:{_free_port()}"
    monkeypatch.setenv("NEO4J_URI", uri)
    with pytest.raises(StoreUnavailable) as info:
        Neo4jStore()
    message = str(info.value)
    assert uri in message and "make neo4j" in message
    assert "\n" not in message


def test_invalid_uri_is_named():
    with pytest.raises(StoreUnavailable, match="invalid NEO4J_URI 'htp://x'"):
        Neo4jStore(uri="htp://x")


def test_type_names_map_onto_prop_types():
    assert _map_types(["String"], "L.p") is PropType.STRING
    assert _map_types(["Long"], "L.p") is PropType.INTEGER
    assert _map_types(["Long", "Double"], "L.p") is PropType.FLOAT
    assert _map_types(["StringArray"], "L.p") is PropType.LIST_STRING
    assert _map_types(["DoubleArray"], "L.p") is PropType.LIST_FLOAT
    with pytest.raises(StoreUnavailable, match="Point"):
        _map_types(["Point"], "L.p")
    assert _unquote_rel_type(":`PURSUED_IN`") == "PURSUED_IN"
    assert _unquote_rel_type(":`A``B`") == "A`B"
