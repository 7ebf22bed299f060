"""What the pipeline calls: `score_question` per generated query, `summarize` per configuration."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from t2c_lib.graph.base import DEFAULT_TIMEOUT_S, GraphStore
from t2c_lib.metrics.columns import column_mean
from t2c_lib.metrics.composite import DEFAULT_WEIGHTS, get_weights, llmetric, llmetric_q
from t2c_lib.metrics.gold import GoldCache
from t2c_lib.metrics.output import (
    ExecutedPair,
    kg_valid,
    kg_valid_chain,
    run_pair,
    wall_refusal,
)
from t2c_lib.metrics.registry import signature
from t2c_lib.metrics.scoring import DEFAULT_SCORING, get_scoring
from t2c_lib.metrics.testsuite import TestSuite
from t2c_lib.records import ValidationResult


@dataclass
class QuestionScores:
    """Every metric of one generated query against its gold query (0-1 each), under one scoring preset."""

    bleu: float
    rouge_l_p: float
    rouge_l_r: float
    rouge_l_f1: float
    jaro_winkler: float
    jaccard_tokens: float
    pass_at_1: float
    jaccard_output: float
    kg_valid_structural: float
    kg_valid_chain: float
    jarou: float
    llmetric_q: float
    error: str | None = None
    weights: str = DEFAULT_WEIGHTS  # the weight set behind llmetric_q
    scoring: str = DEFAULT_SCORING  # the definitions behind every number
    question_id: str = ""
    pass_at_1_ts: float | None = None  # test-suite Pass@1 (None: no perturbed copies were used)
    failed_copies: tuple[str, ...] = ()  # copies a prediction right on the original graph fails (a coincidental match)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


SCORE_NAMES = tuple(f.name for f in fields(QuestionScores) if f.type in ("float", float))
"""The numeric fields, in order: the per-configuration means of `summarize`."""


def text_scores(
    gold_query: str | None, generated_query: str | None, scoring: str = DEFAULT_SCORING
) -> dict[str, float]:
    """All query-text metrics of one pair under a scoring preset, plus JaRou."""
    return get_scoring(scoring).text_scores(gold_query, generated_query)


def llmetric_components(parts: Mapping[str, float], scoring: str) -> dict[str, float]:
    """The components LLMetric weighs: `kg_valid` is the KG-valid the scoring preset names."""
    return {**parts, "kg_valid": parts[get_scoring(scoring).llmetric_kg_valid.value]}


def score_executed(
    gold_query: str,
    generated_query: str | None,
    pair: ExecutedPair,
    validations: Iterable[ValidationResult | Mapping[str, Any]],
    *,
    weights: str = DEFAULT_WEIGHTS,
    scoring: str = DEFAULT_SCORING,
    question_id: str = "",
    suite: TestSuite | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> QuestionScores:
    """Score one generated query from results already run (`run_pair`) under a scoring preset.

    With a `suite`, test-suite Pass@1: right under this preset on the original graph and
    equivalent (t2c's eq rules) on every perturbed copy where the gold answers."""
    get_weights(weights)
    checks = list(validations)
    parts: dict[str, float] = dict(text_scores(gold_query, generated_query, scoring))
    p, j = get_scoring(scoring).output_scores(gold_query, pair.gold.result, pair.generated.result, generated_query)
    parts.update(
        pass_at_1=p, jaccard_output=j, kg_valid_structural=kg_valid(checks), kg_valid_chain=kg_valid_chain(checks)
    )
    pass_ts = None
    failed: tuple[str, ...] = ()
    if suite is not None:
        verdict = suite.check(gold_query, generated_query, timeout_s) if p else None
        pass_ts = 1.0 if verdict is not None and verdict.passed else 0.0
        failed = verdict.failed if verdict is not None else ()
    return QuestionScores(
        **parts,
        llmetric_q=llmetric_q(llmetric_components(parts, scoring), weights),
        error=pair.error,
        weights=weights,
        scoring=scoring,
        question_id=question_id,
        pass_at_1_ts=pass_ts,
        failed_copies=failed,
    )


def score_question(
    gold_query: str,
    generated_query: str | None,
    store: GraphStore,
    validations: Iterable[ValidationResult | Mapping[str, Any]],
    gold_cache: GoldCache | None = None,
    *,
    weights: str = DEFAULT_WEIGHTS,
    scoring: str = DEFAULT_SCORING,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    question_id: str = "",
    suite: TestSuite | None = None,
) -> QuestionScores:
    """Score one generated query: text metrics, execution on `store`, KG-valid, LLMetric-Q.

    With a `suite` of perturbed copies, also test-suite Pass@1: a prediction right on
    `store` must be right on every copy where the gold answers (`metrics/testsuite.py`).
    """
    get_weights(weights)  # fail on an unknown weight set before running anything
    get_scoring(scoring)
    validations = list(validations)
    pair = run_pair(gold_query, generated_query, store, gold_cache, timeout_s, refusal=wall_refusal(validations))
    return score_executed(
        gold_query,
        generated_query,
        pair,
        validations,
        weights=weights,
        scoring=scoring,
        question_id=question_id,
        suite=suite,
        timeout_s=timeout_s,
    )


def summarize(scores: Sequence[QuestionScores], weights: str = DEFAULT_WEIGHTS) -> dict[str, Any]:
    """Per-configuration means of every metric, LLMetric, and the signature naming the settings.

    `llmetric_q` is the mean of LLMetric-Q recomputed under the weight set `weights` (whatever
    weights the per-question scores were made with); `llmetric` applies the set's aggregate
    weights to the means (equal to the `llmetric_q` mean for both shipped weight sets).
    All scores must come from one scoring preset.
    """
    p = get_weights(weights)
    if not scores:
        raise ValueError("no question scores to summarize")
    schemes = sorted({s.scoring for s in scores})
    if len(schemes) != 1:
        raise ValueError(f"question scores from several scoring presets ({', '.join(schemes)}); summarize each apart")
    scoring = schemes[0]
    n = len(scores)
    means = {
        name: column_mean([getattr(s, name) for s in scores], name) for name in SCORE_NAMES if name != "llmetric_q"
    }
    means["llmetric_q"] = column_mean(
        [llmetric_q(llmetric_components(asdict(s), scoring), p.name) for s in scores], "llmetric_q"
    )
    suite = [s for s in scores if s.pass_at_1_ts is not None]
    if suite:  # test-suite accuracy beside Pass@1, and how many original-graph matches were coincidental
        means["pass_at_1_ts"] = column_mean([s.pass_at_1_ts or 0.0 for s in suite], "pass_at_1_ts")
        means["n_coincidental"] = sum(1 for s in suite if s.pass_at_1 and not s.pass_at_1_ts)
    return {
        "n": n,
        **means,
        "llmetric": llmetric(llmetric_components(means, scoring), p.name),
        "n_errors": sum(1 for s in scores if s.error),
        "weights": p.name,
        "scoring": scoring,
        "signature": signature(p.name, scoring),
    }
