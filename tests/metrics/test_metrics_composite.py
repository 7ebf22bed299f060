"""LLMetric-Q / LLMetric weight sets, the registry, the signature, and summaries."""

from __future__ import annotations

import math

import pytest

import t2c_lib
from t2c_lib.metrics import composite, registry
from t2c_lib.metrics.scores import SCORE_NAMES, QuestionScores, llmetric_components, summarize

# one question: Pass@1 1, KG-valid 1, Jaccard output 0.5, Jaro-Winkler 0.9, ROUGE-L F1 0.7 -> JaRou 0.8
ONE = {"pass_at_1": 1.0, "kg_valid": 1.0, "jaccard_output": 0.5, "jaro_winkler": 0.9, "rouge_l_f1": 0.7, "jarou": 0.8}


def scores(pass_at_1, kg_valid, jaccard_output, jaro_winkler, rouge_l_f1, error=None) -> QuestionScores:
    """A QuestionScores with the composite parts set and the rest of the text metrics at 0.5."""
    jarou = (jaro_winkler + rouge_l_f1) / 2
    parts = dict(
        pass_at_1=pass_at_1,
        kg_valid=kg_valid,
        jaccard_output=jaccard_output,
        jaro_winkler=jaro_winkler,
        rouge_l_f1=rouge_l_f1,
        jarou=jarou,
    )
    return QuestionScores(
        bleu=0.5,
        rouge_l_p=0.5,
        rouge_l_r=0.5,
        jaccard_tokens=0.5,
        kg_valid_structural=kg_valid,
        kg_valid_chain=kg_valid,
        llmetric_q=composite.llmetric_q(parts),
        error=error,
        **{k: v for k, v in parts.items() if k != "kg_valid"},
    )


def test_kg_axel_question_weights():
    # 0.3*1 + 0.4*1 + 0.2*0.5 + 0.1*0.8
    assert composite.llmetric_q(ONE, "kg-axel") == pytest.approx(0.88)
    assert composite.llmetric_q(ONE) == pytest.approx(0.88)  # the default


def test_agentic_doc_question_weights():
    # 0.4*1 + 0.2*1 + 0.2*0.5 + 0.1*0.9 + 0.1*0.7
    assert composite.llmetric_q(ONE, "agentic-doc") == pytest.approx(0.86)


def test_aggregate_weights_on_means():
    means = {"pass_at_1": 0.5, "kg_valid": 0.75, "jaccard_output": 0.25, "jarou": 0.6}
    assert composite.llmetric(means, "kg-axel") == pytest.approx(0.15 + 0.3 + 0.05 + 0.06)
    assert composite.llmetric(means, "agentic-doc") == pytest.approx(0.2 + 0.15 + 0.05 + 0.12)


@pytest.mark.parametrize("name", sorted(composite.WEIGHT_SETS))
def test_weights_sum_to_one(name):
    p = composite.WEIGHT_SETS[name]
    assert math.fsum(p.question.values()) == pytest.approx(1.0)
    assert math.fsum(p.aggregate.values()) == pytest.approx(1.0)


def test_unknown_weight_set_fails_listing_the_valid_ones():
    with pytest.raises(ValueError, match="unknown weight set 'kg_axel' \\(valid: kg-axel, agentic-doc\\)"):
        composite.get_weights("kg_axel")
    with pytest.raises(ValueError, match="unknown weight set"):
        summarize([scores(1, 1, 1, 1, 1)], weights="thesis")


def test_missing_component_is_named():
    with pytest.raises(KeyError, match="jarou"):
        composite.llmetric_q({"pass_at_1": 1, "kg_valid": 1, "jaccard_output": 1}, "kg-axel")


def test_weight_sets_cannot_be_changed_in_place():
    with pytest.raises(TypeError):
        composite.WEIGHT_SETS["kg-axel"].question["pass_at_1"] = 1.0


QUESTIONS = [
    scores(1, 1, 1.0, 1.0, 1.0),
    scores(0, 1, 0.5, 0.8, 0.6),
    scores(0, 0, 0.0, 0.4, 0.2, error="generated query failed: syntax error"),
    scores(1, 0, 0.25, 0.9, 0.5),
]


def test_summary_means_and_llmetric_kg_axel():
    s = summarize(QUESTIONS)
    assert s["n"] == 4 and s["n_errors"] == 1 and s["weights"] == "kg-axel"
    assert s["pass_at_1"] == pytest.approx(0.5)
    assert s["kg_valid_structural"] == pytest.approx(0.5) and s["kg_valid_chain"] == pytest.approx(0.5)
    assert s["scoring"] == "t2c"
    assert s["jaccard_output"] == pytest.approx(0.4375)
    assert s["jarou"] == pytest.approx((1.0 + 0.7 + 0.3 + 0.7) / 4)
    # 0.3*0.5 + 0.4*0.5 + 0.2*0.4375 + 0.1*0.675
    assert s["llmetric"] == pytest.approx(0.505)
    assert set(SCORE_NAMES) <= set(s)


@pytest.mark.parametrize("name", sorted(composite.WEIGHT_SETS))
def test_configuration_llmetric_is_the_mean_of_question_llmetrics(name):
    s = summarize(QUESTIONS, weights=name)
    assert s["llmetric"] == pytest.approx(s["llmetric_q"])
    per_q = [composite.llmetric_q(llmetric_components(q.to_dict(), "t2c"), name) for q in QUESTIONS]
    assert s["llmetric_q"] == pytest.approx(sum(per_q) / len(per_q))
    assert s["signature"] == registry.signature(name)


def test_summaries_name_their_preset_and_differ_by_it():
    a, b = summarize(QUESTIONS, "kg-axel"), summarize(QUESTIONS, "agentic-doc")
    assert a["llmetric"] != pytest.approx(b["llmetric"])
    assert "weights:kg-axel" in a["signature"] and "weights:agentic-doc" in b["signature"]


def test_summary_of_nothing_fails():
    with pytest.raises(ValueError, match="no question scores"):
        summarize([])


def test_signature_names_every_setting():
    sig = registry.signature()
    assert sig == (
        "t2c-metrics|scoring:t2c|eq:v3|bleu:nltk-sentence-method1-ws|rouge:rougeL-ws"
        f"|jw:textdistance-char|llmetric-kg:structural|weights:kg-axel|pkg:{t2c_lib.__version__}"
    )
    assert registry.signature("kg-axel", "kg-axel") == (
        "t2c-metrics|scoring:kg-axel|out:kg-axel-greedy-rowsets|bleu:nltk-sentence-nosmooth-spaced"
        "|rouge:rougeL-stem-spaced|jw:textdistance-upper-spaced|jaccard:upper-stripped|llmetric-kg:chain"
        f"|weights:kg-axel|pkg:{t2c_lib.__version__}"
    )


def test_llmetric_takes_the_kg_valid_its_scoring_preset_names():
    structural_only = scores(1, 1, 1.0, 1.0, 1.0)
    structural_only.kg_valid_chain = 0.0  # structurally valid, but the chain failed later (e.g. empty result)
    t2c = summarize([structural_only])
    kg = summarize([QuestionScores(**{**structural_only.to_dict(), "scoring": "kg-axel"})])
    assert t2c["llmetric"] == pytest.approx(1.0) and kg["llmetric"] == pytest.approx(0.6)
    with pytest.raises(ValueError, match="several scoring presets"):
        summarize([structural_only, QuestionScores(**{**structural_only.to_dict(), "scoring": "kg-axel"})])


def test_registry_holds_every_metric_by_name():
    for name in (
        "bleu",
        "rouge_l_p",
        "rouge_l_r",
        "rouge_l_f1",
        "jaro_winkler",
        "jaccard_tokens",
        "pass_at_1",
        "jaccard_output",
        "kg_valid_structural",
        "kg_valid_chain",
        "jarou",
        "llmetric_q",
        "llmetric",
    ):
        assert callable(registry.get_metric(name))
    with pytest.raises(ValueError, match="unknown metric 'meteor' \\(valid: bleu"):
        registry.get_metric("meteor")
