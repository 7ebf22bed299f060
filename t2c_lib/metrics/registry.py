"""The metric registry (name -> function, as in sacrebleu) and the signature behind every number.

Functions come in kinds with one call shape each:

- text metrics `(gold_query, generated_query) -> float`;
- execution metrics `(gold: Execution, generated: Execution) -> float`
  (`pass_at_1` is t2c's `output.results_match`, which also takes `ordered`, see `has_order_by`;
  each scoring preset's own Pass@1 is `ScoringPreset.pass_at_1`);
- validation metrics `(validations: list[ValidationResult]) -> float`;
- composites over component scores (`jarou`, `llmetric_q`, `llmetric`).

`signature(preset, scoring)` names every setting that can change a number; summaries carry it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from t2c_lib import __version__
from t2c_lib.metrics import composite, output, text
from t2c_lib.metrics.scoring import DEFAULT_SCORING, get_scoring
from t2c_lib.registry import Registry

TEXT_METRICS: dict[str, Callable[..., float]] = {
    "bleu": text.bleu,
    "rouge_l_p": text.rouge_l_precision,
    "rouge_l_r": text.rouge_l_recall,
    "rouge_l_f1": text.rouge_l_f1,
    "jaro_winkler": text.jaro_winkler,
    "jaccard_tokens": text.jaccard_tokens,
}
EXECUTION_METRICS: dict[str, Callable[..., float]] = {
    "pass_at_1": output.results_match,
    "jaccard_output": output.jaccard_output,
}
VALIDATION_METRICS: dict[str, Callable[..., float]] = {
    "kg_valid_structural": output.kg_valid_structural,
    "kg_valid_chain": output.kg_valid_chain,
}
COMPOSITE_METRICS: dict[str, Callable[..., float]] = {
    "jarou": text.jarou,
    "llmetric_q": composite.llmetric_q,
    "llmetric": composite.llmetric,
}
METRICS: Registry[Callable[..., Any]] = Registry("metric")
for _name, _metric in {**TEXT_METRICS, **EXECUTION_METRICS, **VALIDATION_METRICS, **COMPOSITE_METRICS}.items():
    METRICS.register(_name, _metric)


def get_metric(name: str) -> Callable[..., Any]:
    """The metric function of that name; an unknown name fails listing the known ones."""
    return METRICS.get(name)


def signature(weights: str = composite.DEFAULT_WEIGHTS, scoring: str = DEFAULT_SCORING) -> str:
    """The settings behind a set of numbers, e.g. `t2c-metrics|scoring:t2c|weights:kg-axel|eq:v3|...|pkg:0.1.0`."""
    p = composite.get_weights(weights)
    return "|".join(["t2c-metrics", get_scoring(scoring).signature(), f"weights:{p.name}", f"pkg:{__version__}"])
