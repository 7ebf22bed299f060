"""Score one cell of a run: per-question metrics (CSV) and a configuration summary (JSON).

Reads `attempts.jsonl` / `questions.jsonl` written by the runner, scores each question's
final query (the strategy's chosen attempt: the last one, or the vote's winner) against
its gold query on the same store, and writes `metrics.csv` and `summary.json` beside them.
Every attempt's result correctness goes to `attempt_scores.csv` (first-attempt Pass@1,
oracle, harm, error transitions and the validator audit are computed from it), with what its
query changed from the attempt before and whether it repeats an already failed query
(derived from the recorded queries, so cells run before attempts carried them score alike). The
summary and `metrics.csv` carry both repeat rates (`metrics.columns.REPEAT_RATES`: all model
replies, and accepted refinements, the repeat guard's rejected replies left out). Only
deterministic values are written (no wall times), so the same attempts give the same bytes.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from t2c_lib.agent.strategies import loop_name, recorded_loop, strategy_spec
from t2c_lib.datasets import Dataset, GroundTruthItem
from t2c_lib.errors import StudyError
from t2c_lib.files.outputs import csv_cell
from t2c_lib.graph.base import GraphStore
from t2c_lib.metrics import GoldCache, agentic_metrics, columns, summarize
from t2c_lib.metrics.output import kg_valid_chain, kg_valid_structural
from t2c_lib.metrics.question import AttemptScore, QuestionResult, score_attempts
from t2c_lib.metrics.scoring import DEFAULT_SCORING, get_scoring, scoring_names
from t2c_lib.metrics.testsuite import TestSuite
from t2c_lib.records import Attempt
from t2c_lib.runs.layout import (
    ATTEMPT_SCORES_FILE,
    ATTEMPTS_FILE,
    GOLD_AUDIT_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    QUESTIONS_FILE,
    SUMMARY_FILE,
    Cell,
)
from t2c_lib.runs.runlog import read_json, read_jsonl, write_json
from t2c_lib.runs.summary_record import NAN, CellSummary, PresetSummary


def presets_in_order(headline: str) -> list[str]:
    """The headline preset first, then every other registered preset."""
    get_scoring(headline)
    return [headline, *(name for name in scoring_names() if name != headline)]


class EvaluationError(StudyError):
    """A cell cannot be evaluated (not run yet, or incomplete)."""


def load_cell_attempts(directory: Path) -> tuple[dict[str, list[Attempt]], dict[str, dict[str, Any]]]:
    """Attempts grouped by question (sorted by iteration) and the finished-question records."""
    finished = {rec["question_id"]: rec for rec in read_jsonl(directory / QUESTIONS_FILE)}
    attempts: dict[str, list[Attempt]] = {}
    for record in read_jsonl(directory / ATTEMPTS_FILE):
        if record["question_id"] in finished:
            attempts.setdefault(record["question_id"], []).append(Attempt.from_dict(record))
    for group in attempts.values():
        group.sort(key=lambda a: a.iteration)
    return attempts, finished


def load_finished(
    directory: Path, questions: list[GroundTruthItem]
) -> tuple[dict[str, list[Attempt]], dict[str, dict[str, Any]]]:
    """`load_cell_attempts`, refused in one line while a question of `questions` has not finished."""
    attempts, finished = load_cell_attempts(directory)
    missing = [q.id for q in questions if q.id not in finished]
    if missing:
        raise EvaluationError(
            f"{directory}: {len(missing)} of {len(questions)} questions have not finished (e.g. {missing[0]}); "
            "run the inference step first (it resumes)"
        )
    return attempts, finished


def evaluate_cell(
    cell: Cell,
    run_dir: Path,
    questions: list[GroundTruthItem],
    dataset: Dataset,
    store: GraphStore,
    weights: str,
    max_iterations: int,
    timeout_s: float,
    gold_cache: GoldCache | None = None,
    scoring: str = DEFAULT_SCORING,
    suite: TestSuite | None = None,
) -> dict[str, Any]:
    """Write `metrics.csv`, `attempt_scores.csv` and `summary.json` for one cell and return the summary:
    load its attempts, score each question (`metrics.question.score_attempts`), write.

    Every registered scoring preset is computed (`scoring` is the headline, written first);
    Pass@1 is reported for the first attempt and the final query, KG-valid as structural
    and chain, so no number needs a footnote to be read. With a `suite` of perturbed copies,
    `pass_at_1_ts` (test-suite Pass@1 of the final query under the headline preset) and the
    copies a prediction failed join the metrics, and the summary gains `pass_at_1_ts` and
    `n_coincidental`.
    """
    presets = presets_in_order(scoring)
    samples = strategy_spec(cell.strategy).samples  # vote's later attempts are samples, not refinements
    directory = cell.directory(run_dir)
    attempts, finished = load_finished(directory, questions)
    results = [
        score_attempts(
            item.cypher,
            attempts.get(item.id, []),
            finished[item.id].get("final_iteration"),
            store,
            presets=presets,
            weights=weights,
            gold_cache=gold_cache,
            timeout_s=timeout_s,
            question_id=item.id,
            suite=suite,
            samples=samples,
        )
        for item in questions
    ]
    manifest = _manifest(directory)
    loop = recorded_loop(manifest, str(directory / MANIFEST_FILE)) if manifest else loop_name(cell.strategy)
    rows = [
        metrics_row(cell, item, finished[item.id], result, dataset.strata_columns, suite is not None, loop.name)
        for item, result in zip(questions, results)
    ]
    header = columns.metrics_csv(presets, dataset.strata_columns, suite is not None)
    (directory / METRICS_FILE).write_text(rows_to_csv(rows, header), encoding="utf-8")
    attempt_rows = [_attempt_row(cell, a) for result in results for a in result.attempts]
    (directory / ATTEMPT_SCORES_FILE).write_text(
        rows_to_csv(attempt_rows, list(columns.ATTEMPT_SCORES_CSV)), encoding="utf-8"
    )
    max_iterations = max([max_iterations, *(len(g) for g in attempts.values())])
    cell_attempts = [a for q in questions for a in attempts.get(q.id, [])]
    summary = replace(
        cell_summary(cell, rows, results, weights, max_iterations, cell_attempts, suite),
        loop=loop.name,
        model_id=manifest.get("model_id", ""),
    )
    data = _rounded(summary.to_dict())
    write_json(directory / SUMMARY_FILE, data)
    return data


def metrics_row(
    cell: Cell,
    item: GroundTruthItem,
    record: dict[str, Any],
    result: QuestionResult,
    strata_columns: list[str] | tuple[str, ...],
    with_suite: bool,
    loop: str = "",
) -> dict[str, Any]:
    """One question's row of `metrics.csv` (`metrics.columns.METRICS_CSV` names and orders its columns);
    `loop`: the loop's one name (`agent.strategies.recorded_loop`), the strategy's with its defaults when ""."""
    group = [a.attempt for a in result.attempts]
    first, final, headline = result.first, result.final, result.headline_scores
    calls = record.get("llm_calls", len(group))  # the loop's own count: a corrector's attempt asks no model
    row: dict[str, Any] = {
        "strategy": cell.strategy,
        "loop": loop or loop_name(cell.strategy).name,
        "llm_calls": calls,
        "final_iteration": final.iteration if final else 0,
        "oracle": result.oracle,
        "harmed": result.harmed,
        "n_refinements": result.refinements.n_refinements,
        "n_repeated_refinements": result.refinements.n_repeated_refinements,
        "n_accepted_refinements": result.refinements.n_accepted_refinements,
        "n_accepted_repeats": result.refinements.n_accepted_repeats,
        **{columns.change_column(name): count for name, count in result.refinements.changes},
        "question_id": item.id,
        "configuration": cell.configuration,
        "prompt_type": cell.prompt_type,
        "schema_format": cell.schema_format,
        "status": record.get("status", ""),
        "success": int(bool(final and final.ok)),
        "first_attempt_ok": int(bool(first and first.ok)),
        "iterations": len(group),
        "prompt_tokens": sum(a.prompt_tokens for a in group),
        "completion_tokens": sum(a.completion_tokens for a in group),
        "final_error_type": final.error_type.value if final and final.error_type else "",
        "first_error_type": first.error_type.value if first and first.error_type else "",
        "error": record.get("error") or "",
        **{col: item.strata.get(col, "") for col in strata_columns},
        "kg_valid_structural_first": kg_valid_structural(first.validations if first else []),
        "kg_valid_chain_first": kg_valid_chain(first.validations if first else []),
        "question": item.question,
        "gold_query": item.cypher,
        "final_query": result.final_query,
        "kg_valid_structural_final": headline.kg_valid_structural,
        "kg_valid_chain_final": headline.kg_valid_chain,
        "execution_error": headline.error or "",
    }
    for name, scored in result.presets.items():
        values = {
            **scored.final.to_dict(),
            "pass_at_1_first": scored.pass_at_1_first,
            "pass_at_1_final": scored.final.pass_at_1,
        }
        row.update({columns.col(metric.name, name): values[metric.name] for metric in columns.PER_PRESET})
    if with_suite:
        row.update(pass_at_1_ts=headline.pass_at_1_ts, failed_copies=" ".join(headline.failed_copies))
    return row


def cell_summary(
    cell: Cell,
    rows: list[dict[str, Any]],
    results: list[QuestionResult],
    weights: str,
    max_iterations: int,
    cell_attempts: list[Attempt],
    suite: TestSuite | None,
) -> CellSummary:
    """A cell's `summary.json` record (without `loop` and `model_id`): the headline preset's means, every preset's,
    the loop's."""
    presets = list(results[0].presets) if results else []
    by_scoring = {
        name: PresetSummary.from_means(
            summarize([r.presets[name].final for r in results], weights=weights),
            _mean([r.presets[name].pass_at_1_first for r in results], "pass_at_1_first"),
        )
        for name in presets
    }
    headline = by_scoring[presets[0]] if presets else None
    agentic = agentic_metrics(
        cell_attempts, max_iterations=max_iterations, samples=strategy_spec(cell.strategy).samples
    )
    kg_valid: dict[str, Any] = {c.name: _mean([r[c.name] for r in rows], c.name) for c in columns.KG_VALID}
    test_suite: dict[str, Any] = (
        {
            "pass_at_1_ts": headline.pass_at_1_ts if headline else None,
            "n_coincidental": headline.n_coincidental if headline else None,
            "test_suite": list(suite.names),
        }
        if suite is not None
        else {}
    )
    return CellSummary(
        configuration=cell.configuration,
        strategy=cell.strategy,
        n=len(rows),
        prompt_type=cell.prompt_type,
        schema_format=cell.schema_format,
        scoring=presets[0] if presets else "",
        weights=weights,
        signature=" ; ".join(preset.signature for preset in by_scoring.values()),
        max_iterations=max_iterations,
        **kg_valid,
        pass_at_1_first=headline.pass_at_1_first if headline else NAN,
        pass_at_1_final=headline.pass_at_1_final if headline else NAN,
        llmetric=headline.llmetric if headline else NAN,
        oracle=_mean([r["oracle"] for r in rows], "oracle"),
        harm_rate=_mean([r["harmed"] for r in rows], "harmed"),
        llm_calls_per_question=_mean([r["llm_calls"] for r in rows], "llm_calls"),
        tokens_per_question=_mean([r["prompt_tokens"] + r["completion_tokens"] for r in rows], columns.TOKENS),
        **{rate.name: getattr(agentic, rate.name) for rate in columns.REPEAT_RATES},
        questions_raised=sum(1 for r in rows if r["error"]),
        by_scoring=by_scoring,
        agentic=agentic.to_dict(),
        **test_suite,
    )


def _manifest(directory: Path) -> dict[str, Any]:
    """The cell's manifest (which model answered, with which options), {} for a cell without one."""
    path = directory / MANIFEST_FILE
    return read_json(path) if path.is_file() else {}


def _attempt_row(cell: Cell, scored: AttemptScore) -> dict[str, Any]:
    attempt, revision = scored.attempt, scored.revision
    failed = next((v for v in attempt.validations if not v.ok), None)
    return {
        "question_id": attempt.question_id,
        "strategy": cell.strategy,
        "configuration": cell.configuration,
        "iteration": attempt.iteration,
        "kind": attempt.kind,
        "ok": int(attempt.ok),
        "kg_valid": int(attempt.kg_valid),
        "error_type": attempt.error_type.value if attempt.error_type else "",
        "failed_validator": failed.validator if failed else "",
        "result_correct": int(scored.pass_at_1 >= 1.0),
        "change": revision.change.value if revision else "",
        "repeats_failed": int(revision.repeats_failed) if revision else "",
    }


def write_gold_audit(run_dir: Path, questions: list[GroundTruthItem], store: GraphStore, timeout_s: float) -> Path:
    """Run the validator chain on every gold query: which validator (if any) rejects it (`<run>/gold_audit.csv`).

    A validator that rejects gold queries would also reject correct predictions and send a
    loop the wrong way; the analysis's validator audit reports these counts.
    """
    from t2c_lib.validation.chain import build_chain, make_context, run_chain

    chain = build_chain(store)
    ctx = make_context(store, timeout_s)
    rows = []
    for item in questions:
        ctx.result = None
        results = run_chain(item.cypher, chain, ctx)
        failed = next((v for v in results if not v.ok), None)
        rows.append(
            {
                "question_id": item.id,
                "failed_validator": failed.validator if failed else "",
                "error_type": failed.error_type.value if failed and failed.error_type else "",
            }
        )
    path = run_dir / GOLD_AUDIT_FILE
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # `make -j` may evaluate two cells at once
    tmp.write_text(rows_to_csv(rows, ["question_id", "failed_validator", "error_type"]), encoding="utf-8")
    tmp.replace(path)
    return path


def rows_to_csv(rows: list[dict[str, Any]], header: list[str]) -> str:
    """CSV text with a fixed column order and floats written at 10 significant digits."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(row.get(c, "")) for c in header])
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return f"{value:.10g}"
    return csv_cell(value)  # a question or query a spreadsheet would run as a formula is written as text


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def _mean(values: list[float], name: str) -> float:
    """Column `name`'s values over a cell's questions, averaged as the column spec says; 0.0 for no questions."""
    return columns.column_mean(values, name) if values else 0.0
