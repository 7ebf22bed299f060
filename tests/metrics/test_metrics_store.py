"""Execution metrics on the real embedded store (LadybugDB) with the curriculum graph."""

from __future__ import annotations

import pytest

from t2c_lib.agent import KG_VALID_STEPS, ValidationResult
from t2c_lib.datasets import load_dataset
from t2c_lib.graph import open_store
from t2c_lib.metrics import GoldCache, execute, execution_scores, score_question, summarize
from t2c_lib.metrics.gold import store_slot

ALL_OK = [ValidationResult(step, True) for step in KG_VALID_STEPS]


@pytest.fixture(scope="module")
def ds():
    return load_dataset("kurikulum")


@pytest.fixture(scope="module")
def store(ds, tmp_path_factory):
    s = open_store("ladybug", ds, root=tmp_path_factory.mktemp("metrics-ladybug"))
    yield s
    s.close()


def count(store, where: str) -> int:
    return store.query(f"MATCH (m:MK) WHERE {where} RETURN count(m)").rows[0][0]


@pytest.mark.slow
def test_every_gold_query_scored_against_itself_is_perfect(ds, store, tmp_path):
    cache = GoldCache(ds.hash, tmp_path)
    scores = [score_question(q.cypher, q.cypher, store, ALL_OK, cache, question_id=q.id) for q in ds.questions]
    assert len(scores) == 52
    bad = [
        (s.question_id, s.pass_at_1, s.jaccard_output, s.bleu, s.error)
        for s in scores
        if (s.pass_at_1, s.jaccard_output, s.bleu) != (1.0, 1.0, 1.0)
    ]
    assert bad == []
    summary = summarize(scores)
    assert summary["pass_at_1"] == 1.0 and summary["llmetric"] == pytest.approx(1.0)
    assert len(list(tmp_path.rglob("*.json"))) == len({q.cypher for q in ds.questions})


ALL_CHAIN_OK = [ValidationResult(step, True) for step in (*KG_VALID_STEPS, "execution", "non_empty")]


@pytest.mark.slow
def test_every_gold_query_scored_against_itself_is_perfect_under_kg_axel(ds, store, tmp_path):
    cache = GoldCache(ds.hash, tmp_path)
    scores = [
        score_question(q.cypher, q.cypher, store, ALL_CHAIN_OK, cache, scoring="kg-axel", question_id=q.id)
        for q in ds.questions
    ]
    bad = [
        (s.question_id, s.pass_at_1, s.jaccard_output, s.bleu, s.jaccard_tokens)
        for s in scores
        if (s.pass_at_1, s.jaccard_output, s.bleu, s.jaccard_tokens, s.kg_valid_chain) != (1.0,) * 5
    ]
    assert bad == []
    summary = summarize(scores)
    assert summary["scoring"] == "kg-axel" and summary["llmetric"] == pytest.approx(1.0)
    assert "scoring:kg-axel" in summary["signature"]


def test_the_presets_disagree_where_their_rules_do(store):
    # kg-axel compares row value *sets* by index: a duplicate value inside a row vanishes, eq:v1 keeps it
    gold = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks, m.sks"
    gen = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks"
    t2c = score_question(gold, gen, store, ALL_CHAIN_OK)
    kg = score_question(gold, gen, store, ALL_CHAIN_OK, scoring="kg-axel")
    assert (t2c.pass_at_1, kg.pass_at_1) == (0.0, 1.0)
    # integers and floats are one value to kg-axel (numbers as floats); eq:v1 compares by value too
    both = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks * 1.0"
    assert score_question(gen, both, store, ALL_CHAIN_OK, scoring="kg-axel").pass_at_1 == 1.0


def test_cached_gold_results_equal_fresh_ones(ds, store, tmp_path):
    queries = [q.cypher for q in ds.questions[:10]]
    for q in queries:
        execution_scores(q, q, store, gold_cache=GoldCache(ds.hash, tmp_path))
    reread = GoldCache(ds.hash, tmp_path)  # a new instance: reads the JSON files
    for q in queries:
        hit = reread.get(store_slot(store), q)
        assert hit is not None and hit.rows == store.query(q).rows


def test_permuted_and_renamed_columns_pass(store):
    gold = "MATCH (m:MK) WHERE m.semester = 1 RETURN m.nama, m.sks"
    gen = "MATCH (m:MK) WHERE m.semester = 1 RETURN m.sks AS bobot, m.nama AS mata_kuliah"
    ex = execution_scores(gold, gen, store)
    assert (ex.pass_at_1, ex.jaccard_output, ex.error) == (1.0, 1.0, None)


def test_superset_fails_and_overlaps_by_row_counts(store):
    gold = "MATCH (m:MK) WHERE m.semester = 1 RETURN m.nama"
    gen = "MATCH (m:MK) WHERE m.semester <= 2 RETURN m.nama"
    ex = execution_scores(gold, gen, store)
    n1, n12 = count(store, "m.semester = 1"), count(store, "m.semester <= 2")
    assert 0 < n1 < n12
    assert ex.pass_at_1 == 0.0 and ex.jaccard_output == pytest.approx(n1 / n12)


def test_order_matters_only_when_gold_sorts(store):
    asc = "MATCH (m:MK) WHERE m.semester = 1 RETURN m.nama ORDER BY m.nama"
    desc = "MATCH (m:MK) WHERE m.semester = 1 RETURN m.nama ORDER BY m.nama DESC"
    unsorted = "MATCH (m:MK) WHERE m.semester = 1 RETURN m.nama"
    sorted_vs_reversed = execution_scores(asc, desc, store)
    assert (sorted_vs_reversed.ordered, sorted_vs_reversed.pass_at_1, sorted_vs_reversed.jaccard_output) == (
        True,
        0.0,
        1.0,
    )
    assert execution_scores(unsorted, desc, store).pass_at_1 == 1.0


def test_int_and_double_sums_are_equal(store):
    ex = execution_scores("MATCH (m:MK) RETURN sum(m.sks)", "MATCH (m:MK) RETURN sum(CAST(m.sks AS DOUBLE))", store)
    assert ex.pass_at_1 == 1.0


def test_nodes_equal_when_found_two_ways(store):
    kode = store.query("MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kode").rows[0][0]
    ex = execution_scores(
        "MATCH (m:MK {nama: 'Basis Data'}) RETURN m", f"MATCH (m:MK) WHERE m.kode = '{kode}' RETURN m", store
    )
    assert ex.pass_at_1 == 1.0
    other = execution_scores(
        "MATCH (m:MK {nama: 'Basis Data'}) RETURN m", "MATCH (m:MK {nama: 'Struktur Data'}) RETURN m", store
    )
    assert other.pass_at_1 == 0.0


@pytest.mark.parametrize(
    "generated, kind",
    [
        ("MATCH (m:MK RETURN m.nama", "syntax"),
        ("MATCH (m:Matakuliah) RETURN m.nama", "semantic"),
        ("CREATE (:MK {nama: 'x'})", "unsafe"),
    ],
)
def test_erroring_generated_query_scores_zero(store, generated, kind):
    ex = execution_scores("MATCH (m:MK) RETURN m.nama", generated, store)
    assert (ex.pass_at_1, ex.jaccard_output) == (0.0, 0.0)
    assert ex.error.startswith(f"generated query failed: {kind} error")


def test_timed_out_generated_query_scores_zero(store):
    slow = "MATCH p=(a)-[*1..12]-(b) RETURN count(p)"
    ex = execution_scores("MATCH (m:MK) RETURN count(m)", slow, store, timeout_s=0.5)
    assert (ex.pass_at_1, ex.jaccard_output) == (0.0, 0.0) and "timeout" in ex.error


def test_failing_gold_query_is_reported_and_not_cached(ds, store, tmp_path):
    cache = GoldCache(ds.hash, tmp_path)
    ex = execution_scores("MATCH (m:NoSuchLabel) RETURN m", "MATCH (m:MK) RETURN m", store, gold_cache=cache)
    assert ex.pass_at_1 == 0.0 and ex.error.startswith("gold query failed: semantic error")
    assert cache.get(store_slot(store), "MATCH (m:NoSuchLabel) RETURN m") is None
    assert not list(tmp_path.rglob("*.json"))


def test_empty_generated_query_scores_zero_everywhere(ds, store):
    q = ds.questions[0]
    s = score_question(q.cypher, "", store, [])
    assert s.error == "generated query failed: empty query"
    assert all(
        getattr(s, f) == 0.0
        for f in (
            "bleu",
            "rouge_l_f1",
            "jaro_winkler",
            "jaccard_tokens",
            "pass_at_1",
            "jaccard_output",
            "kg_valid_structural",
            "kg_valid_chain",
            "jarou",
            "llmetric_q",
        )
    )
    assert execute(store, None).error == "empty query"


def test_score_question_combines_parts_under_the_preset(ds, store):
    q = ds.questions[0]  # MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks
    gen = q.cypher.replace("RETURN m.sks", "RETURN m.sks AS sks")
    a = score_question(q.cypher, gen, store, ALL_OK)
    b = score_question(q.cypher, gen, store, ALL_OK, weights="agentic-doc")
    assert a.pass_at_1 == 1.0 and a.kg_valid_structural == 1.0 and a.jaccard_output == 1.0 and a.bleu < 1.0
    assert a.llmetric_q == pytest.approx(0.3 + 0.4 + 0.2 + 0.1 * a.jarou)
    assert b.llmetric_q == pytest.approx(0.4 + 0.2 + 0.2 + 0.1 * b.jaro_winkler + 0.1 * b.rouge_l_f1)
    assert (a.weights, b.weights) == ("kg-axel", "agentic-doc")
    with pytest.raises(ValueError, match="unknown weight set 'nope'"):
        score_question(q.cypher, gen, store, ALL_OK, weights="nope")


def test_gold_results_are_cached_per_engine_fingerprint(ds, store, tmp_path, monkeypatch):
    """A changed dialect rule (or adapter, or engine version) runs a gold query again instead of reading the old answer."""
    from t2c_lib.graph import fingerprint
    from t2c_lib.metrics.output import execute_gold

    cache = GoldCache(ds.hash, tmp_path)
    gold = "MATCH (m:MK) RETURN count(m)"
    first = execute_gold(store, gold, cache)
    slot = store_slot(store)
    assert cache.get(slot, gold).rows == first.result.rows and len(list(tmp_path.rglob("*.json"))) == 1
    real = fingerprint._module_digest
    monkeypatch.setattr(
        fingerprint, "_module_digest", lambda name: "edited" if name.endswith("dialect") else real(name)
    )
    assert fingerprint.engine_fingerprint(store) != slot.split("-", 1)[1]
    assert execute_gold(store, gold, GoldCache(ds.hash, tmp_path)).result.rows == first.result.rows
    assert len(list(tmp_path.rglob("*.json"))) == 2  # stored again under the new fingerprint
