"""Dataset loading: every malformed input fails early with the file, the row and the problem."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
import yaml

from t2c_lib import config
from t2c_lib.datasets import IDENTIFIER, DatasetError, load_dataset, parse_value
from t2c_lib.schema import PropType
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


# --- names are identifiers: a dataset is hostile input (issue 36) ----------------------------------

DDL_PAYLOAD = (
    "a` STRING, PRIMARY KEY(`_key`)); COPY (RETURN 'x') TO '/tmp/o.csv'; LOAD EXTENSION '/tmp/evil.so'; "
    "CREATE NODE TABLE `zz`(`_key` STRING, `b"
)


def _rename_property(tmp_path: Path, new: str) -> Path:
    """The tiny dataset with Person.born renamed to `new` in schema.yaml and in the CSV header alike."""
    root = mutated(tmp_path, "nodes/Person.csv", lambda t: t)
    _edit_schema(
        root, lambda s: s["nodes"]["Person"]["properties"].update({new: s["nodes"]["Person"]["properties"].pop("born")})
    )
    person = root / "nodes" / "Person.csv"
    lines = person.read_text(encoding="utf-8").split("\n")
    header = io.StringIO()
    csv.writer(header, lineterminator="").writerow(["id", "name", new, "height", "nicknames"])
    person.write_text("\n".join([header.getvalue(), *lines[1:]]), encoding="utf-8")
    return root


def _edit_schema(root: Path, change) -> None:
    """Rewrite schema.yaml as data (any name, however quoted, stays one YAML key)."""
    path = root / "schema.yaml"
    schema = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(schema)
    path.write_text(yaml.safe_dump(schema, allow_unicode=True, width=10**6), encoding="utf-8")


def _renamed(mapping: dict, old: str, new: str) -> None:
    """Rename a key in place, keeping its position."""
    items = [(new if k == old else k, v) for k, v in mapping.items()]
    mapping.clear()
    mapping.update(items)


def _refusal(root: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(root)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    return message


@pytest.mark.parametrize("name", [DDL_PAYLOAD, "born year", "born-year", "1born", "b\u00f6rn", "born\n"])
def test_a_property_name_that_is_no_identifier_is_refused_naming_file_and_name(tmp_path, name):
    message = _refusal(_rename_property(tmp_path, name))
    assert message.startswith(str(tmp_path / "tiny" / "schema.yaml")) or "schema.yaml" in message
    assert "property name" in message and "is not allowed" in message
    assert repr(name[:60]) in message


@pytest.mark.parametrize("label", ["Mo`vie", "../../escape", "Movie) RETURN 1 //", "Mo vie"])
def test_a_label_that_is_no_identifier_is_refused_before_its_file_is_opened(tmp_path, label):
    root = mutated(tmp_path, "nodes/Movie.csv", lambda t: t)

    def change(schema: dict) -> None:
        _renamed(schema["nodes"], "Movie", label)
        schema["relationships"]["ACTED_IN"]["endpoints"] = [["Person", label]]

    _edit_schema(root, change)
    message = _refusal(root)
    assert "schema.yaml" in message and f"label {label!r} is not allowed" in message


def test_a_relationship_type_that_is_no_identifier_is_refused(tmp_path):
    root = mutated(tmp_path, "nodes/Movie.csv", lambda t: t)
    _edit_schema(root, lambda s: _renamed(s["relationships"], "FOLLOWS", "FOL`LOWS"))
    assert "relationship type 'FOL`LOWS' is not allowed" in _refusal(root)


def test_a_csv_column_that_is_no_identifier_is_named_with_its_file(tmp_path):
    root = mutated(tmp_path, "rels/ACTED_IN.csv", lambda t: t.replace("to_id,roles", 'to_id,"x`; LOAD EXTENSION y"'))
    message = _refusal(root)
    assert "rels/ACTED_IN.csv" in message and "column 'x`; LOAD EXTENSION y' is not allowed" in message


def test_a_very_long_name_is_cut_short_in_the_one_line(tmp_path):
    message = _refusal(_rename_property(tmp_path, "x" * 5000 + "`"))
    assert "5,001 characters" in message


@pytest.mark.parametrize("name", ["../..", "..", "a/b", "tiny\n", "ti ny", ""])
def test_a_dataset_name_that_could_leave_the_cache_is_refused(tmp_path, name):
    root = mutated(tmp_path, "dataset.yaml", lambda t: t.replace("name: tiny", f"name: {json.dumps(name)}"))
    message = _refusal(root)
    assert "dataset.yaml" in message and f"dataset name {name!r} is not allowed" in message


def test_a_folder_name_that_is_no_identifier_is_refused_when_dataset_yaml_names_none(tmp_path):
    root = mutated(tmp_path, "dataset.yaml", lambda t: t.replace("name: tiny\n", ""))
    moved = root.rename(tmp_path / "my data")
    assert "dataset name (the folder's" in _refusal(moved)


def test_a_name_under_data_cannot_walk_out_of_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # so the text is no path from here either
    with pytest.raises(DatasetError, match="no such dataset"):
        load_dataset(f"../{config.DATA_DIR.name}/movies")


def test_a_link_out_of_the_dataset_is_refused_without_showing_the_file(tmp_path):
    secret = tmp_path / "outside.csv"
    secret.write_text("id,SECRET_TOKEN_abc123\n1,2\n", encoding="utf-8")
    root = mutated(tmp_path, "nodes/Movie.csv", lambda t: t)
    (root / "nodes" / "Movie.csv").unlink()
    (root / "nodes" / "Movie.csv").symlink_to(secret)
    message = _refusal(root)
    assert "nodes/Movie.csv" in message and "outside the dataset folder" in message
    assert "SECRET" not in message


def test_the_ground_truth_file_must_be_a_name_in_the_dataset_folder(tmp_path):
    (tmp_path / "outside.csv").write_text("question,cypher,level\nq,SECRET_q,easy\n", encoding="utf-8")
    root = mutated(tmp_path, "dataset.yaml", lambda t: t.replace("file: ground_truth.csv", "file: ../outside.csv"))
    message = _refusal(root)
    assert "ground_truth.file '../outside.csv'" in message and "SECRET" not in message


@pytest.mark.parametrize("shipped", ["kurikulum", "movies"])
def test_the_shipped_datasets_use_identifiers_only(shipped):
    dataset = load_dataset(shipped)
    names = [dataset.name, *dataset.schema_spec.nodes, *dataset.schema_spec.rels]
    names += [p for props in dataset.schema_spec.nodes.values() for p in props]
    names += [p for spec in dataset.schema_spec.rels.values() for p in spec.properties]
    assert all(IDENTIFIER.fullmatch(n) for n in names)


def test_t2c_db_load_refuses_the_issues_ddl_property_in_one_line_and_builds_nothing(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from t2c_lib.cli.db import db_load

    written = tmp_path / "o.csv"
    root = _rename_property(tmp_path, DDL_PAYLOAD.replace("/tmp/o.csv", str(written)))
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    result = CliRunner().invoke(db_load, ["--dataset", str(root)])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith("t2c: error: ")
    assert "property name" in result.output and "is not allowed" in result.output
    assert not written.exists() and not (tmp_path / "cache").exists()


def test_a_list_cell_nested_past_the_decoders_depth_is_a_value_error_not_a_crash():
    with pytest.raises(ValueError, match="nested too deep"):
        parse_value("[" * 100_000, PropType.LIST_STRING)
    assert parse_value('["a", "b"]', PropType.LIST_STRING) == ["a", "b"]
