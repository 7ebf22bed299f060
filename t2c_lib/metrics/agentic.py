"""Agentic metrics of one configuration, from its recorded attempts (`attempts.jsonl`).

Per question the attempts are its loop iterations 1..k; the loop stops at the first
success or after `max_iterations`. Definitions:

- success rate: share of questions whose final attempt is ok;
- first-attempt success rate: share whose attempt 1 is ok (what single-pass would get);
- mean iterations: mean number of attempts per question;
- recovery rate: recovered / initially failed, where initially failed = attempt 1 not
  ok and recovered = initially failed and final attempt ok. None when no question
  failed initially (0/0 is undefined, not 0 or 1);
- error distribution: counts and shares of error types over all failed attempts (every
  attempt that is not ok, first or later); shares are None when no attempt failed; a
  failed attempt without an error type counts as `UNKNOWN`;
- recovery rate per error type of the first attempt, None for types no first attempt had;
- cumulative success: entry k-1 is the share of questions with an ok attempt within
  their first k iterations, k = 1..max_iterations (entry 0 = first-attempt success);
- refinements: every attempt after a question's first, except the samples of strategies
  that sample independently (`vote`: each sample answers the first request afresh, it
  revises nothing). A refinement *repeats* when its query, normalised for whitespace and a
  trailing semicolon, equals the query of an earlier attempt of the same question that
  failed the chain (`records.revisions`, derived from the recorded queries alone, so old
  attempts.jsonl files score the same);
- two repeat rates, never to be read one for the other (`columns.REPEAT_RATES` names and labels them):
  - *repeat rate, all model replies* (`refinement_repeat_rate` = `n_repeated_refinements` /
    `n_refinements`): every refinement the model wrote, the replies the `feedback` loop's repeat
    guard rejected (kind `rejected_repeat`, each a repeat by construction) included. It says how
    often the model answered feedback with a query that had already failed;
  - *repeat rate, accepted refinements* (`accepted_refinement_repeat_rate` = `n_accepted_repeats`
    / `n_accepted_refinements`): only the refinements that stood as the loop's attempt, the
    rejected replies left out. It says how often the loop went on with a failed query (the guard
    let one stand only when its retries ran out).
  Without the repeat guard no reply is rejected and the two are equal; with it the first counts
  every retry the guard paid for and the second what the guard let through. Each is None
  without refinements;
- refinement changes: counts of what each refinement changed from the attempt before it:
  `none` (same normalised query), `edit` (token similarity >= `records.EDIT_SIMILARITY`),
  `new` (otherwise), `no_query` (nothing extracted);
- questions refined only by repeats: questions with refinements, every one a repeat;
- first-error recovered: per error type of the first attempt, how many of those questions
  ended ok (the numerator of recovery by error type; ok = passed the whole chain).

Records are grouped by question in file order. When a question's iteration numbers
start again (a resumed run redid it), only its last run counts. Iterations must then
run 1, 2, ... without gaps and never exceed `max_iterations`; anything else is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from t2c_lib.records import Attempt, AttemptKind, Change, ErrorType, revisions

UNKNOWN_ERROR = "UNKNOWN"
ERROR_NAMES = tuple(e.value for e in ErrorType)
CHANGE_NAMES = tuple(c.value for c in Change)
EXTRA_KINDS = frozenset({AttemptKind.REJECTED_REPEAT, AttemptKind.CORRECTOR})
"""Attempt kinds the `feedback` loop's options add beside its model answers (`agent/revise.py`): a refinement the
repeat guard asked again for (its model call counted; it is a refinement, and a repeat) and a query the schema
corrector made (no model call; not a model refinement). Neither counts towards `max_iterations`."""


def as_attempt(record: Attempt | Mapping[str, Any]) -> Attempt:
    """An `Attempt`, from itself or from its `attempts.jsonl` dict."""
    return record if isinstance(record, Attempt) else Attempt.from_dict(dict(record))


def group_attempts(records: Iterable[Attempt | Mapping[str, Any]]) -> dict[str, list[Attempt]]:
    """Attempts per question id in iteration order, keeping only each question's last run."""
    groups: dict[str, list[Attempt]] = {}
    for rec in records:
        a = as_attempt(rec)
        run = groups.setdefault(a.question_id, [])
        if run and a.iteration <= run[-1].iteration:
            run.clear()  # iterations restarted: a resumed run redid this question
        run.append(a)
    for qid, run in groups.items():
        its = [a.iteration for a in run]
        if its != list(range(1, len(run) + 1)):
            raise ValueError(f"question {qid}: attempt iterations {its} do not run 1, 2, ... without gaps")
    return groups


@dataclass(frozen=True)
class Refinements:
    """What one question's (or a pooled set of questions') refinements did."""

    n_refinements: int = 0  # every refinement the model wrote, rejected repeats included
    n_repeated_refinements: int = 0  # ... of which repeated a failed query
    changes: tuple[tuple[str, int], ...] = tuple((name, 0) for name in CHANGE_NAMES)
    n_accepted_refinements: int = 0  # the refinements that stood (the repeat guard's rejected replies left out)
    n_accepted_repeats: int = 0  # ... of which repeated a failed query

    @property
    def refinement_repeat_rate(self) -> float | None:
        """Repeat rate, all model replies: repeated refinements / refinements, rejected repeats included."""
        return _share(self.n_repeated_refinements, self.n_refinements)

    @property
    def accepted_refinement_repeat_rate(self) -> float | None:
        """Repeat rate, accepted refinements: accepted repeats / accepted refinements (rejected ones left out)."""
        return _share(self.n_accepted_repeats, self.n_accepted_refinements)

    @property
    def only_repeats(self) -> bool:
        """Refined at least once, and every refinement repeated a failed query."""
        return self.n_refinements > 0 and self.n_repeated_refinements == self.n_refinements

    def change_counts(self) -> dict[str, int]:
        return dict(self.changes)

    def __add__(self, other: Refinements) -> Refinements:
        mine, theirs = self.change_counts(), other.change_counts()
        return Refinements(
            n_refinements=self.n_refinements + other.n_refinements,
            n_repeated_refinements=self.n_repeated_refinements + other.n_repeated_refinements,
            changes=tuple((name, mine.get(name, 0) + theirs.get(name, 0)) for name in CHANGE_NAMES),
            n_accepted_refinements=self.n_accepted_refinements + other.n_accepted_refinements,
            n_accepted_repeats=self.n_accepted_repeats + other.n_accepted_repeats,
        )


def is_refinement(attempt: Attempt, samples: bool = False) -> bool:
    """An attempt after the question's first one, by a strategy that refines.

    `samples`: the attempt's strategy declares its later attempts independent samples of the first
    request (`StrategySpec.samples`, vote's), so none is a refinement. The caller reads the declaration
    (`agent.strategies.strategy_spec`): `metrics/` sits below `agent/` and names no strategy.
    """
    return attempt.iteration > 1 and not samples and attempt.kind != AttemptKind.CORRECTOR


def is_accepted_refinement(attempt: Attempt, samples: bool = False) -> bool:
    """A refinement that stood as the loop's attempt: any refinement but one the repeat guard rejected."""
    return is_refinement(attempt, samples) and attempt.kind != AttemptKind.REJECTED_REPEAT


def refinements(run: list[Attempt], samples: bool = False) -> Refinements:
    """What one question's refinements did, from its attempts in iteration order (recorded queries and kinds only);
    `samples` as in `is_refinement`."""
    revised = [(a, r) for a, r in zip(run, revisions(run)) if r is not None and is_refinement(a, samples)]
    accepted = [r for a, r in revised if is_accepted_refinement(a, samples)]
    counts = {name: 0 for name in CHANGE_NAMES}
    for _, r in revised:
        counts[r.change.value] += 1
    return Refinements(
        n_refinements=len(revised),
        n_repeated_refinements=sum(1 for _, r in revised if r.repeats_failed),
        changes=tuple(counts.items()),
        n_accepted_refinements=len(accepted),
        n_accepted_repeats=sum(1 for r in accepted if r.repeats_failed),
    )


def _error_name(a: Attempt) -> str:
    return a.error_type.value if a.error_type is not None else UNKNOWN_ERROR


def _error_counts(attempts: Sequence[Attempt]) -> dict[str, int]:
    """Failed attempts counted by error type, every type named (UNKNOWN_ERROR only when one has none)."""
    names = list(ERROR_NAMES) + ([UNKNOWN_ERROR] if any(a.error_type is None for a in attempts) else [])
    return {name: sum(1 for a in attempts if _error_name(a) == name) for name in names}


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass
class AgenticMetrics:
    """How the loop fared on one configuration's questions (definitions in the module notes)."""

    n_questions: int
    max_iterations: int
    success_rate: float
    first_attempt_success_rate: float
    mean_iterations: float
    n_initially_failed: int
    n_recovered: int
    recovery_rate: float | None
    n_failed_attempts: int
    error_counts: dict[str, int]
    error_distribution: dict[str, float | None]
    first_error_counts: dict[str, int]
    recovery_by_error_type: dict[str, float | None]
    cumulative_success: list[float]
    first_error_recovered: dict[str, int]
    n_refinements: int
    n_repeated_refinements: int
    refinement_repeat_rate: float | None  # repeat rate, all model replies
    n_accepted_refinements: int
    n_accepted_repeats: int
    accepted_refinement_repeat_rate: float | None  # repeat rate, accepted refinements
    refinement_changes: dict[str, int]
    n_refined_questions: int
    n_questions_only_repeats: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def agentic_metrics(
    records: Iterable[Attempt | Mapping[str, Any]], max_iterations: int, samples: bool = False
) -> AgenticMetrics:
    """Agentic metrics over recorded attempts (Attempt objects or attempts.jsonl dicts) of one strategy;
    `samples`: its later attempts are independent samples, not refinements (see `is_refinement`)."""
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    groups = group_attempts(records)
    if not groups:
        raise ValueError("no attempts to compute agentic metrics from")
    for qid, run in groups.items():
        answers = sum(1 for a in run if a.kind not in EXTRA_KINDS)
        if answers > max_iterations:
            raise ValueError(f"question {qid} has {answers} attempts, more than max_iterations={max_iterations}")
    runs = list(groups.values())
    n = len(runs)

    failed = [a for run in runs for a in run if not a.ok]
    error_counts = _error_counts(failed)

    initially_failed = [run for run in runs if not run[0].ok]
    recovered = [run for run in initially_failed if run[-1].ok]
    first_counts = _error_counts([run[0] for run in initially_failed])
    first_recovered = {name: sum(1 for r in recovered if _error_name(r[0]) == name) for name in first_counts}
    per_question = [refinements(run, samples) for run in runs]
    pooled = sum(per_question, Refinements())

    return AgenticMetrics(
        n_questions=n,
        max_iterations=max_iterations,
        success_rate=sum(1 for run in runs if run[-1].ok) / n,
        first_attempt_success_rate=sum(1 for run in runs if run[0].ok) / n,
        mean_iterations=sum(len(run) for run in runs) / n,
        n_initially_failed=len(initially_failed),
        n_recovered=len(recovered),
        recovery_rate=_share(len(recovered), len(initially_failed)),
        n_failed_attempts=len(failed),
        error_counts=error_counts,
        error_distribution={name: _share(c, len(failed)) for name, c in error_counts.items()},
        first_error_counts=first_counts,
        recovery_by_error_type={name: _share(first_recovered[name], c) for name, c in first_counts.items()},
        cumulative_success=[
            sum(1 for run in runs if any(a.ok for a in run[:k])) / n for k in range(1, max_iterations + 1)
        ],
        first_error_recovered=first_recovered,
        n_refinements=pooled.n_refinements,
        n_repeated_refinements=pooled.n_repeated_refinements,
        refinement_repeat_rate=pooled.refinement_repeat_rate,
        n_accepted_refinements=pooled.n_accepted_refinements,
        n_accepted_repeats=pooled.n_accepted_repeats,
        accepted_refinement_repeat_rate=pooled.accepted_refinement_repeat_rate,
        refinement_changes=pooled.change_counts(),
        n_refined_questions=sum(1 for r in per_question if r.n_refinements),
        n_questions_only_repeats=sum(1 for r in per_question if r.only_repeats),
    )
