"""The embedded LadybugDB store: idempotent loads, read-only queries, introspected schema."""

from __future__ import annotations

import time

import ladybug
import pytest

from t2c_lib.graph.base import GraphNode, GraphPath, GraphRel, QueryError, QueryTimeout, UnsafeQuery
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.schema import PropType, RelPattern, SchemaFormat


def test_counts_match_the_files(tiny_store, tiny_dataset):
    assert (
        tiny_store.counts() == tiny_dataset.expected_counts() == {"ACTED_IN": 2, "FOLLOWS": 1, "Movie": 2, "Person": 2}
    )


@pytest.mark.slow
def test_loading_twice_gives_the_same_graph(tiny_dataset, tmp_path):
    store = LadybugStore(tiny_dataset, root=tmp_path)
    first = (store.counts(), [store.schema().render(f) for f in SchemaFormat])
    second_counts = store.load(tiny_dataset)
    assert second_counts == first[0]
    assert [store.schema().render(f) for f in SchemaFormat] == first[1]
    assert store.query("MATCH (p:Person {name: 'Keanu Reeves'}) RETURN count(p)").rows == [[1]]
    store.close()


def test_schema_is_introspected_with_types_and_patterns(tiny_store):
    schema = tiny_store.schema()
    assert schema.labels == ["Movie", "Person"]
    assert schema.node_props["Person"] == {
        "born": PropType.INTEGER,
        "height": PropType.FLOAT,
        "name": PropType.STRING,
        "nicknames": PropType.LIST_STRING,
    }
    assert "_key" not in schema.node_props["Movie"]
    assert schema.patterns == [RelPattern("Person", "ACTED_IN", "Movie"), RelPattern("Person", "FOLLOWS", "Person")]
    assert schema.rel_props["ACTED_IN"] == {"roles": PropType.LIST_STRING}


def test_schema_formats(tiny_store):
    schema = tiny_store.schema()
    only = schema.render(SchemaFormat.ONLY_PATHS)
    assert only == "Relationship patterns:\n- (:Person)-[:ACTED_IN]->(:Movie)\n- (:Person)-[:FOLLOWS]->(:Person)\n"
    nodes_paths = schema.render("nodes_paths")
    assert nodes_paths.startswith("Node labels and properties:\n- Movie {released: INTEGER, title: STRING}\n")
    assert nodes_paths.endswith(only)
    full = schema.render("full_schema")
    assert (
        "- (:Person {born: INTEGER, height: FLOAT, name: STRING, nicknames: LIST<STRING>})-[:ACTED_IN]->(:Movie {released: INTEGER, title: STRING})"
        in full
    )
    assert schema.text_hash("full_schema") != schema.text_hash("only_paths")


def test_graph_values_are_store_neutral(tiny_store):
    result = tiny_store.query(
        "MATCH (p:Person)-[r:ACTED_IN]->(m:Movie {title: 'The Matrix'}) RETURN p, r ORDER BY p.name"
    )
    assert result.columns == ["p", "r"]
    person, rel = result.rows[0]
    assert person == GraphNode(("Person",), {"name": "Carrie-Anne Moss", "born": 1967})
    assert rel == GraphRel("ACTED_IN", {"roles": ["Trinity"]})
    path = tiny_store.query("MATCH p = (:Person)-[:FOLLOWS]->(:Person) RETURN p").rows[0][0]
    assert isinstance(path, GraphPath) and len(path.nodes) == 2 and path.rels[0].type == "FOLLOWS"


WRITES = (
    "CREATE (:Movie {_key: 'm9', title: 'Injected'})",
    "MATCH (m:Movie) DETACH DELETE m",
    "MATCH (p:Person) SET p.born = 0",
)


def test_a_write_through_the_read_path_changes_nothing(tiny_store):
    """Each wall on its own: the gate, then (gate bypassed) the plan, then (plan bypassed) the read-only database."""
    before = tiny_store.counts()
    for write in WRITES:
        with pytest.raises(UnsafeQuery, match="refused before the database"):
            tiny_store.query(write)
        with pytest.raises(
            QueryError
        ) as lower:  # the query process without the gate: prepare refuses in a read-only database
            tiny_store._worker().call(
                {"op": "run", "text": write, "max_rows": 10, "max_bytes": 1 << 20}, time.perf_counter(), 5.0
            )
        assert lower.value.kind in ("write", "unsafe"), str(lower.value)
    db = ladybug.Database(str(tiny_store.db_path), read_only=True)
    try:
        for write in WRITES:
            with pytest.raises(RuntimeError, match="read.only"):
                ladybug.Connection(db).execute(write)
    finally:
        db.close()
    assert tiny_store.counts() == before
    assert tiny_store.query("MATCH (p:Person) RETURN min(p.born)").rows == [[1964]]


def test_errors_are_classified(tiny_store):
    with pytest.raises(QueryError) as syntax:
        tiny_store.explain("MATCH (n:Person) RETURN n.name LIMT 3")
    assert syntax.value.kind == "syntax"
    with pytest.raises(QueryError) as semantic:
        tiny_store.explain("MATCH (n:Actor) RETURN n")
    assert semantic.value.kind == "semantic"
    with pytest.raises(QueryError, match="one statement"):
        tiny_store.query("MATCH (n:Person) RETURN n.name; MATCH (m:Movie) RETURN m.title")
    tiny_store.explain("MATCH (n:Person) RETURN n.name")  # a valid query compiles


LONG_QUERY = "UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y WITH x, y WHERE (x * y) % 7 = 3 RETURN count(*)"


def test_timeout_stops_a_long_query(tiny_store):
    with pytest.raises(QueryTimeout):
        tiny_store.query(LONG_QUERY, timeout_s=0.3)
    assert tiny_store.query("MATCH (m:Movie) RETURN count(m)").rows == [[2]]  # still usable afterwards


@pytest.mark.slow
def test_same_named_dataset_from_another_folder_does_not_replace_the_store(tmp_path):
    import shutil

    from t2c_lib.datasets import load_dataset
    from tests.helpers import FIXTURES

    shipped, elsewhere = tmp_path / "data" / "tiny", tmp_path / "elsewhere" / "tiny"
    shutil.copytree(FIXTURES / "tiny", shipped)
    shutil.copytree(FIXTURES / "tiny", elsewhere)
    movies = elsewhere / "nodes" / "Movie.csv"
    movies.write_text(movies.read_text().replace("The Matrix", "Not The Matrix"))
    original, other = load_dataset(shipped), load_dataset(elsewhere)
    assert original.name == other.name and original.hash != other.hash
    first = LadybugStore(original, root=tmp_path / "stores")
    first.close()
    second = LadybugStore(other, root=tmp_path / "stores")
    assert second.query("MATCH (m:Movie) WHERE m.title STARTS WITH 'Not' RETURN count(m)").rows == [[1]]
    second.close()
    assert first.is_loaded(), "loading the other folder's dataset removed the first store"
    again = LadybugStore(original, root=tmp_path / "stores", auto_load=False)
    assert again.query("MATCH (m:Movie {title: 'The Matrix'}) RETURN count(m)").rows == [[1]]
    again.close()
