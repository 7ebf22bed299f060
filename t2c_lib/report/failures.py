"""A run's failures for review: each wrong or invalid question with its question, gold query and every attempt.

`invalid`: the final query did not pass the validator chain (or no query came); `wrong`: it
passed the chain and its result is not the gold result under the run's headline scoring preset.
Read from what the run wrote (each evaluated cell's `metrics.csv`, `summary.json` and
`attempts.jsonl`); the question and gold query come from `metrics.csv`, or, for cells
evaluated before it carried them, from the dataset the cell's manifest names. `t2c failures`
prints them (`format_failure`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from t2c_lib.errors import InvalidValue, MissingResults
from t2c_lib.metrics import columns
from t2c_lib.records import Attempt, AttemptKind
from t2c_lib.runs.layout import ATTEMPTS_FILE, MANIFEST_FILE, METRICS_FILE, SUMMARY_FILE
from t2c_lib.runs.runlog import read_json, read_jsonl

if TYPE_CHECKING:  # pragma: no cover - pandas loads with the tables that need it
    import pandas as pd

INVALID, WRONG = "invalid", "wrong"


@dataclass(frozen=True)
class AttemptView:
    """One attempt as a reviewer reads it: its query, why the chain rejected it, the feedback the model got."""

    iteration: int
    kind: str
    query: str
    error_type: str
    error: str  # the failing validator and its message ("" when the chain passed)
    feedback: str


@dataclass(frozen=True)
class Failure:
    """A question a cell answered wrongly or with an invalid query."""

    cell: str  # <strategy>/<configuration>
    loop: str  # the loop's one name (`thesis-loop`, `revise`, ...), from the cell's manifest
    question_id: str
    verdict: str  # INVALID or WRONG
    question: str
    gold_query: str
    final_query: str
    attempts: tuple[AttemptView, ...]


def _attempt_view(attempt: Attempt) -> AttemptView:
    failed = next((v for v in attempt.validations if not v.ok), None)
    error = f"{failed.validator}: {failed.message}".rstrip(": ") if failed else ""
    return AttemptView(
        iteration=attempt.iteration,
        kind=attempt.kind,
        query=attempt.query,
        error_type=attempt.error_type.value if attempt.error_type else "",
        error=error,
        feedback=attempt.feedback or "",
    )


def evaluated_cells(run_dir: Path) -> list[str]:
    """The run's evaluated cells as `<strategy>/<configuration>`, sorted."""
    return sorted(p.parent.relative_to(run_dir).as_posix() for p in run_dir.glob(f"*/*/{METRICS_FILE}"))


def run_failures(run_dir: Path, cell: str | None = None) -> tuple[list[Failure], int]:
    """(every wrong or invalid question of the run's evaluated cells, or of `cell`, the number of answers looked at).

    `cell` is `<strategy>/<configuration>` or a configuration (every strategy's cell of it).
    """
    from t2c_lib.report.analysis import cell_loop, read_table

    found = evaluated_cells(run_dir)
    if not found:
        raise MissingResults(f"{run_dir}: no evaluated cell (no {METRICS_FILE}); run the evaluation step first")
    chosen = [c for c in found if cell in (None, c, c.split("/", 1)[1])]
    if not chosen:
        raise InvalidValue(f"--cell {cell}: no evaluated cell of the run has that name (cells: {', '.join(found)})")
    failures: list[Failure] = []
    answers = 0
    for name in chosen:
        directory = run_dir / name
        scoring = read_json(directory / SUMMARY_FILE).get("scoring") if (directory / SUMMARY_FILE).is_file() else None
        metrics = read_table(directory / METRICS_FILE)
        passed = columns.col("pass_at_1_final", scoring or columns.preset_name(columns.presets_in(metrics.columns)[0]))
        texts = _texts(directory, metrics)
        loop = cell_loop(directory, name.split("/", 1)[0]).name
        attempts: dict[str, list[Attempt]] = {}
        for record in read_jsonl(directory / ATTEMPTS_FILE):
            attempts.setdefault(record["question_id"], []).append(Attempt.from_dict(record))
        for row in metrics.to_dict("records"):
            answers += 1
            valid = str(row["kg_valid_chain_final"]) in ("1", "1.0", "True")
            if valid and float(row[passed]) >= 1.0:
                continue
            qid = str(row["question_id"])
            question, gold = texts.get(qid, ("", ""))
            group = sorted(attempts.get(qid, []), key=lambda a: a.iteration)
            failures.append(
                Failure(
                    cell=name,
                    loop=loop,
                    question_id=qid,
                    verdict=WRONG if valid else INVALID,
                    question=question,
                    gold_query=gold,
                    final_query=str(row.get("final_query", "")),
                    attempts=tuple(_attempt_view(a) for a in group),
                )
            )
    return failures, answers


def _texts(directory: Path, metrics: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Question id -> (question, gold query): from metrics.csv, else from the dataset the cell's manifest names."""
    if "question" in metrics.columns and "gold_query" in metrics.columns:
        return {str(r["question_id"]): (str(r["question"]), str(r["gold_query"])) for r in metrics.to_dict("records")}
    manifest = directory / MANIFEST_FILE
    if not manifest.is_file():
        return {}
    from t2c_lib.datasets import load_dataset

    parameters = read_json(manifest).get("parameters", {})
    dataset = load_dataset(parameters.get("dataset", ""), split=parameters.get("split", "test"))
    return {item.id: (item.question, item.cypher) for item in dataset.questions}


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str) -> str:
    """Text safe to print on a terminal: control characters (escape sequences included) written as `\\xNN`."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _block(label: str, text: str, indent: str) -> list[str]:
    lines = shown(text).split("\n") if text else ["(none)"]
    pad = " " * len(label)
    return [f"{indent}{label}{lines[0]}", *(f"{indent}{pad}{line}" for line in lines[1:])]


def format_failure(failure: Failure) -> str:
    """One failure as text: a header line, the question, the gold query, then each attempt with its error and feedback."""
    out = [f"== {failure.cell} ({failure.loop}) · {shown(failure.question_id)} · {failure.verdict}"]
    out += _block("question: ", failure.question, "")
    out += _block("gold:     ", failure.gold_query, "")
    for attempt in failure.attempts:
        kind = "" if attempt.kind == AttemptKind.GENERATE else f" ({attempt.kind})"
        out += _block(f"attempt {attempt.iteration}{kind}: ", attempt.query, "")
        if attempt.error_type or attempt.error:
            out += _block("error:    ", f"{attempt.error_type} {attempt.error}".strip(), "  ")
        else:
            out.append("  passed the validator chain")
        if attempt.feedback:
            out += _block("feedback: ", attempt.feedback, "  ")
    if not failure.attempts:
        out.append("no attempt recorded")
    return "\n".join(out)
