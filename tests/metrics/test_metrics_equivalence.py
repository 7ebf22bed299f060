"""Result equivalence, Pass@1 and Jaccard output on hand-judged fixtures (equivalence.yaml)."""

from __future__ import annotations

import pytest

from t2c_lib.graph.base import GraphNode, QueryResult
from t2c_lib.metrics import equivalence as eq
from t2c_lib.metrics.gold import GoldCache, decode_result, decode_value, encode_result, encode_value
from t2c_lib.metrics.output import Execution, execute, jaccard_output, results_match
from tests.helpers import load_fixture

FIXTURE = load_fixture("equivalence.yaml")
CASES = FIXTURE["cases"]
ORDER_CASES = FIXTURE["order_by"]


def as_execution(side: dict) -> Execution:
    if "error" in side:
        return Execution(error=side["error"])
    return Execution(result=decode_result(side))


def is_ordered(case: dict) -> bool | eq.Ordering:
    """The gold query's ordering (ties free, eq:v3) when given, else strict order if `ordered: true`."""
    if "gold_query" in case:
        return eq.ordering(case["gold_query"]) or False
    return bool(case.get("ordered", False))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_results_match(case):
    gold, gen = as_execution(case["gold"]), as_execution(case["generated"])
    assert results_match(gold, gen, ordered=is_ordered(case)) == case["pass_at_1"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_jaccard_output(case):
    gold, gen = as_execution(case["gold"]), as_execution(case["generated"])
    assert jaccard_output(gold, gen) == pytest.approx(case["jaccard_output"], abs=1e-12)


@pytest.mark.parametrize(
    "case", [c for c in CASES if "error" not in c["gold"] and "error" not in c["generated"]], ids=lambda c: c["name"]
)
def test_equivalence_is_symmetric_without_order(case):
    if is_ordered(case):
        pytest.skip("ordered comparison follows the gold query")
    gold, gen = decode_result(case["gold"]), decode_result(case["generated"])
    assert eq.results_equivalent(gold, gen) == eq.results_equivalent(gen, gold)
    assert eq.rows_jaccard(gold, gen) == pytest.approx(eq.rows_jaccard(gen, gold))


def test_fixture_covers_the_required_situations():
    names = " | ".join(c["name"] for c in CASES)
    for needle in (
        "permuted columns",
        "renamed columns",
        "duplicate",
        "ORDER BY present",
        "ORDER BY absent",
        "NULL",
        "tolerance",
        "nested",
        "nodes",
        "both empty",
        "errored",
        "tie",
        "LIMIT cuts",
    ):
        assert needle in names, needle


@pytest.mark.parametrize("case", ORDER_CASES, ids=lambda c: repr(c["query"]))
def test_has_order_by(case):
    assert eq.has_order_by(case["query"]) is case["ordered"]


def test_ordered_comparison_is_stricter_than_bag_comparison():
    gold = QueryResult(["x"], [["A"], ["B"]])
    gen = QueryResult(["x"], [["B"], ["A"]])
    assert eq.results_equivalent(gold, gen, ordered=False)
    assert not eq.results_equivalent(gold, gen, ordered=True)


def test_normalize_drops_internal_and_null_properties_of_nodes():
    a = GraphNode(("MK",), {"_key": "1", "nama": "X", "jalur": None})
    b = GraphNode(("MK",), {"nama": "X"})
    assert eq.normalize(a) == eq.normalize(b)


def test_tolerant_matching_pairs_leftover_floats_optimally():
    # 1.0000005 is close to both 1.0 and 1.000001; a greedy pairing could strand 1.000001
    a = [("num", 1.0000005), ("num", 1.0)]
    b = [("num", 1.0000001), ("num", 1.0000014)]
    assert eq.match_count(a, b) == 2
    assert eq.match_count([("num", 1.0)], [("num", 1.01)]) == 0


def test_mapping_budget_bounds_the_search():
    assert sum(1 for _ in eq._mappings([[0, 1, 2]] * 3)) == 6
    assert sum(1 for _ in eq._mappings([list(range(9))] * 9)) == eq.MAX_MAPPINGS


def test_empty_generated_query_is_an_error_without_touching_the_store():
    run = execute(None, "   ")  # no store is needed: nothing runs
    assert run.error == "empty query" and not run.ok
    gold = Execution(result=QueryResult(["a"], []))
    assert results_match(gold, run) == 0.0 and jaccard_output(gold, run) == 0.0


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_gold_cache_codec_round_trips_fixture_values(case):
    for side in (case["gold"], case["generated"]):
        if "error" in side:
            continue
        result = decode_result(side)
        again = decode_result(encode_result(result))
        assert again.columns == result.columns and again.rows == result.rows


def test_codec_rejects_unknown_tags():
    with pytest.raises(ValueError, match=r"\$what"):
        decode_value({"$what": 1})
    assert encode_value((1, 2)) == [1, 2]


def test_gold_cache_on_disk_survives_a_new_instance(tmp_path):
    result = QueryResult(["m", "n"], [[GraphNode(("MK",), {"nama": "X", "sks": 3}), 2.5], [None, [1, {"a": "b"}]]])
    GoldCache("abc123", tmp_path).put("ladybug", "MATCH (m) RETURN m", result)
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1 and files[0].parent.name == "ladybug" and files[0].parent.parent.name == "abc123"
    fresh = GoldCache("abc123", tmp_path)
    hit = fresh.get("ladybug", "MATCH (m) RETURN m")
    assert hit is not None and hit.rows == result.rows and hit.columns == result.columns
    assert fresh.get("neo4j", "MATCH (m) RETURN m") is None
    assert fresh.get("ladybug", "MATCH (m) RETURN m.nama") is None
    assert GoldCache("other-dataset", tmp_path).get("ladybug", "MATCH (m) RETURN m") is None


def test_tolerant_matching_only_pairs_values_of_the_same_shape():
    a = [("x", ("num", 1.0)), ("y", ("num", 2.0))]
    b = [("y", ("num", 1.0000001)), ("x", ("num", 2.0000001))]
    assert eq.match_count(a, b) == 0
    assert eq.match_count(a, list(reversed(b))) == 0
    assert eq.match_count(a, [("x", ("num", 1.0000001)), ("y", ("num", 2.0000001))]) == 2


def test_float_noise_in_large_results_is_matched():
    # sums computed in another order differ in the last bits; 5000 rows, columns permuted
    gold = QueryResult(["nama", "total", "n"], [[f"mk{i}", i * 0.1, i] for i in range(5000)])
    gen = QueryResult(["n", "total", "nama"], [[i, i * 0.05 + i * 0.05, f"mk{i}"] for i in range(5000)])
    assert eq.results_equivalent(gold, gen)
    assert eq.rows_jaccard(gold, gen) == 1.0


def test_tolerance_beyond_float_noise_is_matched_pairwise():
    gold = QueryResult(["k", "v"], [[f"s{i}", i / 7] for i in range(300)])
    gen = QueryResult(["k", "v"], [[f"s{i}", i / 7 + 3e-7] for i in range(300)])
    assert eq.results_equivalent(gold, gen)
    off = QueryResult(["k", "v"], [[f"s{i}", i / 7 + 3e-6] for i in range(300)])
    assert not eq.results_equivalent(gold, off)


@pytest.mark.parametrize("case", FIXTURE["ordering"], ids=lambda c: c["query"])
def test_ordering_finds_the_sort_key_columns(case):
    got = eq.ordering(case["query"])
    if case["keys"] == "none":
        assert got is None
        return
    assert got is not None
    assert got.key_columns == (None if case["keys"] is None else tuple(case["keys"]))
    assert got.limited is case.get("limited", got.limited) and got.skipped is case.get("skipped", False)
    if "limit" in case:
        assert got.limit == case["limit"]


def test_tie_groups_split_gold_rows_on_the_sort_keys():
    rows = [eq.row_key(r) for r in [["A", 1], ["B", 2], ["C", 2], ["D", 3], ["E", 3]]]
    groups = eq.tie_groups(rows, eq.Ordering((1,), limited=True))
    assert [(g.start, g.end, g.cut) for g in groups] == [(0, 1, False), (1, 3, False), (3, 5, True)]


def test_a_limit_the_gold_rows_do_not_reach_cuts_no_tie_group():
    rows = [eq.row_key(r) for r in [["A", 1], ["B", 2], ["C", 2], ["D", 3], ["E", 3]]]
    cut = [g.cut for g in eq.tie_groups(rows, eq.Ordering((1,), limited=True, limit=5))]
    whole = [g.cut for g in eq.tie_groups(rows, eq.Ordering((1,), limited=True, limit=6))]
    assert cut == [False, False, True] and whole == [False, False, False]
