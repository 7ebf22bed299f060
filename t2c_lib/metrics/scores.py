"""What the pipeline calls: `score_question` per generated query, `summarize` per configuration."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from t2c_lib.agent.types import ValidationResult
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S, GraphStore
from t2c_lib.metrics import text
from t2c_lib.metrics.composite import DEFAULT_PRESET, get_preset, llmetric, llmetric_q
from t2c_lib.metrics.gold import GoldCache
from t2c_lib.metrics.output import execution_scores, kg_valid
from t2c_lib.metrics.registry import signature


@dataclass
class QuestionScores:
    """Every metric of one generated query against its gold query (0-1 each)."""

    bleu: float
    rouge_l_p: float
    rouge_l_r: float
    rouge_l_f1: float
    jaro_winkler: float
    jaccard_tokens: float
    pass_at_1: float
    jaccard_output: float
    kg_valid: float
    jarou: float
    llmetric_q: float
    error: str | None = None
    weights: str = DEFAULT_PRESET  # the preset behind llmetric_q
    question_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


SCORE_NAMES = (
    "bleu", "rouge_l_p", "rouge_l_r", "rouge_l_f1", "jaro_winkler", "jaccard_tokens",
    "pass_at_1", "jaccard_output", "kg_valid", "jarou", "llmetric_q",
)
"""The numeric fields, in order: the per-configuration means of `summarize`."""


def text_scores(gold_query: str | None, generated_query: str | None) -> dict[str, float]:
    """All query-text metrics of one pair, plus JaRou."""
    r = text.rouge_l(gold_query, generated_query)
    jw = text.jaro_winkler(gold_query, generated_query)
    return {
        "bleu": text.bleu(gold_query, generated_query),
        "rouge_l_p": r.precision,
        "rouge_l_r": r.recall,
        "rouge_l_f1": r.f1,
        "jaro_winkler": jw,
        "jaccard_tokens": text.jaccard_tokens(gold_query, generated_query),
        "jarou": text.jarou(jw, r.f1),
    }


def score_question(
    gold_query: str,
    generated_query: str | None,
    store: GraphStore,
    validations: Iterable[ValidationResult | Mapping[str, Any]],
    gold_cache: GoldCache | None = None,
    *,
    preset: str = DEFAULT_PRESET,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    question_id: str = "",
) -> QuestionScores:
    """Score one generated query: text metrics, execution on `store`, KG-valid, LLMetric-Q."""
    get_preset(preset)  # fail on an unknown preset before running anything
    parts: dict[str, float] = text_scores(gold_query, generated_query)
    ex = execution_scores(gold_query, generated_query, store, gold_cache, timeout_s)
    parts.update(pass_at_1=ex.pass_at_1, jaccard_output=ex.jaccard_output, kg_valid=kg_valid(validations))
    return QuestionScores(
        **parts, llmetric_q=llmetric_q(parts, preset), error=ex.error, weights=preset, question_id=question_id
    )


def summarize(scores: Sequence[QuestionScores], preset: str = DEFAULT_PRESET) -> dict[str, Any]:
    """Per-configuration means of every metric, LLMetric, and the signature naming the settings.

    `llmetric_q` is the mean of LLMetric-Q recomputed under `preset` (whatever preset
    the per-question scores were made with); `llmetric` applies the preset's aggregate
    weights to the means (equal to the `llmetric_q` mean for both shipped presets).
    """
    p = get_preset(preset)
    if not scores:
        raise ValueError("no question scores to summarize")
    n = len(scores)
    means = {name: math.fsum(getattr(s, name) for s in scores) / n for name in SCORE_NAMES if name != "llmetric_q"}
    means["llmetric_q"] = math.fsum(llmetric_q(asdict(s), p.name) for s in scores) / n
    return {
        "n": n,
        **means,
        "llmetric": llmetric(means, p.name),
        "n_errors": sum(1 for s in scores if s.error),
        "weights": p.name,
        "signature": signature(p.name),
    }
