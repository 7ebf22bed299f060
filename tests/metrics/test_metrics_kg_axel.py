"""The kg-axel scoring preset: the thesis's three stored test vectors, and its output-Jaccard rules."""

from __future__ import annotations

import pytest

from t2c_lib.graph.base import GraphNode, QueryResult
from t2c_lib.metrics import kg_axel
from t2c_lib.metrics.scoring import SCORING_PRESETS, KgValid, ScoringPreset, get_scoring, register_scoring

# gold | generated -> BLEU, ROUGE-L F1, Jaro-Winkler, token Jaccard, exactly as the thesis stored them
VECTORS = [
    (
        "MATCH (n:MK {nama: 'Aljabar Linear'}) RETURN n.sks",
        "MATCH (m:MK) WHERE m.nama = 'Aljabar Linear' RETURN m.sks",
        9.460044053305668e-155,
        0.7,
        0.8899454343522141,
        0.6363636363636364,
    ),
    (
        "MATCH (m1:MK)-[:PREREQUISITE*2]->(m3:MK {nama: 'Persamaan Differensial'}) RETURN DISTINCT m1.nama",
        "MATCH (m:MK {nama: 'Persamaan Differensial'})-[:PREREQUISITE]->(p:MK) RETURN p",
        0.48703174148057843,
        0.48,
        0.8750931223553251,
        0.5384615384615384,
    ),
    (
        "UNWIND ['Aljabar Linear', 'Statistika'] AS namaMK MATCH (t:topic {MK: namaMK}) "
        "RETURN namaMK, COLLECT(t.deskripsi) AS daftarTopik",
        'MATCH (t:topic)-[:PURSUED_IN]->(m:MK {nama: "Aljabar Linear" OR nama: "Statistika"}) RETURN t.deskripsi',
        0.2089685256289425,
        0.4118,
        0.7270717038639601,
        0.2857142857142857,
    ),
]


@pytest.mark.parametrize(
    "gold, generated, bleu, rouge, jw, jaccard", VECTORS, ids=["property", "prereq-path", "unwind"]
)
def test_thesis_vectors(gold, generated, bleu, rouge, jw, jaccard):
    assert kg_axel.bleu(gold, generated) == pytest.approx(bleu, rel=1e-12)
    assert round(kg_axel.rouge_l_f1(gold, generated), 4) == round(rouge, 4)  # the thesis stored some at 4 decimals
    assert kg_axel.rouge_l_f1(gold, generated) == pytest.approx(rouge, abs=5e-5)
    assert kg_axel.jaro_winkler(gold, generated) == pytest.approx(jw, rel=1e-12)
    assert kg_axel.jaccard_tokens(gold, generated) == pytest.approx(jaccard, rel=1e-12)


def test_the_preset_returns_the_same_numbers():
    gold, generated, bleu, rouge, jw, jaccard = VECTORS[0]
    scores = get_scoring("kg-axel").text_scores(gold, generated)
    assert (scores["bleu"], scores["jaro_winkler"], scores["jaccard_tokens"]) == pytest.approx((bleu, jw, jaccard))
    assert scores["jarou"] == pytest.approx((jw + scores["rouge_l_f1"]) / 2)


def test_forms():
    q = "MATCH (a:MK)-[:P]->(b) WHERE a.x<=3 RETURN b"
    assert kg_axel.spaced(q) == "MATCH ( a : MK ) - [ : P ] -> ( b ) WHERE a . x < =3 RETURN b"
    assert kg_axel.stripped(q) == "MATCH a MK P b WHERE a x =3 RETURN b"
    assert (
        kg_axel.upper_keywords("match (n) return n order by n.x desc, tofloat(1)")
        == "MATCH (n) RETURN n ORDER BY n.x DESC, TOFLOAT(1)"
    )
    assert kg_axel.upper_keywords("matches inner") == "matches inner"  # whole words only


def test_empty_queries():
    assert kg_axel.jaccard_tokens("", None) == 1.0  # two empty token sets
    assert kg_axel.bleu("MATCH (n) RETURN n", "") == 0.0
    assert kg_axel.jaccard_tokens("MATCH (n) RETURN n", "") == 0.0


def result(*rows) -> QueryResult:
    return QueryResult(columns=[f"c{i}" for i in range(len(rows[0]) if rows else 0)], rows=[list(r) for r in rows])


def test_output_jaccard_unordered_aligns_rows_greedily():
    gold = result(("a", 1), ("b", 2), ("c", 3))
    shuffled = result(("c", 3), ("a", 1), ("b", 2))
    assert kg_axel.output_jaccard("MATCH (n) RETURN n", gold, shuffled) == 1.0
    assert get_scoring("kg-axel").pass_at_1("MATCH (n) RETURN n", gold, shuffled) == 1.0


def test_output_jaccard_pairs_by_index_under_order_by():
    gold = result(("a", 1), ("b", 2))
    swapped = result(("b", 2), ("a", 1))
    # {(0,a),(0,1.0),(1,b),(1,2.0)} vs {(0,b),(0,2.0),(1,a),(1,1.0)}: nothing in common
    assert kg_axel.output_jaccard("MATCH (n) RETURN n order by n.x", gold, swapped) == 0.0


def test_output_jaccard_values_not_columns():
    # rows are value sets: column order and names do not matter, a repeated value counts once, ints are floats
    gold = result(("x", 2, 2))
    assert kg_axel.output_jaccard("RETURN 1", gold, result((2.0, "x"))) == 1.0
    # a shorter generated list: the unmatched gold rows' pairs stay in the union
    gold = result(("a",), ("b",), ("c",), ("d",))
    assert kg_axel.output_jaccard("RETURN 1", gold, result(("c",), ("a",))) == pytest.approx(2 / 4)


def test_output_jaccard_nodes_stand_for_their_properties_and_failures_score_zero():
    node = GraphNode(("MK",), {"nama": "Statistika", "sks": 3, "_id": "x"})
    assert kg_axel.row_set([node]) == frozenset({"Statistika", 3.0})
    assert kg_axel.row_set([["a", "b"]]) == frozenset({"['a', 'b']"})  # unhashable values as their str
    assert kg_axel.output_jaccard("RETURN 1", result(), result()) == 1.0
    assert kg_axel.output_jaccard("RETURN 1", result(("a",)), None) == 0.0
    assert kg_axel.output_jaccard("RETURN 1", None, result(("a",))) == 0.0


def test_first_maximum_wins_in_alignment():
    short = [frozenset({"a"})]
    long = [frozenset({"b"}), frozenset({"a", "x"}), frozenset({"a", "y"})]
    assert kg_axel.align(short, long)[0] == frozenset({"a", "x"})


def test_registry_takes_a_third_preset_with_one_registration():
    third = ScoringPreset(
        name="test-third",
        description="a stand-in preset for this test",
        text_scores=get_scoring("t2c").text_scores,
        output_scores=get_scoring("t2c").output_scores,
        llmetric_kg_valid=KgValid.STRUCTURAL,
        settings=("x:1",),
    )
    register_scoring(third)
    try:
        assert get_scoring("test-third") is third
        assert third.signature() == "scoring:test-third|x:1"
        with pytest.raises(ValueError, match="already registered"):
            register_scoring(third)
    finally:
        SCORING_PRESETS.unregister("test-third")
    with pytest.raises(ValueError, match="valid: t2c, kg-axel, cypherbench"):
        get_scoring("test-third")
