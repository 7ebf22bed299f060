"""Fixtures for tests on a live Neo4j server (marker `neo4j`); imported by the test_neo4j_* modules.

The server is the local one `make neo4j` starts (bolt://127.0.0.1:$NEO4J_PORT), or the one
`T2C_NEO4J_TEST_URI` names; never NEO4J_URI, because the tests replace the database's
contents and NEO4J_URI may name a database that matters. Without a server the
tests skip, loudly; with `T2C_REQUIRE_NEO4J=1` (set by `tools/neo4j/run_tests.sh` once it
has started a server, and by CI) they fail instead, so a CI run cannot pass without them.
The local server runs with authentication on; the store reads the password `make neo4j`
generated into the project's cache (or `NEO4J_PASSWORD`), as it does for users.
"""

from __future__ import annotations

import os

import pytest

REQUIRE_ENV = "T2C_REQUIRE_NEO4J"


def neo4j_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") == "1"


def test_uri() -> str:
    """The server the tests may overwrite."""
    return os.environ.get("T2C_NEO4J_TEST_URI") or f"bolt://127.0.0.1:{os.environ.get('NEO4J_PORT') or 7687}"


def open_neo4j(dataset, **options):
    """A `Neo4jStore` holding `dataset` (`options` go to Neo4jStore), or skip (fail when required) if no server answers."""
    from t2c_lib.graph.base import StoreUnavailable
    from t2c_lib.graph.neo4j import Neo4jStore

    try:
        return Neo4jStore(dataset, uri=test_uri(), **options)
    except StoreUnavailable as exc:
        if neo4j_required():
            pytest.fail(f"{REQUIRE_ENV}=1 but the Neo4j store is unavailable: {exc}", pytrace=False)
        pytest.skip(f"NO NEO4J SERVER, Neo4j tests skipped: {exc}")


@pytest.fixture(scope="session")
def neo4j_session_store(kurikulum):
    """One connection to the live server for the whole session, opened on the curriculum graph."""
    store = open_neo4j(kurikulum)
    yield store
    store.close()


@pytest.fixture
def neo4j_kurikulum(neo4j_session_store, kurikulum):
    """The curriculum graph in the live Neo4j database, reloaded if a test left another dataset there."""
    store = neo4j_session_store
    if store.dataset is not kurikulum or not store.is_loaded():
        store.load(kurikulum)
    return store


@pytest.fixture
def gate_bypassed(monkeypatch):
    """The Neo4j store without the shared gate in front (`admit` returns the text as given), so the
    walls below it (EXPLAIN plan, READ transaction, client deadline, byte budget) are tested alone."""
    import t2c_lib.graph.neo4j as store_module

    monkeypatch.setattr(store_module, "admit", lambda text, *args, **kwargs: text)
