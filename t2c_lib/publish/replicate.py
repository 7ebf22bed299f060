"""A rerun set beside its published run: what `make all` and `make all FRESH=1` say at the end.

`reproduced_line`: after `make all`, how many published replies the run was answered from and
how many model calls it made (attempts the run recorded as not answered from the cache). On a
machine with the published build every reply is published and the line reads `0 model calls`.

`replication_report`: after `make all FRESH=1` (the model asked again through a private
response cache, into `results/<run_id>-fresh/`), per cell present in both runs: Pass@1 k/N of
the published run and of the fresh one (the headline scoring preset both were scored with),
the questions whose outcome flipped, the exact McNemar test between the two runs (the paired
test of `metrics.stats`), and how many of the replies were byte-identical (attempts paired by
question, iteration and kind). Written as `replication.md` and `replication.csv` in the fresh
run's folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from t2c_lib.agent.names import canonical_strategy
from t2c_lib.errors import IncompatibleResults
from t2c_lib.files.outputs import csv_frame, numbered_json_lines
from t2c_lib.metrics import columns
from t2c_lib.metrics.stats import mcnemar_exact
from t2c_lib.publish.publish import replies_used
from t2c_lib.publish.published import PublishedReply
from t2c_lib.records import AttemptKind
from t2c_lib.report.analysis import load_per_question, presets_of
from t2c_lib.runs.layout import attempt_log_cells, attempts_text

FRESH_SUFFIX = "-fresh"
"""`make all FRESH=1` writes the replication of run R as run `R-fresh`."""
REPORT_MD, REPORT_CSV = "replication.md", "replication.csv"


def reproduced_line(run_dir: Path, published: list[PublishedReply] | None) -> str:
    """`reproduced from N published replies; M model calls` for the run in `run_dir`."""
    rows = [reply.row for reply in published or []]
    used = replies_used(run_dir, lambda model_id: (r for r in rows if r.request.get("model") == model_id))
    if published is None:
        return (
            f"run {run_dir.name}: not published (no results/published/{run_dir.name}/); {used.model_calls} model calls"
        )
    asked = (
        " (replies the published run lacks: another model, llama.cpp build, parameters or prompts)"
        if used.model_calls
        else ""
    )
    return f"reproduced from {len(used.rows)} published replies; {used.model_calls} model calls{asked}"


def _replies(run_dir: Path) -> dict[tuple[str, str, int, str], str]:
    """Every model reply of a run or a published run (gzipped logs) by (cell, question, iteration, kind)."""
    found = {}
    for cell_dir in attempt_log_cells(run_dir):
        cell = cell_dir.relative_to(run_dir).as_posix()
        for _, record in numbered_json_lines(attempts_text(cell_dir), skip_torn=True):
            if isinstance(record, dict) and record.get("kind") != AttemptKind.CORRECTOR:
                key = (cell, str(record.get("question_id")), int(record.get("iteration", 0)), str(record.get("kind")))
                found[key] = str(record.get("raw_response", ""))
    return found


@dataclass
class Replication:
    """Per cell: Pass@1 of both runs, flipped questions, McNemar, identical replies."""

    published_dir: Path
    fresh_dir: Path
    preset: str
    table: pd.DataFrame

    def markdown(self) -> str:
        name = columns.preset_name(self.preset)
        lines = [
            f"# Replication of {self.published_dir.name}",
            "",
            f"Published run: `{self.published_dir}`; fresh run (the model asked again): `{self.fresh_dir}`.",
            f"Pass@1 ({name}, final attempt) k/N on the questions both runs answered; p: exact McNemar, "
            "fresh against published; replies: identical of paired model replies (same question, iteration, kind).",
            "",
            "| strategy | configuration | published | fresh | flipped | p | replies identical |",
            "|---|---|---|---|---|---|---|",
        ]
        for _, row in self.table.iterrows():
            flipped = row["flipped"] or "none"
            lines.append(
                f"| {row['strategy']} | {row['configuration']} | {row['published_k']}/{row['n']} | "
                f"{row['fresh_k']}/{row['n']} | {flipped} | {row['mcnemar_p']:.3g} | "
                f"{row['replies_identical']}/{row['replies_paired']} |"
            )
        same = int(self.table["replies_identical"].sum())
        paired = int(self.table["replies_paired"].sum())
        lines += ["", f"Replies identical in all: {same} of {paired}" + (" (all)." if same == paired else ".")]
        return "\n".join(lines) + "\n"

    def write(self) -> list[Path]:
        paths = [self.fresh_dir / REPORT_MD, self.fresh_dir / REPORT_CSV]
        paths[0].write_text(self.markdown(), encoding="utf-8")
        csv_frame(self.table).to_csv(paths[1], index=False, float_format="%.10g", lineterminator="\n")
        return paths


def replication_report(published_dir: Path, fresh_dir: Path) -> Replication:
    """Compare a fresh run with its published run, cell by cell (both evaluated)."""
    a, b = load_per_question(published_dir), load_per_question(fresh_dir)
    presets = [p for p in presets_of(a) if p in presets_of(b)]
    if not presets:
        raise IncompatibleResults(f"{published_dir} and {fresh_dir} share no scoring preset")
    preset = presets[0]
    column = columns.col("pass_at_1_final", preset)
    joined = a.merge(b, on=["configuration", "mode", "question_id"], suffixes=("_published", "_fresh"))
    if joined.empty:
        raise IncompatibleResults(f"{published_dir} and {fresh_dir} have no (cell, question) in common")
    replies_a, replies_b = _replies(published_dir), _replies(fresh_dir)
    records: list[dict[str, Any]] = []
    for (configuration, strategy), rows in joined.groupby(["configuration", "mode"], sort=True):
        left, right = rows[f"{column}_published"] > 0.5, rows[f"{column}_fresh"] > 0.5
        flipped = sorted(str(q) for q, x, y in zip(rows["question_id"], left, right, strict=True) if x != y)
        cells = {k for k in replies_a if k[0].endswith(f"/{configuration}")} & set(replies_b)
        cells = {k for k in cells if _strategy(k[0]) == strategy}
        records.append(
            {
                "strategy": strategy,
                "configuration": configuration,
                "n": len(rows),
                "published_k": int(left.sum()),
                "fresh_k": int(right.sum()),
                "flipped": " ".join(flipped),
                "mcnemar_p": mcnemar_exact(left, right).p_value,
                "replies_paired": len(cells),
                "replies_identical": sum(replies_a[k] == replies_b[k] for k in cells),
            }
        )
    return Replication(published_dir, fresh_dir, preset, pd.DataFrame.from_records(records))


def _strategy(cell: str) -> str:
    folder = cell.split("/", 1)[0]
    return canonical_strategy(folder)
