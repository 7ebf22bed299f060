"""Dataset loading: every malformed input fails early with the file, the row and the problem."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from t2c_lib.datasets import DatasetError, load_dataset
from tests.helpers import FIXTURES


def mutated(tmp_path: Path, relpath: str, transform) -> Path:
    """A copy of the tiny dataset with one file rewritten by `transform(text) -> text`."""
    root = tmp_path / "tiny"
    shutil.copytree(FIXTURES / "tiny", root)
    target = root / relpath
    target.write_text(transform(target.read_text(encoding="utf-8")), encoding="utf-8")
    return root


def test_tiny_dataset_loads_typed_values(tiny_dataset):
    keanu = tiny_dataset.nodes["Person"][0]
    assert keanu.key == "p1"
    assert keanu.properties == {"name": "Keanu Reeves", "born": 1964, "height": 1.86, "nicknames": ["Keanu"]}
    assert "height" not in tiny_dataset.nodes["Person"][1].properties  # empty cell = absent
    assert [q.id for q in tiny_dataset.questions] == ["tiny-001", "tiny-002", "tiny-003"]
    assert tiny_dataset.questions[2].strata == {"level": "hard"}
    assert tiny_dataset.language == "en"


def test_hash_changes_with_any_file(tmp_path, tiny_dataset):
    root = mutated(tmp_path, "nodes/Movie.csv", lambda t: t.replace("1999", "1998"))
    assert load_dataset(root).hash != tiny_dataset.hash


CASES = [
    (
        "nodes/Person.csv",
        lambda t: t.replace("id,name,born", "id,name,year"),
        "nodes/Person.csv",
        None,
        "missing column(s) 'born'",
    ),
    (
        "nodes/Person.csv",
        lambda t: t.replace("1964", "nineteen"),
        "nodes/Person.csv",
        1,
        "column 'born' expects INTEGER",
    ),
    ("nodes/Person.csv", lambda t: t.replace("p2,", "p1,"), "nodes/Person.csv", 2, "duplicate key 'p1'"),
    ("nodes/Person.csv", lambda t: t + "p3,Someone,1970\n", "nodes/Person.csv", 3, "has 3 fields, the header has 5"),
    (
        "rels/ACTED_IN.csv",
        lambda t: t.replace("Person,p2,Movie", "Actor,p2,Movie"),
        "rels/ACTED_IN.csv",
        2,
        "unknown label 'Actor'",
    ),
    (
        "rels/ACTED_IN.csv",
        lambda t: t.replace("Person,p2,Movie,m1", "Person,p9,Movie,m1"),
        "rels/ACTED_IN.csv",
        2,
        "from_id 'p9' is not a Person node",
    ),
    (
        "rels/FOLLOWS.csv",
        lambda t: t.replace("Person,p2,Person,p1", "Person,p2,Movie,m1"),
        "rels/FOLLOWS.csv",
        1,
        "is not declared in schema.yaml",
    ),
    (
        "ground_truth.csv",
        lambda t: t.replace("How many movies are there?", ""),
        "ground_truth.csv",
        2,
        "empty question",
    ),
    (
        "ground_truth.csv",
        lambda t: t.replace(",hard", ",Hard"),
        "ground_truth.csv",
        3,
        "level 'Hard' is not one of: easy, hard",
    ),
    (
        "ground_truth.csv",
        lambda t: t.replace("question,cypher,level", "question,query,level"),
        "ground_truth.csv",
        None,
        "missing column(s) 'cypher'",
    ),
    (
        "schema.yaml",
        lambda t: t.replace("born: INTEGER", "born: NUMBER"),
        "schema.yaml",
        None,
        "unknown property type 'NUMBER'",
    ),
    (
        "schema.yaml",
        lambda t: t.replace("[[Person, Movie]]", "[[Person, Film]]"),
        "schema.yaml",
        None,
        "unknown label 'Film'",
    ),
    (
        "examples.yaml",
        lambda t: t.replace("When was Keanu Reeves born?", "How many movies are there?"),
        "examples.yaml",
        1,
        "also in the ground truth",
    ),
    (
        "dataset.yaml",
        lambda t: t.replace("language: en", "language: fr"),
        "dataset.yaml",
        None,
        "language 'fr' is not one of",
    ),
]


@pytest.mark.parametrize("relpath, transform, file_named, row, problem", CASES, ids=[c[4][:40] for c in CASES])
def test_malformed_input_names_file_row_and_problem(tmp_path, relpath, transform, file_named, row, problem):
    root = mutated(tmp_path, relpath, transform)
    with pytest.raises(DatasetError) as info:
        load_dataset(root)
    message = str(info.value)
    assert file_named in message
    assert problem in message
    if row is not None:
        assert f"row {row}:" in message
        assert info.value.row == row


def test_missing_node_file_is_reported(tmp_path):
    root = mutated(tmp_path, "nodes/Movie.csv", lambda t: t)
    (root / "nodes" / "Movie.csv").unlink()
    with pytest.raises(DatasetError, match=r"nodes/Movie.csv: file is missing"):
        load_dataset(root)


def test_stray_csv_for_undeclared_label(tmp_path):
    root = mutated(tmp_path, "nodes/Movie.csv", lambda t: t)
    (root / "nodes" / "Studio.csv").write_text("id,name\ns1,WB\n")
    with pytest.raises(DatasetError, match=r"label 'Studio' is not declared"):
        load_dataset(root)


def test_unknown_dataset_lists_valid_names():
    with pytest.raises(DatasetError, match=r"no such dataset"):
        load_dataset("no-such-dataset")


def test_bad_utf8_byte_names_file_row_and_byte(tmp_path):
    root = mutated(tmp_path, "nodes/Person.csv", lambda t: t)
    path = root / "nodes" / "Person.csv"
    data = path.read_bytes()
    second_row = data.index(b"\n", data.index(b"\n") + 1) + 1  # start of data row 2 (line 3)
    path.write_bytes(data[: second_row + 4] + b"\xff" + data[second_row + 4 :])
    with pytest.raises(DatasetError) as info:
        load_dataset(root)
    message = str(info.value)
    assert "nodes/Person.csv, row 2: not valid UTF-8: byte 0xff at line 3, byte 5 of the line" in message


def test_csv_and_yaml_with_a_utf8_bom_load(tmp_path, tiny_dataset):
    root = mutated(tmp_path, "nodes/Person.csv", lambda t: t)
    for relpath in ("nodes/Person.csv", "ground_truth.csv", "schema.yaml"):
        path = root / relpath
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    loaded = load_dataset(root)
    assert loaded.nodes["Person"] == tiny_dataset.nodes["Person"]
    assert [q.id for q in loaded.questions] == [q.id for q in tiny_dataset.questions]
