"""The loops side by side: one row per loop and dataset, pooled over a published run's configurations (issue 51).

Read from what each published run committed: `analysis/headline.csv` (Pass@1 and KG-valid of
single-pass and the run's feedback loop, k/N per configuration, Holm-adjusted McNemar p),
`analysis/agentic.csv` (chain-invalid first attempts made valid, refinements repeating a failed
query) and `analysis/strategies.csv` (mean model calls per question), and each cell's manifest
(which loop ran, `agent.strategies.recorded_loop`). Single-pass asks the same requests in every
run of a dataset, so it gets one row per dataset, and runs of one dataset whose single-pass
counts differ are refused.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from t2c_lib.agent.names import SINGLE_PASS, canonical_strategy
from t2c_lib.agent.strategies import recorded_loop
from t2c_lib.errors import StudyError, T2CError
from t2c_lib.files.outputs import decode_json

SIGNIFICANT = 0.05
"""A configuration counts as significant when its Holm-adjusted exact McNemar p is below this."""


class LoopSummaryError(StudyError):
    """A published run whose files cannot be set beside the others (missing, damaged, or disagreeing)."""


@dataclass(frozen=True)
class Pooled:
    """A measure's k/N over a run's configurations, and how many configurations beat single-pass after Holm."""

    k: int
    n: int
    significant: int = 0
    configurations: int = 0
    max_significant_p: float = math.nan


@dataclass(frozen=True)
class LoopRow:
    """One loop on one dataset: its run, its pooled figures of merit and what it did."""

    dataset: str
    scoring: str
    loop: str
    run_id: str
    pass_at_1: Pooled
    kg_valid: Pooled
    made_valid: tuple[int, int] | None  # (made valid, chain-invalid first attempts); None for single-pass
    repeats: tuple[int, int] | None  # (refinements repeating a failed query, refinements), all model replies
    calls_per_question: float


def loop_rows(run_dirs: list[Path]) -> list[LoopRow]:
    """Single-pass once per dataset, then each run's feedback loop, in the order the runs are given."""
    rows: list[LoopRow] = []
    baseline: dict[str, LoopRow] = {}
    for run_dir in run_dirs:
        base, loop = _run_rows(run_dir)
        seen = baseline.setdefault(base.dataset, base)
        if (seen.pass_at_1.k, seen.pass_at_1.n, seen.kg_valid.k) != (
            base.pass_at_1.k,
            base.pass_at_1.n,
            base.kg_valid.k,
        ):
            raise LoopSummaryError(
                f"{run_dir.name}: its single-pass counts differ from run {seen.run_id}'s on {base.dataset}; "
                "set beside each other only runs that ask single-pass the same requests"
            )
        if seen is base:
            rows.append(base)
        rows.append(loop)
    return rows


def _run_rows(run_dir: Path) -> tuple[LoopRow, LoopRow]:
    params = _json(run_dir / "manifest.json").get("parameters") or {}
    dataset, scoring = str(params.get("dataset", "unknown")), str(params.get("scoring", "unknown"))
    loops = _loops(run_dir)
    headline = _csv(run_dir / "analysis" / "headline.csv")
    agentic = _csv(run_dir / "analysis" / "agentic.csv")
    calls = {
        canonical_strategy(r["strategy"]): _float(r.get("llm_calls"), run_dir)
        for r in _csv(run_dir / "analysis" / "strategies.csv")
        if r.get("configuration") == "ALL"
    }
    treatment = next((s for s in loops if s != SINGLE_PASS), None)
    if treatment is None or SINGLE_PASS not in loops or treatment not in calls or SINGLE_PASS not in calls:
        raise LoopSummaryError(f"{run_dir}: needs single-pass and a feedback loop with their calls per question")
    common = {"dataset": dataset, "scoring": scoring, "run_id": run_dir.name}
    base = LoopRow(
        loop=SINGLE_PASS,
        pass_at_1=_pooled(headline, "Pass@1", "k_baseline", run_dir, with_tests=False),
        kg_valid=_pooled(headline, "KG-valid", "k_baseline", run_dir, with_tests=False),
        made_valid=None,
        repeats=None,
        calls_per_question=calls[SINGLE_PASS],
        **common,
    )
    loop = LoopRow(
        loop=loops[treatment],
        pass_at_1=_pooled(headline, "Pass@1", "k_strategy", run_dir),
        kg_valid=_pooled(headline, "KG-valid", "k_strategy", run_dir),
        made_valid=(_sum(agentic, "n_recovered", run_dir), _sum(agentic, "n_initially_failed", run_dir)),
        repeats=(_sum(agentic, "n_repeated_refinements", run_dir), _sum(agentic, "n_refinements", run_dir)),
        calls_per_question=calls[treatment],
        **common,
    )
    return base, loop


def _loops(run_dir: Path) -> dict[str, str]:
    """Strategy -> the loop its cells' manifests ran (single-pass first)."""
    found: dict[str, set[str]] = {}
    for path in sorted(run_dir.glob("*/*/manifest.json")):
        try:
            name = recorded_loop(_json(path), str(path)).name
        except T2CError as exc:
            raise LoopSummaryError(str(exc)) from None
        found.setdefault(canonical_strategy(path.parent.parent.name), set()).add(name)
    if any(len(names) != 1 for names in found.values()):
        raise LoopSummaryError(f"{run_dir}: a strategy whose cells ran different loops")
    return {s: next(iter(n)) for s, n in sorted(found.items(), key=lambda kv: kv[0] != SINGLE_PASS)}


def _pooled(rows: list[dict[str, str]], measure: str, k: str, run_dir: Path, with_tests: bool = True) -> Pooled:
    chosen = [r for r in rows if r.get("measure") == measure]
    if not chosen:
        raise LoopSummaryError(f"{run_dir}/analysis/headline.csv: no {measure} rows")
    p = [_float(r.get("p_holm"), run_dir) for r in chosen]
    significant = [v for v in p if v < SIGNIFICANT] if with_tests else []
    return Pooled(
        k=sum(_int(r.get(k), run_dir) for r in chosen),
        n=sum(_int(r.get("n"), run_dir) for r in chosen),
        significant=len(significant),
        configurations=len(chosen),
        max_significant_p=max(significant) if significant else math.nan,
    )


def _sum(rows: list[dict[str, str]], column: str, run_dir: Path) -> int:
    return sum(_int(r.get(column), run_dir) for r in rows)


def _int(value: str | None, run_dir: Path) -> int:
    number = _float(value, run_dir)
    if math.isnan(number) or number != int(number) or number < 0:
        raise LoopSummaryError(f"{run_dir}: {str(value)[:40]!r} is not a count")
    return int(number)


def _float(value: str | None, run_dir: Path) -> float:
    try:
        return float(value) if value not in (None, "") else math.nan
    except ValueError:
        raise LoopSummaryError(f"{run_dir}: {str(value)[:40]!r} is not a number") from None


def _csv(path: Path) -> list[dict[str, str]]:
    if not path.is_file() or path.is_symlink():
        raise LoopSummaryError(f"{path}: missing (a regular file of the published run)")
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise LoopSummaryError(f"{path}: not a readable CSV ({type(exc).__name__})") from None


def read_json_object(path: Path, error: type[StudyError] = LoopSummaryError) -> dict:
    """A published JSON file's object ({} when absent, a link or not an object); unreadable JSON is `error`."""
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        data = decode_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        raise error(f"{path}: not readable JSON") from None
    return data if isinstance(data, dict) else {}


_json = read_json_object
