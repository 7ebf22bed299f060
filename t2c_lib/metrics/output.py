"""Execution metrics: Pass@1 and Jaccard output from running both queries, and KG-valid.

Running a query (`execute`, `execute_gold`) is kept apart from judging results
(`results_match`, `jaccard_output`, which are pure, over `Execution`s; the rules are in
`equivalence.py`; a preset's Pass@1 is `ScoringPreset.pass_at_1`). Both queries run on the
same store through `GraphStore.query`, which is read-only and bounded by `timeout_s`. A
query that errors or times out scores 0 on both metrics; so does every generated query when
the gold query itself fails (the `error` then says so). `StoreUnavailable` is not a query's fault and propagates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from t2c_lib.graph.base import (
    DEFAULT_TIMEOUT_S,
    GraphStore,
    QueryError,
    QueryResult,
    QueryTimeout,
    StoreError,
    StoreUnavailable,
)
from t2c_lib.metrics.equivalence import Ordering, ordering, results_equivalent, rows_jaccard
from t2c_lib.metrics.gold import GoldCache, store_slot
from t2c_lib.metrics.scoring import DEFAULT_SCORING, get_scoring
from t2c_lib.records import KG_VALID_STEPS, ErrorType, ValidationResult

CHAIN_STEPS = (*KG_VALID_STEPS, "execution", "non_empty")
"""Validator names that must all pass for KG-valid chain (the whole chain of `validation/chain.py`)."""


@dataclass(frozen=True)
class Execution:
    """The outcome of running one query: a result, or the reason there is none."""

    result: QueryResult | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None


def execute(store: GraphStore, query: str | None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Execution:
    """Run a query read-only with a time limit; failures become an `Execution` with an error."""
    if not query or not query.strip():
        return Execution(error="empty query")
    try:
        return Execution(result=store.query(query, timeout_s=timeout_s))
    except StoreUnavailable:
        raise
    except QueryTimeout as e:
        return Execution(error=f"timeout after {timeout_s:g}s: {e}")
    except QueryError as e:
        return Execution(error=f"{e.kind} error: {e}")
    except StoreError as e:
        return Execution(error=f"store error: {e}")


WALL_ERRORS = (ErrorType.UNSAFE_QUERY, ErrorType.RESOURCE_LIMIT)
"""Error types of the run's walls: a query they refused is never executed again when it is scored."""


def wall_refusal(validations: Iterable[ValidationResult | Mapping[str, Any]]) -> str | None:
    """Why the run's walls refused this attempt's query ("guard: UNSAFE_QUERY"), or None when they let it through."""
    for v in validations:
        if not isinstance(v, ValidationResult):
            v = ValidationResult.from_dict(dict(v))
        if not v.ok and v.error_type in WALL_ERRORS:
            return f"{v.validator}: {v.error_type.value}"
    return None


def refused_execution(refusal: str) -> Execution:
    """The Execution of a query the run's walls refused: an error, from the record, with nothing run."""
    return Execution(error=f"refused by the read-only walls during the run ({refusal}); not executed")


def execute_gold(
    store: GraphStore, query: str, cache: GoldCache | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> Execution:
    """Run a gold query, or take its result from the cache (successful results are cached).

    Cached under the store's name and `engine_fingerprint` (adapter code, dialect rules,
    engine version): a changed rewrite rule runs the gold query again.
    """
    if cache is not None and query:
        slot = store_slot(store)
        hit = cache.get(slot, query)
        if hit is not None:
            return Execution(result=hit)
    run = execute(store, query, timeout_s)
    if cache is not None and query and run.result is not None:
        cache.put(slot, query, run.result)
    return run


def results_match(gold: Execution, generated: Execution, ordered: bool | Ordering = False) -> float:
    """1.0 when both ran and their results are equivalent (eq:v3; `ordered` as in `results_equivalent`), else 0.0.

    t2c's rule over two runs with the ordering given; the `t2c` preset's Pass@1 (`ScoringPreset.pass_at_1`)
    is this rule with the ordering read from the gold query.
    """
    if gold.result is None or generated.result is None:
        return 0.0
    return 1.0 if results_equivalent(gold.result, generated.result, ordered=ordered) else 0.0


def jaccard_output(gold: Execution, generated: Execution) -> float:
    """Row-set overlap of the two results; 0.0 when either query failed."""
    if gold.result is None or generated.result is None:
        return 0.0
    return rows_jaccard(gold.result, generated.result)


def _verdicts(validations: Iterable[ValidationResult | Mapping[str, Any]]) -> dict[str, list[bool]]:
    verdicts: dict[str, list[bool]] = {}
    for v in validations:
        if not isinstance(v, ValidationResult):
            v = ValidationResult.from_dict(dict(v))
        verdicts.setdefault(v.validator, []).append(v.ok)
    return verdicts


def _passed(verdicts: dict[str, list[bool]], steps: tuple[str, ...]) -> float:
    return 1.0 if all(verdicts.get(step) and all(verdicts[step]) for step in steps) else 0.0


def kg_valid(validations: Iterable[ValidationResult | Mapping[str, Any]]) -> float:
    """KG-valid structural: 1.0 when every KG-validity step (guard, syntax, schema, properties) ran and passed.

    CyVer's definition: syntax valid, schema score 1, properties score 1 or not
    applicable; a properties validator with nothing to check reports ok. A step that
    did not run (the chain stopped earlier) counts as failed. Same rule as
    `Attempt.kg_valid`, over a bare list of verdicts (objects or attempts.jsonl dicts).
    """
    return _passed(_verdicts(validations), KG_VALID_STEPS)


kg_valid_structural = kg_valid


def kg_valid_chain(validations: Iterable[ValidationResult | Mapping[str, Any]]) -> float:
    """KG-valid chain (the thesis's run-level KG-valid): every step ran and passed, execution and non-empty too."""
    verdicts = _verdicts(validations)
    return _passed(verdicts, CHAIN_STEPS) if all(all(v) for v in verdicts.values()) else 0.0


@dataclass(frozen=True)
class ExecutedPair:
    """Both queries run once on a store, so several presets can score the same results."""

    gold: Execution
    generated: Execution
    error: str | None


def run_pair(
    gold_query: str,
    generated_query: str | None,
    store: GraphStore,
    gold_cache: GoldCache | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    refusal: str | None = None,
) -> ExecutedPair:
    """Run the gold query (cached) and, when it succeeded, the generated one.

    `refusal` (from `wall_refusal` of the attempt's record): the run's walls refused the
    generated query, so it is scored as failed without being executed again."""
    gold = execute_gold(store, gold_query, gold_cache, timeout_s)
    if gold.error is not None:
        return ExecutedPair(gold, Execution(error="not run"), f"gold query failed: {gold.error}")
    generated = refused_execution(refusal) if refusal else execute(store, generated_query, timeout_s)
    error = f"generated query failed: {generated.error}" if generated.error is not None else None
    return ExecutedPair(gold, generated, error)


@dataclass(frozen=True)
class ExecutionScores:
    """Pass@1 and Jaccard output of one generated query, and what went wrong if anything."""

    pass_at_1: float
    jaccard_output: float
    ordered: bool
    error: str | None = None


def execution_scores(
    gold_query: str,
    generated_query: str | None,
    store: GraphStore,
    *,
    gold_cache: GoldCache | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    scoring: str = DEFAULT_SCORING,
) -> ExecutionScores:
    """Run gold (cached) and generated queries on one store and score the generated one under a scoring preset
    (the settings by keyword: a cache passed where a timeout was meant fails at the call, not in the numbers)."""
    preset = get_scoring(scoring)
    ordered = ordering(gold_query) is not None
    pair = run_pair(gold_query, generated_query, store, gold_cache, timeout_s)
    if pair.gold.error is not None:  # nothing to compare against: the generated query was not run
        return ExecutionScores(0.0, 0.0, ordered, pair.error)
    p, j = preset.output_scores(gold_query, pair.gold.result, pair.generated.result, generated_query)
    return ExecutionScores(p, j, ordered, pair.error)
