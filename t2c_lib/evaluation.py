"""Score one cell of a run: per-question metrics (CSV) and a configuration summary (JSON).

Reads `attempts.jsonl` / `questions.jsonl` written by the runner, scores each question's
final query against its gold query on the same store, and writes `metrics.csv` and
`summary.json` beside them. Only deterministic values are written (no wall times), so the
same attempts give the same bytes.
"""

from __future__ import annotations

import csv
import io
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
BASE_COLUMNS = (
    "question_id", "mode", "configuration", "prompt_type", "schema_format", "status", "success",
    "first_attempt_ok", "iterations", "model_calls", "prompt_tokens", "completion_tokens", "final_error_type",
    "first_error_type", "error",
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
    rows, scores = [], []
    for item in questions:
        group = attempts.get(item.id, [])
        final = group[-1] if group else None
        record = finished[item.id]
        score = score_question(
            item.cypher, final.query if final else "", store, final.validations if final else [],
            gold_cache, preset=weights, timeout_s=timeout_s, question_id=item.id,
        )
        scores.append(score)
        rows.append({
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
    summary = summarize(scores, preset=weights)
    agentic = agentic_metrics([a for q in questions for a in attempts.get(q.id, [])], max_iterations=max_iterations)
    summary.update({
        "mode": cell.mode, "configuration": cell.configuration, "prompt_type": cell.prompt_type,
        "schema_format": cell.schema_format, "max_iterations": max_iterations,
        "agentic": agentic.to_dict() if hasattr(agentic, "to_dict") else vars(agentic),
        "tokens_per_question": _mean([r["prompt_tokens"] + r["completion_tokens"] for r in rows]),
        "model_calls_per_question": _mean([r["model_calls"] for r in rows]),
        "questions_raised": sum(1 for r in rows if r["error"]),
    })
    write_json(directory / SUMMARY_FILE, _rounded(summary))
    return summary


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
