"""CypherBench's execution accuracy beside t2c's rules, on hand-judged fixtures (cypherbench.yaml)."""

from __future__ import annotations

import pytest

from t2c_lib.graph.base import GraphNode, GraphPath, QueryResult
from t2c_lib.metrics import cypherbench as cb
from t2c_lib.metrics.equivalence import ordering
from t2c_lib.metrics.gold import decode_result
from t2c_lib.metrics.output import Execution, results_match
from tests.helpers import load_fixture

CASES = load_fixture("cypherbench.yaml")["cases"]


def result(side: dict) -> QueryResult | None:
    return None if "error" in side else decode_result(side)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_cypherbench_ex(case):
    got = cb.cypherbench_pass_at_1(
        case["gold_query"], case["generated_query"], result(case["gold"]), result(case["generated"])
    )
    assert got == case["cypherbench"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_cypherbench_score_over_executions(case):
    def run(side):
        return Execution(error=side["error"]) if "error" in side else Execution(result=decode_result(side))

    got = cb.cypherbench_score(case["gold_query"], case["generated_query"], run(case["gold"]), run(case["generated"]))
    assert got == case["cypherbench"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_t2c_verdict_on_the_same_case(case):
    gold, gen = Execution(result=result(case["gold"])), Execution(result=result(case["generated"]))
    assert results_match(gold, gen, ordering(case["gold_query"]) or False) == case["t2c"]


def test_fixtures_show_every_documented_difference():
    differ = [c for c in CASES if c["cypherbench"] != c["t2c"]]
    names = " | ".join(c["name"] for c in differ)
    for needle in (
        "text shortcut",
        "WITH",
        "string literal",
        "two lines",
        "tied",
        "float noise",
        "boolean",
        "NULL-valued",
        "node against",
        "labels",
        "path",
    ):
        assert needle in names, needle


def test_order_matters_reads_the_raw_text():
    assert cb.order_matters("MATCH (m) // order by\nRETURN m")
    assert not cb.order_matters("MATCH (m) RETURN m ORDER  BY m.x")


def test_hashable_forms():
    node = GraphNode(("Movie",), {"_key": "k", "title": "X", "tags": ["b", "a"]})
    assert cb.hashable(node) == (("tags", ("a", "b")), ("title", "X"))
    with pytest.raises(cb.Unhashable):
        cb.hashable(GraphPath((node,), ()))
    with pytest.raises(cb.Unhashable):
        cb.hashable([1, None])


def test_wide_results_prune_column_assignments():
    # nine interchangeable-looking columns: the pruning must not try 9! assignments blindly
    gold = [tuple(range(i, i + 9)) for i in range(50)]
    generated = [tuple(reversed(r)) for r in gold]
    assert cb.rows_equal(gold, generated, ordered=False)
    assert not cb.rows_equal(gold, [r[:-1] + (-1,) for r in generated], ordered=False)


def test_cypherbench_is_a_registered_scoring_preset():
    """`scoring: cypherbench` and every evaluation's `__cypherbench` columns use CypherBench's EX as Pass@1."""
    from t2c_lib.metrics.columns import col
    from t2c_lib.metrics.scoring import KgValid, get_scoring, scoring_names

    preset = get_scoring("cypherbench")
    assert "cypherbench" in scoring_names() and col("pass_at_1_final", preset.name) == "pass_at_1_final__cypherbench"
    assert preset.signature().startswith(f"scoring:cypherbench|{cb.CYPHERBENCH_VERSION}|")
    assert preset.llmetric_kg_valid is KgValid.STRUCTURAL
    for case in CASES:
        gold, generated = result(case["gold"]), result(case["generated"])
        p, j = preset.output_scores(case["gold_query"], gold, generated, case["generated_query"])
        assert p == case["cypherbench"], case["name"]
        assert 0.0 <= j <= 1.0


def test_the_cypherbench_preset_scores_pairs_with_a_store(tiny_store):
    from t2c_lib.metrics.scores import score_question

    gold = "MATCH (p:Person) RETURN p.name ORDER BY p.name"
    same = score_question(gold, "MATCH (x:Person) RETURN x.name AS n ORDER BY n", tiny_store, [], scoring="cypherbench")
    reversed_ = score_question(gold, gold + " DESC", tiny_store, [], scoring="cypherbench")
    assert same.pass_at_1 == 1.0 and reversed_.pass_at_1 == 0.0  # `order by` in the gold: row order matters
