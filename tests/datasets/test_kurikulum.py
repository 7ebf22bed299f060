"""The curriculum graph and its 52 gold questions on the embedded store."""

from __future__ import annotations

from collections import Counter

import pytest

from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.schema import SchemaFormat

REQUIRED_COURSES = [
    "Aljabar Linear",
    "Statistika",
    "Kalkulus Variabel Tunggal",
    "Matematika Diskrit",
    "Persamaan Differensial",
    "Metode Numeris",
    "Fisika Mekanika Klasik",
    "Pemrograman Dasar",
    "Basis Data",
    "Kecerdasan Buatan",
    "Proyek Senior Teknologi Informasi",
]


def test_stratification_is_exact(kurikulum):
    assert len(kurikulum.questions) == 52
    by_cell = Counter(
        (q.strata["Tingkat Penalaran"], q.strata["Sublevel"], q.strata["Tingkat Kompleksitas"])
        for q in kurikulum.questions
    )
    assert by_cell == {
        ("Fakta Eksplisit", "Nodes", "Easy"): 5,
        ("Fakta Eksplisit", "Nodes", "Medium"): 7,
        ("Fakta Eksplisit", "Nodes", "Hard"): 4,
        ("Fakta Implisit", "One-hop", "Easy"): 6,
        ("Fakta Implisit", "One-hop", "Medium"): 7,
        ("Fakta Implisit", "One-hop", "Hard"): 7,
        ("Fakta Implisit", "Multi-hop", "Easy"): 5,
        ("Fakta Implisit", "Multi-hop", "Medium"): 6,
        ("Fakta Implisit", "Multi-hop", "Hard"): 5,
    }
    assert 6 <= len(kurikulum.examples) <= 8


def test_graph_meets_the_size_requirements(kurikulum_store):
    counts = kurikulum_store.counts()
    assert counts["MK"] >= 60 and counts["SO"] >= 9 and counts["LG"] == counts["MK"]
    semesters = kurikulum_store.query("MATCH (m:MK) RETURN DISTINCT m.semester ORDER BY m.semester").rows
    assert [r[0] for r in semesters] == list(range(1, 9))
    names = {r[0] for r in kurikulum_store.query("MATCH (m:MK) RETURN m.nama").rows}
    assert set(REQUIRED_COURSES) <= names
    per_course = kurikulum_store.query(
        "MATCH (m:MK) OPTIONAL MATCH (l:LO)-[:PURSUED_IN]->(m) WITH m, count(l) AS los "
        "OPTIONAL MATCH (t:topic)-[:PURSUED_IN]->(m) RETURN min(los), max(los), m.nama, count(t) AS topics ORDER BY topics"
    ).rows
    assert all(2 <= row[0] <= 5 and 3 <= row[3] <= 8 for row in per_course)
    deep = kurikulum_store.query("MATCH p = (a:MK)-[:PREREQUISITE*3..3]->(b:MK) RETURN count(p)").rows[0][0]
    assert deep > 0
    # (p)-[:PREREQUISITE]->(c): p is a prerequisite of c, so it is taught in an earlier semester (the thesis's direction)
    backwards = kurikulum_store.query(
        "MATCH (p:MK)-[:PREREQUISITE]->(c:MK) WHERE p.semester >= c.semester RETURN count(*)"
    ).rows[0][0]
    assert backwards == 0
    needs = kurikulum_store.query("MATCH (p:MK)-[:PREREQUISITE]->(c:MK {nama: 'Basis Data'}) RETURN p.nama").rows
    assert ["Struktur Data"] in needs
    det = kurikulum_store.query(
        "MATCH (t:topic)-[:PURSUED_IN]->(m:MK {nama: 'Aljabar Linear'}) WHERE t.deskripsi = 'Determinan' RETURN count(t)"
    ).rows
    assert det == [[1]]


@pytest.mark.parametrize("index", range(52))
def test_every_gold_query_returns_rows(kurikulum, kurikulum_store, index):
    item = kurikulum.questions[index]
    result = kurikulum_store.query(item.cypher)
    assert result.rows, f"{item.id} returned nothing: {item.cypher}"


@pytest.mark.slow
def test_schema_texts_are_identical_across_two_loads(kurikulum, tmp_path):
    texts = []
    for _ in range(2):
        store = LadybugStore(kurikulum, root=tmp_path, auto_load=False)
        counts = store.load(kurikulum)
        texts.append((counts, [store.schema().render(fmt) for fmt in SchemaFormat]))
        store.close()
    assert texts[0] == texts[1]
    assert texts[0][0] == kurikulum.expected_counts()


def test_the_prerequisite_description_points_the_way_the_edges_and_gold_queries_do(kurikulum):
    """Issue 28, item 2: the model reads this description with `schema_descriptions`; it must say
    that in (a)-[:PREREQUISITE]->(b) a is taken before b, as the header comment, the 72 edges
    (a's semester before b's) and the gold queries have it."""
    import csv
    import re

    import yaml

    def read_csv_rows(path):
        with path.open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))

    description = kurikulum.schema_spec.descriptions["PREREQUISITE"]
    said = re.search(
        r"\((\w)\)-\[:PREREQUISITE\]->\((\w)\) berarti (\w) (?:adalah prasyarat|harus diambil sebelum) (\w)",
        description,
    )
    assert said, description
    source, target, before, after = said.groups()
    assert (before, after) == (source, target), f"the description says {before} is taken before {after}: {description}"
    semester = {row["id"]: int(row["semester"]) for row in read_csv_rows(kurikulum.path / "nodes" / "MK.csv")}
    edges = read_csv_rows(kurikulum.path / "rels" / "PREREQUISITE.csv")
    assert len(edges) == 72 and all(semester[e["from_id"]] < semester[e["to_id"]] for e in edges)
    header = (kurikulum.path / "schema.yaml").read_text(encoding="utf-8")
    assert "(a:MK)-[:PREREQUISITE]->(b:MK)       a is a prerequisite of b" in header
    assert yaml.safe_load(header)["relationships"]["PREREQUISITE"]["description"] == description
