"""One question's attempts scored under every scoring preset: `score_attempts` -> `QuestionResult`.

The study's evaluation (`study.evaluation`) loads a cell's attempts, asks this module for each
question's scores and writes them. For one question it gives, typed:

- `presets`: per scoring preset (the headline first), every metric of the *final* query (the
  strategy's chosen attempt: the last, or the vote's winner; with a test suite, test-suite Pass@1
  under the headline) and the preset's Pass@1 of the *first* attempt;
- `attempts`: per attempt, the headline preset's Pass@1 of its query (each distinct query run
  once) and what it changed from the attempt before (`records.revisions`);
- `oracle` (some attempt was right) and `harmed` (some attempt was right, the final one is not);
- `refinements`: what the question's refinements did (`metrics.agentic.refinements`).

Both queries of a pair run once (`scores.run_pair`) and every preset scores those results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from t2c_lib.graph.base import GraphStore
from t2c_lib.metrics.agentic import Refinements, refinements
from t2c_lib.metrics.gold import GoldCache
from t2c_lib.metrics.output import wall_refusal
from t2c_lib.metrics.scores import QuestionScores, run_pair, score_executed
from t2c_lib.metrics.scoring import get_scoring
from t2c_lib.metrics.testsuite import TestSuite
from t2c_lib.records import Attempt, Revision, revisions


@dataclass(frozen=True)
class PresetScores:
    """One scoring preset's scores of a question: every metric of its final query, Pass@1 of its first attempt."""

    final: QuestionScores
    pass_at_1_first: float


@dataclass(frozen=True)
class AttemptScore:
    """One attempt: the headline preset's Pass@1 of its query, and what it changed from the attempt before."""

    attempt: Attempt
    pass_at_1: float
    revision: Revision | None


@dataclass(frozen=True)
class QuestionResult:
    """Every score of one question's attempts (see the module)."""

    question_id: str
    headline: str
    first: Attempt | None
    final: Attempt | None
    presets: dict[str, PresetScores]
    attempts: tuple[AttemptScore, ...]
    refinements: Refinements

    @property
    def final_query(self) -> str:
        return self.final.query if self.final else ""

    @property
    def headline_scores(self) -> QuestionScores:
        return self.presets[self.headline].final

    @property
    def oracle(self) -> float:
        """1.0 when some attempt's query was right (headline preset)."""
        return float(any(a.pass_at_1 >= 1.0 for a in self.attempts))

    @property
    def harmed(self) -> int:
        """1 when some attempt was right and the final query is not (headline preset)."""
        return int(bool(self.oracle) and self.headline_scores.pass_at_1 < 1.0)


def chosen_attempts(group: Sequence[Attempt], final_iteration: int | None) -> tuple[Attempt | None, Attempt | None]:
    """(first, final) of a question's attempts in iteration order; the final is the strategy's chosen one
    (`final_iteration`, 1-based; vote's answer need not be the last sample), else the last."""
    chosen = int(final_iteration or len(group))
    final = group[chosen - 1] if group and 0 < chosen <= len(group) else (group[-1] if group else None)
    return (group[0] if group else None), final


def score_attempts(
    gold_query: str,
    group: Sequence[Attempt],
    final_iteration: int | None,
    store: GraphStore,
    *,
    presets: Sequence[str],
    weights: str,
    gold_cache: GoldCache | None = None,
    timeout_s: float,
    question_id: str = "",
    suite: TestSuite | None = None,
    samples: bool = False,
) -> QuestionResult:
    """Score one question's attempts under every preset (`presets[0]` is the headline; a `suite` serves it only);
    `samples`: the strategy's later attempts are samples, not refinements (`metrics.agentic.is_refinement`)."""
    headline = presets[0]
    first, final = chosen_attempts(group, final_iteration)
    final_query = final.query if final else ""
    final_pair = run_pair(
        gold_query,
        final_query,
        store,
        gold_cache,
        timeout_s,
        refusal=wall_refusal(final.validations) if final else None,
    )
    first_pair = (
        final_pair
        if first is final or first is None  # None: no attempts, and no final either
        else run_pair(gold_query, first.query, store, gold_cache, timeout_s, refusal=wall_refusal(first.validations))
    )
    scored: dict[str, PresetScores] = {}
    for name in presets:
        final_scores = score_executed(
            gold_query,
            final_query,
            final_pair,
            final.validations if final else [],
            weights=weights,
            scoring=name,
            question_id=question_id,
            suite=suite if name == headline else None,
            timeout_s=timeout_s,
        )
        first_query = first.query if first else ""
        p_first = get_scoring(name).pass_at_1(
            gold_query, first_pair.gold.result, first_pair.generated.result, first_query
        )
        scored[name] = PresetScores(final_scores, p_first)
    known = {final.query: scored[headline].final.pass_at_1} if final is not None else {}
    if first is not None and first.query and first.query not in known:
        known[first.query] = scored[headline].pass_at_1_first  # the first attempt's pair has run already
    per_attempt = []
    for attempt, revision in zip(group, revisions(list(group))):
        if attempt.query not in known:
            known[attempt.query] = _pass_at_1(gold_query, attempt, store, gold_cache, headline, timeout_s)
        per_attempt.append(AttemptScore(attempt, known[attempt.query], revision))
    return QuestionResult(
        question_id, headline, first, final, scored, tuple(per_attempt), refinements(list(group), samples)
    )


def _pass_at_1(
    gold_query: str, attempt: Attempt, store: GraphStore, gold_cache: GoldCache | None, scoring: str, timeout_s: float
) -> float:
    """The preset's Pass@1 of one attempt's query (0.0 for an empty one, which is not run)."""
    if not attempt.query:
        return 0.0
    pair = run_pair(gold_query, attempt.query, store, gold_cache, timeout_s, refusal=wall_refusal(attempt.validations))
    return get_scoring(scoring).pass_at_1(gold_query, pair.gold.result, pair.generated.result, attempt.query)
