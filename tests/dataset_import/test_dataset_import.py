"""Issue 50, item 3: `t2c dataset import` builds a dataset from a Cypher script, a CSV folder and (marker `neo4j`) a
running Neo4j database; `t2c dataset check` reports the loader's checks, the schema and the gold screen; hostile
sources are refused in one line and leave nothing behind."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from t2c_lib.cli import main
from t2c_lib.dataset_import.cypher_script import parse_script
from t2c_lib.dataset_import.graph import ImportCaps, SourceError
from t2c_lib.dataset_import.neo4j_source import read_neo4j
from t2c_lib.dataset_import.pairs import read_pairs
from t2c_lib.dataset_import.writer import write_dataset
from t2c_lib.datasets import load_dataset
from tests.helpers import FIXTURES, ROOT
from tests.helpers.neo4j import open_neo4j

MOVIES_SOURCE = ROOT / "data" / "movies" / "source"


@pytest.fixture(scope="module")
def keywords_store(tmp_path_factory):
    from t2c_lib.graph.ladybug import LadybugStore

    store = LadybugStore(load_dataset(FIXTURES / "keywords"), root=tmp_path_factory.mktemp("ladybug-keywords"))
    yield store
    store.close()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """`t2c dataset check` builds its stores under the cache: a private one, not the user's .cache."""
    from t2c_lib import config

    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")


def _import(*args: str):
    return CliRunner().invoke(main, ["dataset", "import", *args], catch_exceptions=False)


def test_the_movies_script_becomes_the_movies_graph(tmp_path):
    out = tmp_path / "movies_copy"
    result = _import(
        "--name", "movies_copy", "--out", str(out),
        "--cypher", str(MOVIES_SOURCE / "movies.cypher"), "--pairs", str(MOVIES_SOURCE / "questions.csv"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "171 nodes (Movie 38, Person 133), 253 relationships, 474 question/Cypher pairs" in result.output
    copy, movies = load_dataset(out), load_dataset("movies")
    assert copy.expected_counts() == movies.expected_counts()
    assert copy.schema_spec.nodes == movies.schema_spec.nodes
    assert {t: s.properties for t, s in copy.schema_spec.rels.items()} == {
        t: s.properties for t, s in movies.schema_spec.rels.items()
    }
    theirs = {(n.key, tuple(sorted(n.properties.items()))) for n in movies.nodes["Person"]}
    assert {(n.key, tuple(sorted(n.properties.items()))) for n in copy.nodes["Person"]} == theirs
    assert [q.cypher for q in copy.questions] == [q.cypher for q in movies.questions]


def test_a_csv_folder_with_a_mapping_and_jsonl_pairs_becomes_a_dataset_the_check_keeps_whole(tmp_path):
    out = tmp_path / "tube"
    folder = FIXTURES / "import_csv"
    result = _import(
        "--name", "tube", "--out", str(out), "--csv-mapping", str(folder / "mapping.yaml"),
        "--pairs", str(folder / "pairs.jsonl"), "--question-column", "q", "--cypher-column", "gold",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    tube = load_dataset(out)
    assert tube.expected_counts() == {"Line": 2, "Station": 3, "ON": 4}
    stations = {n.key: n.properties for n in tube.nodes["Station"]}
    assert stations["WAT"] == {"name": "Waterloo", "opened": "1848-07-11", "staffed": False}  # the cell is trimmed
    assert stations["EUS"]["staffed"] is True
    check = CliRunner().invoke(main, ["dataset", "check", str(out)], catch_exceptions=False)
    assert check.exit_code == 0, check.output
    assert "the loader's checks passed" in check.output
    assert "- (:Station)-[:ON]->(:Line)" in check.output  # the keyword type as a Neo4j user writes it
    assert "gold pairs: kept 4 of 4, none dropped" in check.output


def test_the_check_says_what_each_dropped_pair_needs(tmp_path):
    folder = FIXTURES / "import_csv"
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(
        "question,cypher\nWho?,MATCH (s:Station {name: 'Nowhere'}) RETURN s.name\n"
        "Which?,MATCH (s:Station) RETURN s.nam\n",
        encoding="utf-8",
    )
    out = tmp_path / "tube"
    assert (
        _import(
            "--name", "tube", "--out", str(out), "--csv-mapping", str(folder / "mapping.yaml"), "--pairs", str(pairs)
        ).exit_code
        == 0
    )
    check = CliRunner().invoke(main, ["dataset", "check", str(out)], catch_exceptions=False)
    assert "gold pairs: kept 0 of 2, dropped 2" in check.output
    assert "- tube-001 (empty): needs a question whose answer is in this graph" in check.output
    assert "- tube-002 (error:semantic): needs only the names, functions and variables the store knows" in check.output
    assert "WARNING: the gold screen dropped 2 of 2" in check.output


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        ("MATCH (n) DETACH DELETE n", "line 1: only CREATE and MERGE statements are read"),
        ("CREATE (a:Person {name: 'x'});\nCREATE (b:`Bad Label`)", "label 'Bad Label' is not a name"),
        ("CREATE (a:Person {id: 1})", "property 'id' is reserved"),
        ("CREATE (a:Person:Actor)", "a node needs exactly one label"),
        ("CREATE (a:P {x: 1}), (b:P {x: 'one'})", "P.x holds values of several types (INTEGER, STRING)"),
        ("CREATE (a:P {x: toUpper('a')})", "a property value must be a literal"),
        ("CREATE (a:P)-[:R]-(b:P)", "expected `>`"),
        ("CREATE (a:P {s: 'unterminated})", "line 1: unterminated string literal"),
        ("MERGE (a:P)-[:R]->(b:P)", "MERGE of a relationship needs both ends bound first"),
    ],
)
def test_a_script_outside_the_subset_is_refused_in_one_line(script, problem):
    with pytest.raises(SourceError) as caught:
        graph = parse_script(script)
        for label in graph.nodes:
            graph.node_types(label)
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_merge_names_an_existing_node_and_a_cap_refuses_a_large_script():
    graph = parse_script(
        "MERGE (a:P {n: 1}) MERGE (b:P {n: 2}) MERGE (a)-[:R]->(b);\nMERGE (a:P {n: 1}) MERGE (b:P {n: 2}) MERGE (a)-[:R]->(b)"
    )
    assert graph.node_count == 2 and graph.rel_count == 1
    with pytest.raises(SourceError, match=r"more than 2 nodes.*Neo4j"):
        parse_script("CREATE (:P), (:P), (:P)", ImportCaps(nodes=2))


def test_nothing_is_overwritten_or_left_half_written(tmp_path):
    graph = parse_script("CREATE (:P {n: 1})")
    target = tmp_path / "taken"
    target.mkdir()
    with pytest.raises(SourceError, match="exists; nothing was overwritten"):
        write_dataset(graph, [("q", "MATCH (p:P) RETURN p.n")], target, "taken", "a test")
    with pytest.raises(SourceError, match="no question/Cypher pairs"):
        write_dataset(graph, [], tmp_path / "empty", "empty", "a test")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    for bad in ("../up", "a b"):
        result = _import("--name", bad, "--cypher", str(MOVIES_SOURCE / "movies.cypher"), "--pairs", "x.csv")
        assert result.exit_code != 0 and "is not a name" in result.output and "Traceback" not in result.output


def test_a_jsonl_pair_whose_question_holds_a_line_separator_reads_whole(tmp_path):
    """JSON keeps U+2028 raw inside a string; a reader that splits on it would call a valid file malformed."""
    jsonl = tmp_path / "pairs.jsonl"
    row = {"question": "Which movies\u2028came out in 1999?", "query": "MATCH (m:Movie) RETURN m.title"}
    jsonl.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    assert [q for q, _ in read_pairs(jsonl, cypher="query")] == [row["question"]]


def test_pairs_files_are_read_strictly(tmp_path):
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text(json.dumps({"question": "q", "query": "MATCH (n) RETURN n"}) + "\n[1]\n", encoding="utf-8")
    with pytest.raises(SourceError, match="line 2: not a JSON object"):
        read_pairs(jsonl, cypher="query")
    jsonl.write_text("\n" + "[" * 100_000 + "\n", encoding="utf-8")  # nests past the decoder's recursion limit
    with pytest.raises(SourceError, match="line 2: not a JSON object"):
        read_pairs(jsonl, cypher="query")
    csv_file = tmp_path / "pairs.csv"
    csv_file.write_text("question,cypher\nq,\n", encoding="utf-8")
    with pytest.raises(SourceError, match="row 1: an empty query"):
        read_pairs(csv_file)
    with pytest.raises(SourceError, match="no column 'gold'"):
        read_pairs(csv_file, cypher="gold")


@pytest.mark.neo4j
def test_a_running_neo4j_database_becomes_a_dataset(tmp_path):
    keywords = load_dataset(FIXTURES / "keywords")
    store = open_neo4j(keywords)
    try:
        if not store.is_loaded():
            store.load(keywords)
        graph = read_neo4j(store)
    finally:
        store.close()
    pairs = [(q.question, q.cypher) for q in keywords.questions]
    copy = load_dataset(write_dataset(graph, pairs, tmp_path / "kw", "kw", "a Neo4j database"))
    assert copy.expected_counts() == keywords.expected_counts()
    assert copy.schema_spec.nodes == keywords.schema_spec.nodes
    with pytest.raises(SourceError, match="more than 2 nodes"):
        store = open_neo4j(keywords)
        try:
            read_neo4j(store, ImportCaps(nodes=2))
        finally:
            store.close()


def test_a_bare_yaml_boolean_as_a_type_name_is_refused_not_loaded_as_true(tmp_path):
    import shutil

    from t2c_lib.datasets import DatasetError

    copy = tmp_path / "keywords"
    shutil.copytree(FIXTURES / "keywords", copy)
    schema = copy / "schema.yaml"
    schema.write_text(schema.read_text(encoding="utf-8").replace("  IN:", "  ON:"), encoding="utf-8")
    (copy / "rels" / "IN.csv").rename(copy / "rels" / "ON.csv")
    with pytest.raises(DatasetError, match="relationship type True is not text: YAML reads a bare ON"):
        load_dataset(copy)


def _keywords_copy(tmp_path):
    import shutil

    copy = tmp_path / "keywords"
    shutil.copytree(FIXTURES / "keywords", copy)
    return copy


def test_a_failing_few_shot_example_is_refused_and_a_keyword_label_example_is_not(tmp_path, keywords_store):
    from t2c_lib.errors import InvalidValue
    from t2c_lib.graph.ladybug import LadybugStore
    from t2c_lib.study.screen import failing_examples, refuse_failing_examples

    assert failing_examples(load_dataset(FIXTURES / "keywords"), keywords_store) == []  # `(o:Order)` runs
    copy = _keywords_copy(tmp_path)
    examples = copy / "examples.yaml"
    examples.write_text(examples.read_text(encoding="utf-8").replace("o.number", "o.numbr"), encoding="utf-8")
    broken = load_dataset(copy)
    store = LadybugStore(broken, root=tmp_path / "store")
    try:
        with pytest.raises(
            InvalidValue, match=r"1 of 1 few-shot examples fail on ladybug; the first: example 1 .*numbr"
        ):
            refuse_failing_examples(broken, store)
    finally:
        store.close()
    check = CliRunner().invoke(main, ["dataset", "check", str(copy)], catch_exceptions=False)
    assert "examples.yaml: 0 of 1 few-shot examples pass the chain" in check.output


@pytest.mark.parametrize(
    ("typo", "hint"),
    [
        ("language: en", "unknown key 'languag' (valid: name, language"),
        ("ground_truth:", "did you mean 'ground_truth'?"),
    ],
)
def test_a_dataset_yaml_typo_is_refused_with_a_suggestion(tmp_path, typo, hint):
    from t2c_lib.datasets import DatasetError

    copy = _keywords_copy(tmp_path)
    settings = copy / "dataset.yaml"
    wrong = typo.replace("language", "languag").replace("ground_truth", "ground_truht")
    settings.write_text(settings.read_text(encoding="utf-8").replace(typo, wrong), encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(hint)):
        load_dataset(copy)
