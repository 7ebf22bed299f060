"""Gold screening on a real embedded store, and the seeded stratified sample."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter

import pytest

from t2c_lib.datasets import DatasetError, GroundTruthItem, load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.runs.gold_screen import DropKind
from t2c_lib.study.screen import REPORT_COLUMNS, OrderProbe, sample_items, screen_gold
from tests.helpers import FIXTURES

# (question, gold cypher, level, expected drop kind or None if the pair must be kept)
EXTRA_ROWS = [
    ("Which films were released after 1990?", "MATCH (m:Film) RETURN m.title", "easy", DropKind.SEMANTIC),
    ("Who has no name?", "MATCH (p:Person RETURN p", "hard", DropKind.SYNTAX),
    (
        "Who acted in Speed?",
        "MATCH (p:Person)-[:ACTED_IN]->(:Movie {title: 'Speed'}) RETURN p.name",
        "easy",
        DropKind.EMPTY,
    ),
    (
        "How tall is Carrie-Anne Moss?",
        "MATCH (p:Person {name: 'Carrie-Anne Moss'}) RETURN p.height",
        "hard",
        DropKind.EMPTY,
    ),
    ("How many walks are there?", "MATCH (a)-[*1..30]-(b) RETURN count(*)", "hard", DropKind.TIMEOUT),
    ("When was Carrie-Anne Moss born?", "MATCH (p:Person {name: 'Carrie-Anne Moss'}) RETURN p.born", "hard", None),
]


@pytest.fixture(scope="module")
def flawed(tmp_path_factory):
    """The tiny fixture with good and bad gold pairs appended (ids tiny-004 ... tiny-009)."""
    root = tmp_path_factory.mktemp("flawed") / "tiny"
    shutil.copytree(FIXTURES / "tiny", root)
    with (root / "ground_truth.csv").open("a", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        for question, cypher, level, _ in EXTRA_ROWS:
            writer.writerow([question, cypher, level])
    dataset = load_dataset(root)
    store = LadybugStore(dataset, root=tmp_path_factory.mktemp("ladybug-flawed"))
    yield dataset, store
    store.close()


@pytest.fixture(scope="module")
def screen(flawed):
    dataset, store = flawed
    return screen_gold(dataset, store, timeout_s=0.5)


def test_keeps_only_pairs_that_run_and_return_something(flawed, screen):
    dataset, store = flawed
    expected_kept = ["tiny-001", "tiny-002", "tiny-003"] + [
        f"tiny-{4 + i:03d}" for i, row in enumerate(EXTRA_ROWS) if row[3] is None
    ]
    assert [i.id for i in screen.kept] == expected_kept
    assert all(store.query(i.cypher).rows for i in screen.kept)
    expected_dropped = {f"tiny-{4 + i:03d}": row[3] for i, row in enumerate(EXTRA_ROWS) if row[3] is not None}
    assert {d.id: d.kind for d in screen.dropped} == expected_dropped
    assert screen.total == len(dataset.questions)


def test_each_drop_carries_the_stores_reason(screen):
    reasons = {d.id: d.reason for d in screen.dropped}
    assert "Binder exception" in reasons["tiny-004"] or "Catalog exception" in reasons["tiny-004"]
    assert "Film" in reasons["tiny-004"]
    assert reasons["tiny-005"].startswith("syntax error: Parser exception")
    assert reasons["tiny-006"] == "empty result: no rows"
    assert reasons["tiny-007"] == "empty result: 1 row(s), every value null or empty"
    assert reasons["tiny-008"].startswith("timeout:")
    dropped = {d.id: d for d in screen.dropped}
    assert dropped["tiny-006"].question == "Who acted in Speed?" and "Speed" in dropped["tiny-006"].cypher


def test_counts_per_stratum(screen):
    assert screen.stratum_counts() == {"level": {"easy": {"kept": 2, "dropped": 2}, "hard": {"kept": 2, "dropped": 3}}}
    assert screen.kind_counts() == {"empty": 2, "error:semantic": 1, "error:syntax": 1, "timeout": 1}


@pytest.mark.parametrize("target", ["dir", "file"])
def test_report_lists_every_dropped_pair(screen, tmp_path, target):
    path = tmp_path if target == "dir" else tmp_path / "run" / "gold_dropped.csv"
    csv_path, json_path = screen.write_report(path)
    assert csv_path.parent == json_path.parent and json_path.suffix == ".json"
    assert csv_path.name == ("gold_screen.csv" if target == "dir" else "gold_dropped.csv")
    with csv_path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        assert tuple(next(reader)) == REPORT_COLUMNS
        rows = list(reader)
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [(d.id, d.reason, d.question, d.cypher) for d in screen.dropped]
    summary = json.loads(json_path.read_text(encoding="utf-8"))
    assert (summary["total"], summary["kept"], summary["dropped"]) == (
        screen.total,
        len(screen.kept),
        len(screen.dropped),
    )
    assert summary["dropped_ids"] == [d.id for d in screen.dropped]
    assert summary["strata"]["level"]["hard"] == {"kept": 2, "dropped": 3}
    assert sum(r["count"] for r in summary["top_reasons"]) == len(screen.dropped)
    assert summary["store"] == "ladybug" and summary["dataset"] == "tiny"


# --- sampling -------------------------------------------------------------------------------


def _items(sizes: dict[str, int]) -> list[GroundTruthItem]:
    """Items interleaved across strata, so original order and stratum order differ."""
    items, counters = [], Counter()
    while any(counters[s] < n for s, n in sizes.items()):
        for stratum, n in sizes.items():
            if counters[stratum] < n:
                counters[stratum] += 1
                items.append(
                    GroundTruthItem(f"q-{len(items) + 1:03d}", f"question {len(items)}", "RETURN 1", {"kind": stratum})
                )
    return items


def test_sample_is_proportional_by_largest_remainder():
    items = _items({"A": 5, "B": 3, "C": 2})
    sample = sample_items(items, 5, "kind", seed=7)
    # quotas 2.5 / 1.5 / 1.0: floors 2+1+1, the one left goes to the tied remainder of the larger stratum A
    assert Counter(i.strata["kind"] for i in sample) == {"A": 3, "B": 1, "C": 1}
    sample = sample_items(items, 4, "kind", seed=7)  # quotas 2.0 / 1.2 / 0.8: C's remainder wins
    assert Counter(i.strata["kind"] for i in sample) == {"A": 2, "B": 1, "C": 1}


def test_sample_is_deterministic_and_keeps_original_order():
    items = _items({"A": 40, "B": 25, "C": 10, "D": 3})
    first = sample_items(items, 20, "kind", seed=3)
    assert first == sample_items(list(items), 20, "kind", seed=3)
    positions = [items.index(i) for i in first]
    assert positions == sorted(positions) and len(set(positions)) == 20
    assert sample_items(items, 20, "kind", seed=4) != first
    counts = Counter(i.strata["kind"] for i in first)
    for stratum, size in Counter(i.strata["kind"] for i in items).items():
        quota = 20 * size / len(items)
        assert int(quota) <= counts.get(stratum, 0) <= int(quota) + 1


def test_sample_all_and_bad_sizes():
    items = _items({"A": 4, "B": 2})
    assert sample_items(items, "all", "kind", seed=0) == items
    assert sample_items(items, None, "kind", seed=0) == items
    assert len(sample_items(items, "3", "kind", seed=0)) == 3
    assert len(sample_items(items, 6, None, seed=0)) == 6
    with pytest.raises(ValueError, match="exceeds the 6 available"):
        sample_items(items, 7, "kind", seed=0)
    with pytest.raises(ValueError, match="at least 1"):
        sample_items(items, 0, "kind", seed=0)
    with pytest.raises(ValueError, match="neither an integer nor 'all'"):
        sample_items(items, "most", "kind", seed=0)
    with pytest.raises(ValueError, match="no stratum column 'level'"):
        sample_items(items, 2, "level", seed=0)


@pytest.mark.slow
def test_sample_of_screened_movies_gold(tmp_path):
    movies = load_dataset("movies")
    with LadybugStore(movies, root=tmp_path) as store:
        kept = screen_gold(movies, store).kept
    sample = sample_items(kept, 30, "type", seed=42)
    assert len(sample) == 30 and set(i.id for i in sample) <= {i.id for i in kept}
    per_type = Counter(i.strata["type"] for i in kept)
    got = Counter(i.strata["type"] for i in sample)
    for stratum, size in per_type.items():
        assert int(30 * size / len(kept)) <= got.get(stratum, 0) <= int(30 * size / len(kept)) + 1
    assert sample_items(kept, "all", "type", seed=42) == kept


# --- reference stores -----------------------------------------------------------------------


@pytest.mark.slow
def test_reference_store_with_the_same_graph_drops_nothing_more(flawed, screen, tmp_path, tiny_dataset):
    """`also`: a second embedded copy of the same graph agrees on every kept pair (Neo4j: test_neo4j_movies.py)."""
    dataset, store = flawed
    with LadybugStore(dataset, root=tmp_path / "copy") as copy:
        checked = screen_gold(dataset, store, timeout_s=0.5, also=[copy])
    assert [i.id for i in checked.kept] == [i.id for i in screen.kept]
    assert [(d.id, d.kind) for d in checked.dropped] == [(d.id, d.kind) for d in screen.dropped]
    assert checked.also == ["ladybug"] and checked.summary()["also"] == ["ladybug"]
    assert "results compared with ladybug" in checked.describe()
    with pytest.raises(ValueError, match="holds tiny .* not tiny"):
        screen_gold(dataset, store, also=[LadybugStore(tiny_dataset, root=tmp_path / "other", auto_load=False)])


# --- dataset exclusions and the row-order probe -------------------------------------------

ORDER_ROWS = [
    # (question, gold cypher, expected drop kind with the probe, or None if kept)
    ("Name any one person.", "MATCH (p:Person) RETURN p.name LIMIT 1", DropKind.ORDER),
    # ties on a returned sort key may come in any order (eq:v2): the answer no longer depends on row order
    ("Name people by birth decade.", "MATCH (p:Person) RETURN p.name, p.born / 100 AS c ORDER BY c", None),
    ("Who is the oldest person?", "MATCH (p:Person) RETURN p.name ORDER BY p.born LIMIT 1", None),
    ("Name two people.", "MATCH (p:Person) RETURN p.name LIMIT 2", None),  # every row: order does not matter
    # the same ties with the sort key not returned: invisible in the result, so the order counts
    ("List people by birth decade.", "MATCH (p:Person) RETURN p.name ORDER BY p.born / 100", DropKind.ORDER),
]


@pytest.fixture
def ordered_dataset(tmp_path):
    """The tiny fixture with order-dependent and order-free gold appended (tiny-004 ... tiny-008), one excluded."""
    root = tmp_path / "tiny"
    shutil.copytree(FIXTURES / "tiny", root)
    with (root / "ground_truth.csv").open("a", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        for question, cypher, _ in ORDER_ROWS:
            writer.writerow([question, cypher, "hard"])
    with (root / "dataset.yaml").open("a", encoding="utf-8") as handle:
        handle.write("gold_exclusions:\n  tiny-002: >-\n    dialect: counted   differently\n    elsewhere\n")
    return load_dataset(root)


def test_reverse_row_order_copy_is_the_same_graph(ordered_dataset):
    backward = ordered_dataset.in_reverse_row_order()
    assert backward.hash == ordered_dataset.hash and backward.expected_counts() == ordered_dataset.expected_counts()
    assert [r.key for r in backward.nodes["Person"]] == [r.key for r in reversed(ordered_dataset.nodes["Person"])]
    assert [r.key for r in ordered_dataset.nodes["Person"]] == ["p1", "p2"]  # the original is untouched


@pytest.mark.slow
def test_order_probe_drops_answers_that_depend_on_row_order(ordered_dataset, tmp_path):
    with LadybugStore(ordered_dataset, root=tmp_path) as store:
        probe = OrderProbe.open(ordered_dataset, root=tmp_path, forward=store)
        assert probe.forward is store and not probe.owns_forward
        assert probe.backward.query(ORDER_ROWS[0][1]).rows != store.query(ORDER_ROWS[0][1]).rows
        screen = screen_gold(ordered_dataset, store, order_probe=probe)
        unprobed = screen_gold(ordered_dataset, store)
        unexcluded = screen_gold(ordered_dataset, store, use_exclusions=False)
        probe.close()
    from t2c_lib.graph.ladybug import store_dir_name

    stores = sorted(["tiny", store_dir_name(ordered_dataset), store_dir_name(ordered_dataset, "reversed")])
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == stores
    dropped = {d.id: d for d in screen.dropped}
    for offset, (_, _, kind) in enumerate(ORDER_ROWS):
        qid = f"tiny-{4 + offset:03d}"
        assert (dropped[qid].kind if qid in dropped else None) == kind, qid
    assert "ORDER BY" in dropped["tiny-008"].reason and "LIMIT" in dropped["tiny-004"].reason
    assert all(d.kind != DropKind.ORDER for d in unprobed.dropped)
    assert screen.order_probe and screen.summary()["order_probe"] is True and "row order probed" in screen.describe()
    # the dataset's exclusions are dropped first, with their reason (whitespace folded)
    assert dropped["tiny-002"].kind == DropKind.EXCLUDED
    assert dropped["tiny-002"].reason == "excluded by the dataset: dialect: counted differently elsewhere"
    assert "tiny-002" in {i.id for i in unexcluded.kept}


@pytest.mark.parametrize(
    "entry,problem",
    [
        ("  tiny-999: no such pair\n", "no question 'tiny-999'"),
        ("  tiny-001: ''\n", "tiny-001 needs a reason"),
    ],
)
def test_bad_gold_exclusions_name_the_problem(tmp_path, entry, problem):
    root = tmp_path / "tiny"
    shutil.copytree(FIXTURES / "tiny", root)
    with (root / "dataset.yaml").open("a", encoding="utf-8") as handle:
        handle.write("gold_exclusions:\n" + entry)
    with pytest.raises(DatasetError, match=problem) as error:
        load_dataset(root)
    assert "dataset.yaml" in str(error.value)


@pytest.mark.slow
def test_curriculum_gold_does_not_depend_on_row_order(tmp_path):
    """The thesis set loses nothing to the probe (its results stay comparable with earlier runs)."""
    kurikulum = load_dataset("kurikulum")
    with LadybugStore(kurikulum, root=tmp_path) as store:
        probe = OrderProbe.open(kurikulum, root=tmp_path, forward=store)
        screen = screen_gold(kurikulum, store, order_probe=probe)
        probe.close()
    assert screen.dropped == [] and len(screen.kept) == 52


@pytest.mark.slow
def test_movies_screen_drops_exclusions_and_order_dependent_gold(tmp_path):
    movies = load_dataset("movies")
    with LadybugStore(movies, root=tmp_path) as store:
        probe = OrderProbe.open(movies, root=tmp_path, forward=store)
        screen = screen_gold(movies, store, order_probe=probe)
        for dropped in screen.dropped:
            if dropped.kind == DropKind.ORDER:
                assert store.query(dropped.cypher).rows  # it runs: only its order is in question
        probe.close()
    kinds = screen.kind_counts()
    assert kinds["excluded"] == len(movies.gold_exclusions) == 2  # one dialect difference, one tie cut inside a WITH
    assert kinds["order"] > 0
    assert all(c["kept"] >= 10 for c in screen.stratum_counts()["type"].values())


def test_a_screen_round_trips_through_its_record(flawed, screen, tmp_path):
    """The cached form rebuilds the same screen: kept items, and every drop with its kind and reason."""
    from t2c_lib.study.screen import read_cached_screen, write_cached_screen

    dataset, _ = flawed
    path = tmp_path / "screen.json"
    write_cached_screen(screen, path)
    again = read_cached_screen(dataset, path)
    assert again == screen and again.summary() == screen.summary()
    assert {d.kind for d in again.dropped} == {kind for *_, kind in EXTRA_ROWS if kind}
    path.write_text("{not json", encoding="utf-8")
    assert read_cached_screen(dataset, path) is None  # unreadable: screened again, never trusted
    other = load_dataset(FIXTURES / "tiny")
    write_cached_screen(screen, path)
    assert read_cached_screen(other, path) is None  # another dataset version


def test_screen_cache_key_covers_what_decides_a_screen(flawed, tmp_path):
    from t2c_lib.study.screen import screen_cache_key

    dataset, store = flawed
    key = screen_cache_key(dataset, store, 10.0, True)
    assert key == screen_cache_key(dataset, store, 10.0, True)
    assert (
        len(
            {
                key,
                screen_cache_key(dataset, store, 5.0, True),
                screen_cache_key(dataset, store, 10.0, False),
                screen_cache_key(load_dataset(FIXTURES / "tiny"), store, 10.0, True),
            }
        )
        == 4
    )


@pytest.mark.slow
def test_open_study_screens_once_and_reuses_the_screen(tmp_path, monkeypatch):
    """The second notebook of a run reads the screen: no order probe is built, and the questions are the same."""
    from t2c_lib import config
    from t2c_lib.study import steps as study
    from t2c_lib.study.params import StudyParams

    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    params = StudyParams().with_overrides(dataset=str(FIXTURES / "tiny"), run_id="screen-once")
    first = study.open_study(params, results_dir=tmp_path / "results")
    first.store.close()
    assert len(list((tmp_path / "cache" / "gold_screen").glob("*.json"))) == 1

    def no_probe(*args, **kwargs):
        raise AssertionError("the screen should have come from the cache")

    monkeypatch.setattr(study.OrderProbe, "open", no_probe)
    second = study.open_study(params, results_dir=tmp_path / "results")
    second.store.close()
    assert [q.id for q in second.questions] == [q.id for q in first.questions] and second.screen == first.screen
    assert (tmp_path / "results" / "screen-once" / "gold_screen" / "gold_screen.json").exists()
