"""Score one cell of a run: per-question metrics (CSV) and a configuration summary (JSON).

Reads `attempts.jsonl` / `questions.jsonl` written by the runner, scores each question's
final query (the strategy's chosen attempt: the last one, or the vote's winner) against
its gold query on the same store, and writes `metrics.csv` and `summary.json` beside them.
Every attempt's result correctness goes to `attempt_scores.csv` (first-attempt Pass@1,
oracle, harm, error transitions and the validator audit are computed from it), with what its
query changed from the attempt before and whether it repeats an already failed query
(derived from the recorded queries, so cells run before attempts carried them score alike). Only
deterministic values are written (no wall times), so the same attempts give the same bytes.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

from t2c_lib.datasets import Dataset, GroundTruthItem
from t2c_lib.errors import StudyError
from t2c_lib.graph.base import GraphStore
from t2c_lib.metrics import GoldCache, agentic_metrics, summarize
from t2c_lib.metrics.agentic import refinements
from t2c_lib.metrics.output import kg_valid_chain, kg_valid_structural, wall_refusal
from t2c_lib.metrics.scores import QuestionScores, run_pair, score_executed, score_question
from t2c_lib.metrics.scoring import DEFAULT_SCORING, get_scoring, scoring_names
from t2c_lib.metrics.testsuite import TestSuite
from t2c_lib.outputs import csv_cell
from t2c_lib.records import Attempt, Revision, revisions
from t2c_lib.study import columns
from t2c_lib.study.layout import (
    ATTEMPT_SCORES_FILE,
    ATTEMPTS_FILE,
    GOLD_AUDIT_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    QUESTIONS_FILE,
    SUMMARY_FILE,
    Cell,
)
from t2c_lib.study.runlog import read_json, read_jsonl, write_json


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
    """Write `metrics.csv` and `summary.json` for one cell and return the summary.

    Every registered scoring preset is computed (`scoring` is the headline, written first);
    Pass@1 is reported for the first attempt and the final query, KG-valid as structural
    and chain, so no number needs a footnote to be read. With a `suite` of perturbed copies,
    `pass_at_1_ts` (test-suite Pass@1 of the final query under the headline preset) and the
    copies a prediction failed join the metrics, and the summary gains `pass_at_1_ts` and
    `n_coincidental`.
    """
    presets = presets_in_order(scoring)
    directory = cell.directory(run_dir)
    attempts, finished = load_cell_attempts(directory)
    missing = [q.id for q in questions if q.id not in finished]
    if missing:
        raise EvaluationError(
            f"{directory}: {len(missing)} of {len(questions)} questions have not finished (e.g. {missing[0]}); "
            "run the inference step first (it resumes)"
        )
    strata_columns = dataset.strata_columns
    rows: list[dict[str, Any]] = []
    attempt_rows: list[dict[str, Any]] = []
    final_scores: dict[str, list[QuestionScores]] = {p: [] for p in presets}
    first_pass: dict[str, list[float]] = {p: [] for p in presets}
    for item in questions:
        group = attempts.get(item.id, [])
        record = finished[item.id]
        chosen = int(record.get("final_iteration") or len(group))  # vote's answer need not be the last sample
        final = group[chosen - 1] if group and 0 < chosen <= len(group) else (group[-1] if group else None)
        first = group[0] if group else None
        final_query = final.query if final else ""
        final_pair = run_pair(
            item.cypher,
            final_query,
            store,
            gold_cache,
            timeout_s,
            refusal=wall_refusal(final.validations) if final else None,
        )
        first_pair = (
            final_pair
            if first is final
            else run_pair(
                item.cypher, first.query, store, gold_cache, timeout_s, refusal=wall_refusal(first.validations)
            )
        )
        headline_final = score_executed(
            item.cypher, final_query, final_pair, final.validations if final else [], preset=weights, scoring=scoring
        ).pass_at_1
        correct = _attempt_correctness(
            item, group, final, headline_final, store, gold_cache, weights, scoring, timeout_s
        )
        attempt_rows += [_attempt_row(cell, a, c, r) for a, c, r in zip(group, correct, revisions(group))]
        refined = refinements(group)
        row: dict[str, Any] = {
            "strategy": cell.strategy,
            "llm_calls": len(group),
            "final_iteration": final.iteration if final else 0,
            "oracle": float(any(c >= 1.0 for c in correct)),
            "harmed": int(any(c >= 1.0 for c in correct) and headline_final < 1.0),
            "n_refinements": refined.n_refinements,
            "n_repeated_refinements": refined.n_repeated_refinements,
            **{columns.change_column(name): count for name, count in refined.changes},
            "question_id": item.id,
            "mode": cell.mode,
            "configuration": cell.configuration,
            "prompt_type": cell.prompt_type,
            "schema_format": cell.schema_format,
            "status": record.get("status", ""),
            "success": int(bool(final and final.ok)),
            "first_attempt_ok": int(bool(first and first.ok)),
            "iterations": len(group),
            "model_calls": len(group),
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
            "final_query": final_query,
        }
        for name in presets:
            score = score_executed(
                item.cypher,
                final_query,
                final_pair,
                final.validations if final else [],
                preset=weights,
                scoring=name,
                question_id=item.id,
                suite=suite if name == scoring else None,
                timeout_s=timeout_s,
            )
            p_first = get_scoring(name).output_scores(
                item.cypher, first_pair.gold.result, first_pair.generated.result, first.query if first else ""
            )[0]
            final_scores[name].append(score)
            first_pass[name].append(p_first)
            row.update(
                kg_valid_structural_final=score.kg_valid_structural,
                kg_valid_chain_final=score.kg_valid_chain,
                execution_error=score.error or "",
            )
            values = {**score.to_dict(), "pass_at_1_first": p_first, "pass_at_1_final": score.pass_at_1}
            row.update({columns.col(metric.name, name): values[metric.name] for metric in columns.PER_PRESET})
            if suite is not None and name == scoring:
                row.update(pass_at_1_ts=score.pass_at_1_ts, failed_copies=" ".join(score.failed_copies))
        rows.append(row)
    header = columns.metrics_csv(presets, strata_columns, suite is not None)
    (directory / METRICS_FILE).write_text(rows_to_csv(rows, header), encoding="utf-8")
    (directory / ATTEMPT_SCORES_FILE).write_text(
        rows_to_csv(attempt_rows, list(columns.ATTEMPT_SCORES_CSV)), encoding="utf-8"
    )
    max_iterations = max([max_iterations, *(len(g) for g in attempts.values())])
    by_scoring = {name: _preset_summary(final_scores[name], first_pass[name], weights) for name in presets}
    headline = by_scoring[scoring]
    agentic = agentic_metrics([a for q in questions for a in attempts.get(q.id, [])], max_iterations=max_iterations)
    summary: dict[str, Any] = {
        "n": len(rows),
        "scoring": scoring,
        "weights": weights,
        **{c.name: _mean([r[c.name] for r in rows]) for c in columns.KG_VALID},
        "pass_at_1_first": headline["pass_at_1_first"],
        "pass_at_1_final": headline["pass_at_1_final"],
        "llmetric": headline["llmetric"],
        "by_scoring": by_scoring,
        "signature": " ; ".join(by_scoring[name]["signature"] for name in presets),
        "strategy": cell.strategy,
        "oracle": _mean([r["oracle"] for r in rows]),
        "harm_rate": _mean([r["harmed"] for r in rows]),
        "llm_calls_per_question": _mean([r["llm_calls"] for r in rows]),
        "refinement_repeat_rate": agentic.refinement_repeat_rate,
        "mode": cell.mode,
        "configuration": cell.configuration,
        "prompt_type": cell.prompt_type,
        "schema_format": cell.schema_format,
        "max_iterations": max_iterations,
        "agentic": agentic.to_dict(),
        **(
            {
                "pass_at_1_ts": headline.get("pass_at_1_ts"),
                "n_coincidental": headline.get("n_coincidental"),
                "test_suite": suite.names,
            }
            if suite is not None
            else {}
        ),
        "tokens_per_question": _mean([r["prompt_tokens"] + r["completion_tokens"] for r in rows]),
        "model_calls_per_question": _mean([r["model_calls"] for r in rows]),
        "questions_raised": sum(1 for r in rows if r["error"]),
        "model_id": _answered_by(directory),
    }
    write_json(directory / SUMMARY_FILE, _rounded(summary))
    return summary


def _answered_by(directory: Path) -> str:
    """The model id the cell's manifest records (which model answered), "" for a cell without one."""

    path = directory / MANIFEST_FILE
    return read_json(path).get("model_id", "") if path.is_file() else ""


def _preset_summary(scores: list[QuestionScores], first_pass: list[float], weights: str) -> dict[str, Any]:
    """One preset's means; Pass@1 named by attempt (first / final), KG-valid left to the cell level."""
    s = summarize(scores, preset=weights)
    s["pass_at_1_final"] = s.pop("pass_at_1")
    s["pass_at_1_first"] = _mean(first_pass)
    for key in ("kg_valid_structural", "kg_valid_chain"):
        s.pop(key)
    return s


def _attempt_correctness(
    item: GroundTruthItem,
    group: list[Attempt],
    final: Attempt | None,
    final_pass: float,
    store: GraphStore,
    gold_cache: GoldCache | None,
    weights: str,
    scoring: str,
    timeout_s: float,
) -> list[float]:
    """Pass@1 (headline preset) of every attempt's query (each distinct query run once; the final one's is known)."""
    known: dict[str, float] = {}
    if final is not None:
        known[final.query] = final_pass
    out = []
    for attempt in group:
        if attempt.query not in known:
            known[attempt.query] = (
                score_question(
                    item.cypher,
                    attempt.query,
                    store,
                    attempt.validations,
                    gold_cache,
                    preset=weights,
                    scoring=scoring,
                    timeout_s=timeout_s,
                    question_id=item.id,
                ).pass_at_1
                if attempt.query
                else 0.0
            )
        out.append(known[attempt.query])
    return out


def _attempt_row(cell: Cell, attempt: Attempt, correct: float, revision: Revision | None) -> dict[str, Any]:
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
        "result_correct": int(correct >= 1.0),
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


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
