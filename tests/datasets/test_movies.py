"""The movies benchmark: conversion from the Neo4j script, loading into the embedded store, its gold screen."""

from __future__ import annotations

import csv
import filecmp
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from t2c_lib import config
from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.runs.gold_screen import DropKind
from t2c_lib.study.screen import screen_gold

MOVIES_DIR = config.DATA_DIR / "movies"
SOURCE_DIR = MOVIES_DIR / "source"
SCRIPT = SOURCE_DIR / "movies.cypher"
SHARED_SOURCE = Path("/work/shared/benchmarks/movies")
TYPES = [
    "Simple Retrieval Queries",
    "Complex Retrieval Queries",
    "Simple Aggregation Queries",
    "Complex Aggregation Queries",
    "Pathfinding Queries",
    "Verbose query",
]


@pytest.fixture(scope="module")
def movies():
    return load_dataset("movies")


@pytest.fixture(scope="module")
def movies_store(movies, tmp_path_factory):
    """The movies graph in a fresh embedded store (a private copy, not the user's .cache)."""
    store = LadybugStore(movies, root=tmp_path_factory.mktemp("ladybug-movies"))
    yield store
    store.close()


@pytest.fixture(scope="module")
def script_text() -> str:
    return SCRIPT.read_text(encoding="utf-8")


def test_store_counts_match_the_script(movies_store, script_text):
    """Labels and relationship types counted by regex over the script, independently of the converter."""
    counts = movies_store.counts()
    nodes = Counter(re.findall(r"CREATE \(\w+:(\w+) \{", script_text))
    rels = Counter(re.findall(r"\)-\[:(\w+)[ \]]", script_text))
    assert nodes == {"Movie": 38, "Person": 133}
    assert counts == dict(sorted({**nodes, **rels}.items()))
    assert set(rels) == {"ACTED_IN", "DIRECTED", "PRODUCED", "WROTE", "REVIEWED", "FOLLOWS"}


def test_store_holds_the_scripts_typed_values(movies_store, script_text):
    quoted = r"""(?:'([^']*)'|"([^"]*)")"""
    movies = {
        (m[0] or m[1], int(m[2]))
        for m in re.findall(r"\(\w+:Movie \{title:\s*" + quoted + r",\s*released:\s*(\d+)", script_text)
    }
    assert movies == {tuple(r) for r in movies_store.query("MATCH (m:Movie) RETURN m.title, m.released").rows}
    people = {
        (p[0] or p[1], int(p[2]) if p[2] else None)
        for p in re.findall(r"\(\w+:Person \{name:\s*" + quoted + r"(?:,\s*born:\s*(\d+))?\}\)", script_text)
    }
    assert len(people) == 133
    assert people == {tuple(r) for r in movies_store.query("MATCH (p:Person) RETURN p.name, p.born").rows}
    ratings = sorted(int(r) for r in re.findall(r"rating:\s*(\d+)", script_text))
    stored = movies_store.query("MATCH ()-[r:REVIEWED]->() RETURN r.rating, r.summary").rows
    assert sorted(r[0] for r in stored) == ratings and all(isinstance(r[1], str) and r[1] for r in stored)
    role_lists = re.findall(r"roles:\s*\[([^\]]*)\]", script_text)
    n_roles = sum(len(re.findall(quoted, body)) for body in role_lists)
    assert movies_store.query("MATCH ()-[r:ACTED_IN]->() RETURN sum(size(r.roles))").rows == [[n_roles]]
    assert movies_store.query(
        "MATCH (p:Person {name: 'Hugo Weaving'})-[r:ACTED_IN]->(m:Movie {title: 'Cloud Atlas'}) RETURN r.roles"
    ).rows == [[["Bill Smoke", "Haskell Moore", "Tadeusz Kesselring", "Nurse Noakes", "Boardman Mephi", "Old Georgie"]]]
    tagless = movies_store.query("MATCH (m:Movie) WHERE m.tagline IS NULL RETURN count(m)").rows[0][0]
    assert tagless == 38 - script_text.count("tagline:")


def test_conversion_reproduces_the_committed_files(tmp_path):
    out = tmp_path / "movies"
    done = subprocess.run(
        [
            sys.executable,
            str(config.PROJECT_ROOT / "tools" / "convert_movies.py"),
            "--source",
            str(SOURCE_DIR),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Movie 38, Person 133" in done.stdout
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    committed = sorted(
        p.relative_to(MOVIES_DIR).as_posix()
        for p in MOVIES_DIR.rglob("*")
        if p.is_file() and p.parts[len(MOVIES_DIR.parts)] in ("nodes", "rels")
    )
    assert committed == [w for w in written if w.startswith(("nodes/", "rels/"))]
    assert set(written) - set(committed) == {"schema.yaml", "ground_truth.csv"}
    for rel in written:
        assert (out / rel).read_bytes() == (MOVIES_DIR / rel).read_bytes(), f"{rel} differs from the committed file"


def test_conversion_reports_unsupported_script_lines(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "movies.cypher").write_text("CREATE (a:Movie {title: 'X'})\nCREATE (a)-[:LIKES]->(b)\n", encoding="utf-8")
    (source / "questions.csv").write_text("question,cypher,type\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            str(config.PROJECT_ROOT / "tools" / "convert_movies.py"),
            "--source",
            str(source),
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "line 2: (b) refers to a node that was not created before" in done.stderr


def test_committed_source_is_the_benchmark_copy():
    if not SHARED_SOURCE.is_dir():
        pytest.skip(f"{SHARED_SOURCE} is not on this machine; the committed copy in {SOURCE_DIR} is used")
    for name in ("movies.cypher", "questions.csv", "SOURCE.md"):
        assert filecmp.cmp(SHARED_SOURCE / name, SOURCE_DIR / name, shallow=False), name


def test_dataset_settings_and_ground_truth(movies):
    assert movies.language == "en"
    assert movies.ground_truth_spec.question == "question" and movies.ground_truth_spec.cypher == "cypher"
    assert movies.strata_columns == ["type"]
    assert list(movies.ground_truth_spec.strata["type"]) == TYPES
    with (SOURCE_DIR / "questions.csv").open(encoding="utf-8", newline="") as handle:
        raw = list(csv.DictReader(handle))
    assert len(movies.questions) == len(raw) == 474
    assert Counter(q.strata["type"] for q in movies.questions) == Counter(r["type"] for r in raw)
    assert [(q.question, q.cypher) for q in movies.questions] == [
        (r["question"].strip(), r["cypher"].strip()) for r in raw
    ]
    assert (MOVIES_DIR / "ground_truth.csv").read_bytes() == (SOURCE_DIR / "questions.csv").read_bytes()


def test_examples_are_held_out_and_run(movies, movies_store):
    assert 5 <= len(movies.examples) <= 7
    gold = {q.question.lower() for q in movies.questions}
    for example in movies.examples:
        assert example.question.lower() not in gold
        assert example.reasoning
        assert movies_store.query(example.cypher).rows, example.cypher


@pytest.mark.slow
def test_gold_screen_on_the_embedded_store(movies, movies_store, tmp_path):
    screen = screen_gold(movies, movies_store, timeout_s=10)
    assert screen.total == 474 and len(screen.kept) + len(screen.dropped) == 474
    assert {i.id for i in screen.kept}.isdisjoint(d.id for d in screen.dropped)
    counts = screen.stratum_counts()["type"]
    assert set(counts) == set(TYPES)
    assert all(c["kept"] > 0 for c in counts.values())
    for item in screen.kept:
        assert movies_store.query(item.cypher).rows, item.id
    for dropped in screen.dropped:
        assert dropped.reason and dropped.kind
    # Neo4j's EXISTS { (pattern) } shorthand runs after the store's dialect normalisation (cypher/dialect.py);
    # the one pair still refused joins two patterns with AND inside the braces, which is no pattern
    exists_shorthand = [q for q in movies.questions if re.search(r"exists\s*\{\s*\(", q.cypher, re.I)]
    assert exists_shorthand
    by_id = {d.id: d for d in screen.dropped}
    kept = {i.id for i in screen.kept}
    assert sum(q.id in kept for q in exists_shorthand) >= 10
    refused = [q.id for q in exists_shorthand if q.id in by_id and by_id[q.id].kind == DropKind.SYNTAX]
    assert refused == ["movies-419"]
    csv_path, json_path = screen.write_report(tmp_path)
    with csv_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["id"] for r in rows] == [d.id for d in screen.dropped]
    assert json_path.is_file()
