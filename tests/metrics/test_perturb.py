"""Perturbed copies for test-suite accuracy: each perturbation on the movies graph, the suite's verdicts,
and pass_at_1_ts / coincidental matches in scores and summaries."""

from __future__ import annotations

from collections import Counter

import pytest

from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.metrics.perturb import KINDS, Perturbation, copy_plan, name_property, perturb, variant_name
from t2c_lib.metrics.scores import score_question, summarize
from t2c_lib.metrics.testsuite import TestSuite


@pytest.fixture(scope="module")
def movies():
    return load_dataset("movies")


def values(rows, prop):
    return Counter(repr(r.properties[prop]) for r in rows if prop in r.properties)


def by_key(rows):
    return {r.key: r for r in rows}


def test_copy_plan_cycles_the_kinds_with_own_seeds():
    plan = copy_plan(6, seed=3)
    assert [k for k, _ in plan] == [*KINDS, KINDS[0], KINDS[1]]
    assert len({s for _, s in plan}) == 6
    assert len({variant_name(k, i, s) for i, (k, s) in enumerate(plan)}) == 6
    with pytest.raises(ValueError, match="at least 0"):
        copy_plan(-1)


@pytest.mark.parametrize("kind", list(Perturbation))
def test_perturbation_is_reproducible_and_seeded(movies, kind):
    a, b, c = perturb(movies, kind, 1), perturb(movies, kind, 1), perturb(movies, kind, 2)
    assert a.nodes == b.nodes and a.rels == b.rels
    assert (a.nodes, a.rels) != (c.nodes, c.rels)
    assert a.name == movies.name and a.hash == movies.hash
    assert movies.nodes != a.nodes or movies.rels != a.rels  # the original is left alone, the copy differs


def test_shuffle_permutes_each_propertys_values(movies):
    copy = perturb(movies, Perturbation.SHUFFLE, 0)
    for label, rows in movies.nodes.items():
        assert [r.key for r in copy.nodes[label]] == [r.key for r in rows]
        for prop in {p for r in rows for p in r.properties}:
            assert values(copy.nodes[label], prop) == values(rows, prop)
    moved = sum(a.properties != b.properties for a, b in zip(movies.nodes["Person"], copy.nodes["Person"]))
    assert moved > len(movies.nodes["Person"]) // 2
    assert values(copy.rels["REVIEWED"], "rating") == values(movies.rels["REVIEWED"], "rating")


def test_drop_removes_a_share_and_leaves_no_dangling_relationship(movies):
    copy = perturb(movies, Perturbation.DROP, 0)
    kept = {(label, r.key) for label, rows in copy.nodes.items() for r in rows}
    before = sum(len(v) for v in movies.nodes.values())
    assert 0.05 * before < before - len(kept) < 0.4 * before
    for rel_type, rows in copy.rels.items():
        assert all(r in movies.rels[rel_type] for r in rows)  # a subset, unchanged
        for r in rows:
            assert (r.from_label, r.from_key) in kept and (r.to_label, r.to_key) in kept
    assert sum(map(len, copy.rels.values())) < sum(map(len, movies.rels.values()))
    for label, rows in copy.nodes.items():
        original = by_key(movies.nodes[label])
        assert all(original[r.key] == r for r in rows)  # kept nodes are unchanged


def test_jitter_moves_every_number_a_little(movies):
    copy = perturb(movies, Perturbation.JITTER, 0)
    born = [
        (a.properties["born"], b.properties["born"])
        for a, b in zip(movies.nodes["Person"], copy.nodes["Person"])
        if "born" in a.properties
    ]
    spread = max(x for x, _ in born) - min(x for x, _ in born)
    assert all(x != y and abs(x - y) <= max(1, int(spread * 0.1)) and isinstance(y, int) for x, y in born)
    for a, b in zip(movies.nodes["Movie"], copy.nodes["Movie"]):
        assert a.properties.get("title") == b.properties.get("title")  # text stays
        assert a.properties.get("tagline") == b.properties.get("tagline")
    ratings = [
        (a.properties["rating"], b.properties["rating"]) for a, b in zip(movies.rels["REVIEWED"], copy.rels["REVIEWED"])
    ]
    assert any(x != y for x, y in ratings)


def test_swap_exchanges_names_within_a_label(movies):
    assert name_property(movies.nodes["Person"]) == "name"
    assert name_property(movies.nodes["Movie"]) == "title"
    copy = perturb(movies, Perturbation.SWAP, 0)
    for label, prop in (("Person", "name"), ("Movie", "title")):
        rows, swapped = movies.nodes[label], copy.nodes[label]
        assert values(swapped, prop) == values(rows, prop)
        changed = sum(a.properties[prop] != b.properties[prop] for a, b in zip(rows, swapped))
        assert changed >= len(rows) - 1  # every node but an odd one out has another name
        for a, b in zip(rows, swapped):
            assert {k: v for k, v in a.properties.items() if k != prop} == {
                k: v for k, v in b.properties.items() if k != prop
            }
    assert copy.rels == movies.rels


@pytest.fixture(scope="module")
def suite(movies, tmp_path_factory):
    suite = TestSuite.open(movies, k=4, seed=0, root=tmp_path_factory.mktemp("suite"))
    yield suite
    suite.close()


@pytest.fixture(scope="module")
def movies_store(movies, tmp_path_factory):
    store = LadybugStore(movies, root=tmp_path_factory.mktemp("suite-original"))
    yield store
    store.close()


GOLD = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released"


@pytest.mark.slow
def test_suite_builds_each_kind_once_and_caches_it(suite, movies, tmp_path_factory):
    assert [n.split("-")[3] for n in suite.names] == [k.value for k in KINDS]
    root = suite.copies[0][1].root.parent
    again = TestSuite.open(movies, k=4, seed=0, root=root)
    try:
        assert all(s.is_loaded() for _, s in again.copies)
        assert [s.db_path for _, s in again.copies] == [s.db_path for _, s in suite.copies]
    finally:
        again.close()


@pytest.mark.slow
def test_suite_accepts_the_gold_and_an_equivalent_rewrite(suite):
    assert suite.check(GOLD, GOLD).passed
    verdict = suite.check(GOLD, "MATCH (m:Movie) WHERE m.title = 'The Matrix' RETURN m.released AS year")
    assert verdict.passed and len(verdict.checked) >= 3


@pytest.mark.slow
def test_suite_catches_a_coincidental_match(suite, movies_store):
    constant = "RETURN 1999"
    assert movies_store.query(constant).rows == movies_store.query(GOLD).rows  # right on the original graph
    verdict = suite.check(GOLD, constant)
    assert not verdict.passed and any("jitter" in n for n in verdict.failed)


@pytest.mark.slow
def test_copies_where_the_gold_has_no_answer_are_skipped(suite):
    verdict = suite.check("MATCH (p:Person {name: 'Keanu Reeves'})-[:FOLLOWS]->(q) RETURN q.name", "RETURN 1")
    assert set(verdict.checked) < set(suite.names) or not verdict.checked


@pytest.mark.slow
def test_scores_and_summary_report_test_suite_accuracy(suite, movies_store):
    right = score_question(
        GOLD, "MATCH (m:Movie) WHERE m.title = 'The Matrix' RETURN m.released", movies_store, [], suite=suite
    )
    lucky = score_question(GOLD, "RETURN 1999", movies_store, [], suite=suite)
    wrong = score_question(GOLD, "RETURN 2000", movies_store, [], suite=suite)
    assert (right.pass_at_1, right.pass_at_1_ts) == (1.0, 1.0)
    assert (lucky.pass_at_1, lucky.pass_at_1_ts) == (1.0, 0.0) and lucky.failed_copies
    assert (wrong.pass_at_1, wrong.pass_at_1_ts) == (0.0, 0.0)
    summary = summarize([right, lucky, wrong])
    assert summary["pass_at_1"] == pytest.approx(2 / 3) and summary["pass_at_1_ts"] == pytest.approx(1 / 3)
    assert summary["n_coincidental"] == 1
    plain = score_question(GOLD, "RETURN 1999", movies_store, [])
    assert plain.pass_at_1_ts is None and "pass_at_1_ts" not in summarize([plain])
