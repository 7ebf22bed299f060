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

from t2c_lib.agent import Attempt
from t2c_lib.datasets import Dataset, GroundTruthItem
from t2c_lib.experiment import ATTEMPTS_FILE, QUESTIONS_FILE, Cell, read_jsonl, write_json
from t2c_lib.graph.base import GraphStore
from t2c_lib.metrics import GoldCache, agentic_metrics, summarize
from t2c_lib.metrics.output import kg_valid_chain, kg_valid_structural
from t2c_lib.metrics.scores import QuestionScores, run_pair, score_executed
from t2c_lib.metrics.scoring import DEFAULT_SCORING, get_scoring, scoring_names
from t2c_lib.metrics.testsuite import TestSuite

METRICS_FILE = "metrics.csv"
SUMMARY_FILE = "summary.json"
BASE_COLUMNS = (
    "question_id", "mode", "configuration", "prompt_type", "schema_format", "status", "success",
    "first_attempt_ok", "iterations", "model_calls", "prompt_tokens", "completion_tokens", "final_error_type",
    "first_error_type", "error",
)
KG_VALID_COLUMNS = ("kg_valid_structural_first", "kg_valid_chain_first", "kg_valid_structural_final", "kg_valid_chain_final")
"""Preset-free: structural = guard, syntax, schema, properties passed; chain = every validator passed."""
PRESET_COLUMNS = (
    "pass_at_1_first", "pass_at_1_final", "jaccard_output", "bleu", "rouge_l_f1", "jaro_winkler", "jaccard_tokens",
    "jarou", "llmetric_q",
)
"""Written once per scoring preset as `<name>__<preset slug>`, e.g. `pass_at_1_final__kg_axel`."""


def preset_column(metric: str, scoring: str) -> str:
    """The metrics.csv column of one metric under one scoring preset."""
    return f"{metric}__{get_scoring(scoring).slug}"


def presets_in_order(headline: str) -> list[str]:
    """The headline preset first, then every other registered preset."""
    get_scoring(headline)
    return [headline, *(name for name in scoring_names() if name != headline)]


SUITE_COLUMNS = ("pass_at_1_ts", "failed_copies")


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
    final_scores: dict[str, list[QuestionScores]] = {p: [] for p in presets}
    first_pass: dict[str, list[float]] = {p: [] for p in presets}
    for item in questions:
        group = attempts.get(item.id, [])
        final = group[-1] if group else None
        first = group[0] if group else None
        record = finished[item.id]
        final_query = final.query if final else ""
        final_pair = run_pair(item.cypher, final_query, store, gold_cache, timeout_s)
        first_pair = final_pair if len(group) <= 1 else run_pair(item.cypher, first.query, store, gold_cache, timeout_s)
        row: dict[str, Any] = {
            "question_id": item.id, "mode": cell.mode, "configuration": cell.configuration,
            "prompt_type": cell.prompt_type, "schema_format": cell.schema_format,
            "status": record.get("status", ""), "success": int(bool(final and final.ok)),
            "first_attempt_ok": int(bool(first and first.ok)), "iterations": len(group),
            "model_calls": len(group),
            "prompt_tokens": sum(a.prompt_tokens for a in group),
            "completion_tokens": sum(a.completion_tokens for a in group),
            "final_error_type": final.error_type.value if final and final.error_type else "",
            "first_error_type": first.error_type.value if first and first.error_type else "",
            "error": record.get("error") or "",
            **{col: item.strata.get(col, "") for col in strata_columns},
            "kg_valid_structural_first": kg_valid_structural(first.validations if first else []),
            "kg_valid_chain_first": kg_valid_chain(first.validations if first else []),
        }
        for name in presets:
            score = score_executed(item.cypher, final_query, final_pair, final.validations if final else [],
                                   preset=weights, scoring=name, question_id=item.id,
                                   suite=suite if name == scoring else None, timeout_s=timeout_s)
            p_first = get_scoring(name).output_scores(item.cypher, first_pair.gold.result, first_pair.generated.result)[0]
            final_scores[name].append(score)
            first_pass[name].append(p_first)
            row.update(kg_valid_structural_final=score.kg_valid_structural, kg_valid_chain_final=score.kg_valid_chain,
                       execution_error=score.error or "")
            values = {**score.to_dict(), "pass_at_1_first": p_first, "pass_at_1_final": score.pass_at_1}
            row.update({preset_column(metric, name): values[metric] for metric in PRESET_COLUMNS})
            if suite is not None and name == scoring:
                row.update(pass_at_1_ts=score.pass_at_1_ts, failed_copies=" ".join(score.failed_copies))
        rows.append(row)
    columns = [*BASE_COLUMNS, *strata_columns, *KG_VALID_COLUMNS,
               *(preset_column(metric, name) for name in presets for metric in PRESET_COLUMNS), "execution_error",
               *(SUITE_COLUMNS if suite else ())]
    (directory / METRICS_FILE).write_text(rows_to_csv(rows, columns), encoding="utf-8")
    by_scoring = {name: _preset_summary(final_scores[name], first_pass[name], weights) for name in presets}
    headline = by_scoring[scoring]
    agentic = agentic_metrics([a for q in questions for a in attempts.get(q.id, [])], max_iterations=max_iterations)
    summary: dict[str, Any] = {
        "n": len(rows), "scoring": scoring, "weights": weights,
        **{col: _mean([r[col] for r in rows]) for col in KG_VALID_COLUMNS},
        "pass_at_1_first": headline["pass_at_1_first"], "pass_at_1_final": headline["pass_at_1_final"],
        "llmetric": headline["llmetric"],
        "by_scoring": by_scoring,
        "signature": " ; ".join(by_scoring[name]["signature"] for name in presets),
        "mode": cell.mode, "configuration": cell.configuration, "prompt_type": cell.prompt_type,
        "schema_format": cell.schema_format, "max_iterations": max_iterations,
        "agentic": agentic.to_dict(),
        **({"pass_at_1_ts": headline.get("pass_at_1_ts"), "n_coincidental": headline.get("n_coincidental"),
            "test_suite": suite.names} if suite is not None else {}),
        "tokens_per_question": _mean([r["prompt_tokens"] + r["completion_tokens"] for r in rows]),
        "model_calls_per_question": _mean([r["model_calls"] for r in rows]),
        "questions_raised": sum(1 for r in rows if r["error"]),
    }
    write_json(directory / SUMMARY_FILE, _rounded(summary))
    return summary


def _preset_summary(scores: list[QuestionScores], first_pass: list[float], weights: str) -> dict[str, Any]:
    """One preset's means; Pass@1 named by attempt (first / final), KG-valid left to the cell level."""
    s = summarize(scores, preset=weights)
    s["pass_at_1_final"] = s.pop("pass_at_1")
    s["pass_at_1_first"] = _mean(first_pass)
    for key in ("kg_valid_structural", "kg_valid_chain"):
        s.pop(key)
    return s


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
