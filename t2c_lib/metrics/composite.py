"""Composite scores: LLMetric-Q per question and LLMetric per configuration, from named weights.

Weights are a named, recorded setting (a `WeightSet`, chosen by the parameter file's `weights:`;
not to be confused with a *scoring preset*, `scoring.py`, which defines the metrics themselves);
every summary names the weights that produced its numbers (see `registry.signature`). Components are on a 0-1 scale, so are
the composites.

- `kg-axel` (default; the baseline study's definition):
  LLMetric-Q = 0.3 Pass@1 + 0.4 KG-valid + 0.2 Jaccard output + 0.1 JaRou,
  with JaRou = (Jaro-Winkler + ROUGE-L F1) / 2. Per configuration, LLMetric applies the
  same weights to the per-question means of the components.
- `agentic-doc`: LLMetric-Q = 0.4 Pass@1 + 0.2 KG-valid + 0.2 Jaccard output
  + 0.1 Jaro-Winkler + 0.1 ROUGE-L F1; per configuration 0.4 / 0.2 / 0.2 / 0.2 on the
  means of Pass@1, KG-valid, Jaccard output and JaRou.

Both composites are linear, so under both weight sets the per-configuration LLMetric equals the
mean of the per-question LLMetric-Q (for agentic-doc because 0.1 JW + 0.1 ROUGE-L F1 =
0.2 JaRou); the tests check this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from t2c_lib.registry import Registry


@dataclass(frozen=True)
class WeightSet:
    """A named weighting of metric components, per question and per configuration."""

    name: str
    question: Mapping[str, float]
    aggregate: Mapping[str, float]
    description: str


def _frozen(weights: dict[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(weights))


_KG_AXEL = {"pass_at_1": 0.3, "kg_valid": 0.4, "jaccard_output": 0.2, "jarou": 0.1}

WEIGHT_SETS: Registry[WeightSet] = Registry("weight set")
for _weights in (
    WeightSet(
        name="kg-axel",
        question=_frozen(_KG_AXEL),
        aggregate=_frozen(_KG_AXEL),
        description="baseline study: 0.3 Pass@1 + 0.4 KG-valid + 0.2 Jaccard output + 0.1 JaRou; same weights on the means",
    ),
    WeightSet(
        name="agentic-doc",
        question=_frozen(
            {"pass_at_1": 0.4, "kg_valid": 0.2, "jaccard_output": 0.2, "jaro_winkler": 0.1, "rouge_l_f1": 0.1}
        ),
        aggregate=_frozen({"pass_at_1": 0.4, "kg_valid": 0.2, "jaccard_output": 0.2, "jarou": 0.2}),
        description="agentic design doc: 0.4 Pass@1 + 0.2 KG-valid + 0.2 Jaccard output + 0.1 JW + 0.1 ROUGE-L F1; "
        "0.4/0.2/0.2/0.2 on the means of Pass@1, KG-valid, Jaccard output, JaRou",
    ),
):
    WEIGHT_SETS.register(_weights.name, _weights)
DEFAULT_WEIGHTS = "kg-axel"


def get_weights(name: str = DEFAULT_WEIGHTS) -> WeightSet:
    """The weight set of that name; an unknown name fails listing the valid ones."""
    return WEIGHT_SETS.get(name)


def weighted(components: Mapping[str, float], weights: Mapping[str, float], what: str) -> float:
    """Sum of weight * component; a missing component fails naming it."""
    missing = [k for k in weights if k not in components]
    if missing:
        raise KeyError(f"{what} needs component(s) {', '.join(missing)}; got {', '.join(sorted(components))}")
    return float(sum(w * float(components[k]) for k, w in weights.items()))


def llmetric_q(components: Mapping[str, float], weights: str = DEFAULT_WEIGHTS) -> float:
    """LLMetric-Q of one question from its component scores, under a weight set."""
    p = get_weights(weights)
    return weighted(components, p.question, f"LLMetric-Q ({p.name})")


def llmetric(means: Mapping[str, float], weights: str = DEFAULT_WEIGHTS) -> float:
    """LLMetric of one configuration from its per-question component means, under a weight set."""
    p = get_weights(weights)
    return weighted(means, p.aggregate, f"LLMetric ({p.name})")
