"""Score one cell of a run: per-question metrics (CSV) and a configuration summary (JSON).

Reads `attempts.jsonl` / `questions.jsonl` written by the runner, scores each question's
final query (the strategy's chosen attempt: the last one, or the vote's winner) against
its gold query on the same store, and writes `metrics.csv` and `summary.json` beside them.
Every attempt's result correctness goes to `attempt_scores.csv` (first-attempt Pass@1,
oracle, harm, error transitions and the validator audit are computed from it). Only
deterministic values are written (no wall times), so the same attempts give the same bytes.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

from t2c_lib.agent.types import Attempt
from t2c_lib.datasets import Dataset, GroundTruthItem
from t2c_lib.experiment import ATTEMPTS_FILE, QUESTIONS_FILE, Cell, read_jsonl, write_json
from t2c_lib.graph.base import GraphStore
from t2c_lib.metrics import GoldCache, agentic_metrics, score_question, summarize
from t2c_lib.metrics.scores import SCORE_NAMES

METRICS_FILE = "metrics.csv"
SUMMARY_FILE = "summary.json"
ATTEMPT_SCORES_FILE = "attempt_scores.csv"
GOLD_AUDIT_FILE = "gold_audit.csv"
BASE_COLUMNS = (
    "question_id", "mode", "configuration", "prompt_type", "schema_format", "status", "success",
    "first_attempt_ok", "iterations", "model_calls", "prompt_tokens", "completion_tokens", "final_error_type",
    "first_error_type", "error", "strategy", "llm_calls", "final_iteration", "pass_at_1_first", "oracle", "harmed",
)
ATTEMPT_COLUMNS = (
    "question_id", "strategy", "configuration", "iteration", "kind", "ok", "kg_valid", "error_type",
    "failed_validator", "result_correct",
)


class EvaluationError(RuntimeError):
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
    cell: Cell, run_dir: Path, questions: list[GroundTruthItem], dataset: Dataset, store: GraphStore,
    weights: str, max_iterations: int, timeout_s: float, gold_cache: GoldCache | None = None,
) -> dict[str, Any]:
    """Write `metrics.csv` and `summary.json` for one cell and return the summary."""
    directory = cell.directory(run_dir)
    attempts, finished = load_cell_attempts(directory)
    missing = [q.id for q in questions if q.id not in finished]
    if missing:
        raise EvaluationError(
            f"{directory}: {len(missing)} of {len(questions)} questions have not finished (e.g. {missing[0]}); "
            "run the inference step first (it resumes)"
        )
    strata_columns = dataset.strata_columns
    rows, scores, attempt_rows = [], [], []
    for item in questions:
        group = attempts.get(item.id, [])
        record = finished[item.id]
        chosen = int(record.get("final_iteration") or len(group))
        final = group[chosen - 1] if group and 0 < chosen <= len(group) else (group[-1] if group else None)
        score = score_question(
            item.cypher, final.query if final else "", store, final.validations if final else [],
            gold_cache, preset=weights, timeout_s=timeout_s, question_id=item.id,
        )
        scores.append(score)
        correct = _attempt_correctness(item, group, final, score.pass_at_1, store, gold_cache, weights, timeout_s)
        attempt_rows += [_attempt_row(cell, a, c) for a, c in zip(group, correct)]
        rows.append({
            "strategy": cell.strategy, "llm_calls": len(group), "final_iteration": final.iteration if final else 0,
            "pass_at_1_first": correct[0] if correct else 0.0, "oracle": float(any(c >= 1.0 for c in correct)),
            "harmed": int(any(c >= 1.0 for c in correct) and score.pass_at_1 < 1.0),
            "question_id": item.id, "mode": cell.mode, "configuration": cell.configuration,
            "prompt_type": cell.prompt_type, "schema_format": cell.schema_format,
            "status": record.get("status", ""), "success": int(bool(final and final.ok)),
            "first_attempt_ok": int(bool(group and group[0].ok)), "iterations": len(group),
            "model_calls": len(group),
            "prompt_tokens": sum(a.prompt_tokens for a in group),
            "completion_tokens": sum(a.completion_tokens for a in group),
            "final_error_type": final.error_type.value if final and final.error_type else "",
            "first_error_type": group[0].error_type.value if group and group[0].error_type else "",
            "error": record.get("error") or "",
            **{col: item.strata.get(col, "") for col in strata_columns},
            **{name: getattr(score, name) for name in SCORE_NAMES},
            "execution_error": score.error or "",
        })
    columns = [*BASE_COLUMNS, *strata_columns, *SCORE_NAMES, "execution_error"]
    (directory / METRICS_FILE).write_text(rows_to_csv(rows, columns), encoding="utf-8")
    (directory / ATTEMPT_SCORES_FILE).write_text(rows_to_csv(attempt_rows, list(ATTEMPT_COLUMNS)), encoding="utf-8")
    summary = summarize(scores, preset=weights)
    max_iterations = max([max_iterations, *(len(g) for g in attempts.values())])
    agentic = agentic_metrics([a for q in questions for a in attempts.get(q.id, [])], max_iterations=max_iterations)
    summary.update({
        "strategy": cell.strategy, "pass_at_1_first": _mean([r["pass_at_1_first"] for r in rows]),
        "oracle": _mean([r["oracle"] for r in rows]), "harm_rate": _mean([r["harmed"] for r in rows]),
        "llm_calls_per_question": _mean([r["llm_calls"] for r in rows]),
        "mode": cell.mode, "configuration": cell.configuration, "prompt_type": cell.prompt_type,
        "schema_format": cell.schema_format, "max_iterations": max_iterations,
        "agentic": agentic.to_dict() if hasattr(agentic, "to_dict") else vars(agentic),
        "tokens_per_question": _mean([r["prompt_tokens"] + r["completion_tokens"] for r in rows]),
        "model_calls_per_question": _mean([r["model_calls"] for r in rows]),
        "questions_raised": sum(1 for r in rows if r["error"]),
    })
    write_json(directory / SUMMARY_FILE, _rounded(summary))
    return summary


def _attempt_correctness(
    item: GroundTruthItem, group: list[Attempt], final: Attempt | None, final_pass: float, store: GraphStore,
    gold_cache: GoldCache | None, weights: str, timeout_s: float,
) -> list[float]:
    """Pass@1 of every attempt's query (each distinct query run once; the final one's is known)."""
    known: dict[str, float] = {}
    if final is not None:
        known[final.query] = final_pass
    out = []
    for attempt in group:
        if attempt.query not in known:
            known[attempt.query] = score_question(
                item.cypher, attempt.query, store, attempt.validations, gold_cache, preset=weights,
                timeout_s=timeout_s, question_id=item.id,
            ).pass_at_1 if attempt.query else 0.0
        out.append(known[attempt.query])
    return out


def _attempt_row(cell: Cell, attempt: Attempt, correct: float) -> dict[str, Any]:
    failed = next((v for v in attempt.validations if not v.ok), None)
    return {
        "question_id": attempt.question_id, "strategy": cell.strategy, "configuration": cell.configuration,
        "iteration": attempt.iteration, "kind": attempt.kind, "ok": int(attempt.ok), "kg_valid": int(attempt.kg_valid),
        "error_type": attempt.error_type.value if attempt.error_type else "",
        "failed_validator": failed.validator if failed else "", "result_correct": int(correct >= 1.0),
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
        rows.append({"question_id": item.id, "failed_validator": failed.validator if failed else "",
                     "error_type": failed.error_type.value if failed and failed.error_type else ""})
    path = run_dir / GOLD_AUDIT_FILE
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # `make -j` may evaluate two cells at once
    tmp.write_text(rows_to_csv(rows, ["question_id", "failed_validator", "error_type"]), encoding="utf-8")
    tmp.replace(path)
    return path


def rows_to_csv(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """CSV text with a fixed column order and floats written at 10 significant digits."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c, "")) for c in columns])
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return f"{value:.10g}"
    return value


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
