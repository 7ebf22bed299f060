"""Evaluation metrics: query text, execution results, composites, agentic behaviour.

Every setting behind a number is named by `signature()`; see `registry.py`. Which
definitions a number follows is its scoring preset (`t2c`, `kg-axel`; `scoring.py`).
"""

from t2c_lib.metrics.agentic import AgenticMetrics, agentic_metrics, group_attempts
from t2c_lib.metrics.composite import DEFAULT_WEIGHTS, WEIGHT_SETS, WeightSet, get_weights, llmetric, llmetric_q
from t2c_lib.metrics.equivalence import (
    EQUIVALENCE_VERSION,
    Ordering,
    has_order_by,
    ordering,
    results_equivalent,
    rows_jaccard,
)
from t2c_lib.metrics.gold import GoldCache
from t2c_lib.metrics.output import (
    Execution,
    execute,
    execute_gold,
    execution_scores,
    jaccard_output,
    kg_valid,
    kg_valid_chain,
    results_match,
)
from t2c_lib.metrics.registry import METRICS, get_metric, signature
from t2c_lib.metrics.scores import QuestionScores, score_question, summarize, text_scores
from t2c_lib.metrics.scoring import (
    DEFAULT_SCORING,
    SCORING_PRESETS,
    KgValid,
    ScoringPreset,
    get_scoring,
    register_scoring,
)

__all__ = [
    "AgenticMetrics",
    "agentic_metrics",
    "group_attempts",
    "DEFAULT_WEIGHTS",
    "WEIGHT_SETS",
    "WeightSet",
    "get_weights",
    "llmetric",
    "llmetric_q",
    "EQUIVALENCE_VERSION",
    "Ordering",
    "has_order_by",
    "ordering",
    "results_equivalent",
    "rows_jaccard",
    "GoldCache",
    "Execution",
    "execute",
    "execute_gold",
    "execution_scores",
    "jaccard_output",
    "kg_valid",
    "kg_valid_chain",
    "results_match",
    "DEFAULT_SCORING",
    "SCORING_PRESETS",
    "KgValid",
    "ScoringPreset",
    "get_scoring",
    "register_scoring",
    "METRICS",
    "get_metric",
    "signature",
    "QuestionScores",
    "score_question",
    "summarize",
    "text_scores",
]
