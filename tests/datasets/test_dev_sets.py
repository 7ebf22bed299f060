"""Development sets (issue 38): loaded as a split, apart from the test questions, answerable on the store.

Designs are chosen on `data/<dataset>/dev/questions.csv` and reported on the test split; these
tests hold the rule: no dev question is (nearly) a gold, few-shot or conversation question, every
dev gold query returns rows on the embedded store, the movies dev pairs lie outside the movies
grid's seeded sample, and the test split (its questions, hash and sample) is as it was.
"""

from __future__ import annotations

import csv
import re
import shutil
from collections import Counter

import pytest

from t2c_lib.datasets import DEV_QUESTIONS, DatasetError, dataset_hash, load_dataset
from t2c_lib.study.params import ParamsError, load_params, params_from_dict
from tests.helpers import ROOT

NEAR = 0.8  # token Jaccard at or above this is a near-duplicate
STRATA = ("Tingkat Penalaran", "Sublevel", "Tingkat Kompleksitas")


def tokens(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def jaccard(a: str, b: str) -> float:
    x, y = tokens(a), tokens(b)
    return len(x & y) / len(x | y) if x | y else 1.0


@pytest.fixture(scope="module")
def kurikulum_dev():
    return load_dataset("kurikulum", split="dev")


@pytest.fixture(scope="module")
def movies_dev():
    return load_dataset("movies", split="dev")


def test_dev_sets_load_as_a_split_with_their_own_ids(kurikulum_dev, movies_dev):
    assert len(kurikulum_dev.questions) >= 44
    assert len(movies_dev.questions) >= 40
    assert all(q.id.startswith("kurikulum-dev-") for q in kurikulum_dev.questions)
    assert all(q.id.startswith("movies-dev-") for q in movies_dev.questions)
    assert kurikulum_dev.gold_exclusions == {} and movies_dev.gold_exclusions == {}
    assert len(load_dataset("kurikulum").questions) == 52  # the test split is untouched


def test_the_dev_folder_leaves_the_test_hash_as_it_was(tmp_path, kurikulum_dev):
    copy = tmp_path / "kurikulum"
    shutil.copytree(ROOT / "data" / "kurikulum", copy)
    with_dev = dataset_hash(copy)
    shutil.rmtree(copy / "dev")
    assert dataset_hash(copy) == with_dev  # test split: store, caches and manifests unchanged
    assert kurikulum_dev.hash != load_dataset("kurikulum").hash  # the dev split is another version


def test_an_unknown_split_is_refused_with_the_valid_ones():
    with pytest.raises(DatasetError, match="test, dev"):
        load_dataset("kurikulum", split="train")
    with pytest.raises(ParamsError, match="valid: test, dev"):
        params_from_dict({"split": "validation"})


def test_dev_parameter_files_select_the_dev_split():
    assert load_params(ROOT / "params" / "dev.yaml").split == "dev"
    assert load_params(ROOT / "params" / "movies-dev.yaml").split == "dev"
    for name in ("thesis.yaml", "movies.yaml", "strategies.yaml", "quick.yaml"):
        assert load_params(ROOT / "params" / name).split == "test"


def test_no_dev_question_is_nearly_a_gold_example_or_conversation_question(kurikulum_dev):
    gold = load_dataset("kurikulum")
    others = (
        [("gold", q.question) for q in gold.questions]
        + [("example", e.question) for e in gold.examples]
        + [("conversation", t.message) for d in gold.conversations for t in d.turns]
    )
    close = [
        (q.id, kind, other, round(jaccard(q.question, other), 2))
        for q in kurikulum_dev.questions
        for kind, other in others
        if jaccard(q.question, other) >= NEAR
    ]
    assert close == []
    gold_queries = {" ".join(q.cypher.split()) for q in gold.questions} | {
        " ".join(e.cypher.split()) for e in gold.examples
    }
    assert [q.id for q in kurikulum_dev.questions if " ".join(q.cypher.split()) in gold_queries] == []
    texts = [q.question for q in kurikulum_dev.questions]
    assert len(set(texts)) == len(texts)


def test_curriculum_dev_strata_follow_the_gold_proportions(kurikulum_dev, capsys):
    gold = load_dataset("kurikulum")
    dev_counts = Counter(tuple(q.strata[c] for c in STRATA) for q in kurikulum_dev.questions)
    gold_counts = Counter(tuple(q.strata[c] for c in STRATA) for q in gold.questions)
    scale = len(kurikulum_dev.questions) / len(gold.questions)
    with capsys.disabled():
        print(f"\n{'stratum':55} dev  gold  (gold x {scale:.2f})")
        for key in sorted(gold_counts):
            print(f"{' / '.join(key):55} {dev_counts[key]:3}  {gold_counts[key]:4}  ({gold_counts[key] * scale:.1f})")
        print(f"{'total':55} {len(kurikulum_dev.questions):3}  {len(gold.questions):4}")
    assert set(dev_counts) == set(gold_counts)
    for key, count in gold_counts.items():
        assert abs(dev_counts[key] - count * scale) <= 1.5, key


def test_every_curriculum_dev_query_returns_rows_on_the_store(kurikulum_dev, kurikulum_store):
    empty = [q.id for q in kurikulum_dev.questions if not kurikulum_store.query(q.cypher).rows]
    assert empty == []


def test_movies_dev_pairs_are_test_pairs_outside_the_grids_sample(movies_dev, tmp_path, monkeypatch):
    from t2c_lib import config
    from t2c_lib.graph import open_store

    # private stores and gold screens: the user's .cache is shared with other tests, xdist workers and processes
    # (issue 52: this test once failed there with "graph is not loaded" and passed alone)
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    from t2c_lib.study.screen import sample_items
    from t2c_lib.study.steps import refuse_dev_overlap, screened_gold

    params = load_params(ROOT / "params" / "movies.yaml")
    test = load_dataset(params.dataset)
    store = open_store(params.store, test)  # the grid's own store and screen: the sample it draws
    dev_store = open_store(params.store, movies_dev)
    try:
        screen = screened_gold(test, store, params.query_timeout_s)
        sample = sample_items(screen.kept, int(params.limit), test.strata_columns[0], params.sample_seed)
        dev_screen = screened_gold(movies_dev, dev_store, params.query_timeout_s)
    finally:
        store.close()
        dev_store.close()
    assert len(sample) == params.limit
    with (ROOT / "data" / "movies" / DEV_QUESTIONS).open(encoding="utf-8") as handle:
        source_ids = [row["source_id"] for row in csv.DictReader(handle)]  # row order = question order
    by_id = {q.id: q for q in test.questions}
    kept = {q.id for q in screen.kept}
    for source_id, q in zip(source_ids, movies_dev.questions, strict=True):
        source = by_id[source_id]
        assert (source.question, source.cypher, source.strata) == (q.question, q.cypher, q.strata)
        assert source_id in kept  # a screened pair
    assert {q.id for q in sample}.isdisjoint(source_ids)
    assert {q.cypher for q in sample}.isdisjoint(q.cypher for q in movies_dev.questions)
    assert not dev_screen.dropped  # every dev pair serves as ground truth on the store
    refuse_dev_overlap(test, sample)  # the grid's sample passes the guard


def test_a_test_run_refuses_to_sample_a_dev_question(tmp_path):
    from t2c_lib.study.steps import DevOverlap, refuse_dev_overlap

    copy = tmp_path / "kurikulum"
    shutil.copytree(ROOT / "data" / "kurikulum", copy)
    gold = (copy / "ground_truth.csv").read_text(encoding="utf-8").splitlines()
    (copy / DEV_QUESTIONS).write_text("\n".join(gold[:3]) + "\n", encoding="utf-8")
    test = load_dataset(copy)
    with pytest.raises(DevOverlap, match="2 sampled question"):
        refuse_dev_overlap(test, test.questions)
    refuse_dev_overlap(test, test.questions[2:])  # the others pass
