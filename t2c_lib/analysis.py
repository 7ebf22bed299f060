"""Comparative analysis of a run: agentic vs single-pass per configuration, with paired tests.

Input: every cell's `metrics.csv` and `summary.json`. Output: tables (CSV and LaTeX) under
`results/<run_id>/analysis/`, which the figures in `plots.py` are drawn from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from t2c_lib.evaluation import METRICS_FILE, SUMMARY_FILE
from t2c_lib.stats import BOOTSTRAP_SEED, as_row, holm, mcnemar_exact, paired_bootstrap_ci, wilcoxon_pratt

BASELINE, TREATMENT = "single-pass", "agentic"
ANALYSIS_DIR = "analysis"


@dataclass
class RunTables:
    """All tables of one run's comparison."""

    per_question: pd.DataFrame
    comparison: pd.DataFrame
    strata: pd.DataFrame
    agentic: pd.DataFrame
    cumulative: pd.DataFrame
    errors: pd.DataFrame
    recovery: pd.DataFrame
    mode_means: pd.DataFrame
    weights: str
    signature: str


def load_per_question(run_dir: Path) -> pd.DataFrame:
    """Every cell's per-question metrics in one frame (sorted, so the same files give the same frame)."""
    frames = [pd.read_csv(path, keep_default_na=False) for path in sorted(run_dir.glob(f"*/*/{METRICS_FILE}"))]
    if not frames:
        raise FileNotFoundError(f"{run_dir}: no {METRICS_FILE} found; run the evaluation step first")
    data = pd.concat(frames, ignore_index=True)
    return data.sort_values(["configuration", "mode", "question_id"], kind="stable").reset_index(drop=True)


def load_summaries(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(run_dir.glob(f"*/*/{SUMMARY_FILE}"))]


def paired_frame(per_question: pd.DataFrame, configuration: str) -> pd.DataFrame:
    """Baseline and treatment rows of one configuration joined on the question id."""
    rows = per_question[per_question["configuration"] == configuration]
    base = rows[rows["mode"] == BASELINE].set_index("question_id")
    treat = rows[rows["mode"] == TREATMENT].set_index("question_id")
    common = base.index.intersection(treat.index).sort_values()
    return base.loc[common].add_suffix("_sp").join(treat.loc[common].add_suffix("_ag"))


def compare(per_question: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: means of both modes, exact McNemar, Wilcoxon, bootstrap CIs, Holm."""
    records = []
    for configuration in sorted(per_question["configuration"].unique()):
        pair = paired_frame(per_question, configuration)
        if pair.empty:
            continue
        row: dict[str, Any] = {"configuration": configuration, "n": len(pair)}
        for metric in ("pass_at_1", "kg_valid", "llmetric_q", "jaccard_output", "success"):
            row[f"{metric}_sp"] = float(pair[f"{metric}_sp"].mean())
            row[f"{metric}_ag"] = float(pair[f"{metric}_ag"].mean())
        if "pass_at_1_ts_sp" in pair:  # test-suite accuracy beside Pass@1, and the coincidental matches
            for suffix in ("sp", "ag"):
                ts = pair[f"pass_at_1_ts_{suffix}"].astype(float)
                row[f"pass_at_1_ts_{suffix}"] = float(ts.mean())
                row[f"n_coincidental_{suffix}"] = int(((pair[f"pass_at_1_{suffix}"] > 0.5) & (ts < 0.5)).sum())
        for metric in ("pass_at_1", "kg_valid"):
            row.update(as_row(f"{metric}_mcnemar", mcnemar_exact(pair[f"{metric}_sp"] > 0.5, pair[f"{metric}_ag"] > 0.5)))
        row.update(as_row("llmetric_q_wilcoxon", wilcoxon_pratt(pair["llmetric_q_sp"], pair["llmetric_q_ag"])))
        for metric in ("pass_at_1", "kg_valid", "llmetric_q"):
            row.update(as_row(f"{metric}_diff", paired_bootstrap_ci(pair[f"{metric}_sp"], pair[f"{metric}_ag"])))
        for mode, suffix in ((BASELINE, "sp"), (TREATMENT, "ag")):
            row[f"tokens_per_question_{suffix}"] = float((pair[f"prompt_tokens_{suffix}"] + pair[f"completion_tokens_{suffix}"]).mean())
            row[f"model_calls_per_question_{suffix}"] = float(pair[f"model_calls_{suffix}"].mean())
        records.append(row)
    table = pd.DataFrame.from_records(records)
    if not table.empty:
        for test in ("pass_at_1_mcnemar", "kg_valid_mcnemar", "llmetric_q_wilcoxon"):
            table[f"{test}_p_holm"] = holm(table[f"{test}_p_value"].tolist())
    return table


def strata_breakdown(per_question: pd.DataFrame, strata_columns: list[str]) -> pd.DataFrame:
    """Pass@1, KG-valid and LLMetric-Q per stratum value and mode (all configurations pooled, and each)."""
    records = []
    for column in strata_columns:
        if column not in per_question:
            continue
        for (configuration, value, mode), rows in per_question.groupby(["configuration", column, "mode"], sort=True):
            records.append({"stratum": column, "value": value, "configuration": configuration, "mode": mode,
                            "n": len(rows), "pass_at_1": rows["pass_at_1"].mean(), "kg_valid": rows["kg_valid"].mean(),
                            "llmetric_q": rows["llmetric_q"].mean()})
        for (value, mode), rows in per_question.groupby([column, "mode"], sort=True):
            records.append({"stratum": column, "value": value, "configuration": "ALL", "mode": mode,
                            "n": len(rows), "pass_at_1": rows["pass_at_1"].mean(), "kg_valid": rows["kg_valid"].mean(),
                            "llmetric_q": rows["llmetric_q"].mean()})
    return pd.DataFrame.from_records(records)


def mode_means(per_question: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and mode: mean Pass@1 / KG-valid / LLMetric-Q with bootstrap 95% CIs."""
    records = []
    for (configuration, mode), rows in per_question.groupby(["configuration", "mode"], sort=True):
        record: dict[str, Any] = {"configuration": configuration, "mode": mode, "n": len(rows)}
        for metric in ("pass_at_1", "kg_valid", "llmetric_q"):
            values = rows[metric].to_numpy(dtype=float)
            ci = paired_bootstrap_ci(np.zeros_like(values), values)
            record.update({metric: ci.estimate, f"{metric}_low": ci.low, f"{metric}_high": ci.high})
        records.append(record)
    return pd.DataFrame.from_records(records)


def agentic_tables(summaries: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Agentic metrics per configuration, cumulative success by iteration, error types, recovery."""
    overview, cumulative, errors, recovery = [], [], [], []
    for summary in summaries:
        if summary.get("mode") != TREATMENT:
            continue
        agentic, configuration = summary["agentic"], summary["configuration"]
        overview.append({
            "configuration": configuration, "n": agentic["n_questions"], "success_rate": agentic["success_rate"],
            "first_attempt_success_rate": agentic["first_attempt_success_rate"],
            "mean_iterations": agentic["mean_iterations"], "recovery_rate": agentic["recovery_rate"],
            "n_initially_failed": agentic["n_initially_failed"], "n_recovered": agentic["n_recovered"],
            "llmetric": summary["llmetric"], "weights": summary["weights"],
        })
        for iteration, rate in enumerate(agentic["cumulative_success"], start=1):
            cumulative.append({"configuration": configuration, "iteration": iteration, "success_rate": rate})
        for error_type, count in sorted(agentic["error_counts"].items()):
            errors.append({"configuration": configuration, "error_type": error_type, "count": count})
        for error_type, rate in sorted(agentic["recovery_by_error_type"].items()):
            recovery.append({"configuration": configuration, "error_type": error_type, "recovery_rate": rate,
                             "n_first": agentic["first_error_counts"].get(error_type, 0)})
    return (pd.DataFrame.from_records(overview), pd.DataFrame.from_records(cumulative),
            pd.DataFrame.from_records(errors), pd.DataFrame.from_records(recovery))


def analyze_run(run_dir: Path, strata_columns: list[str]) -> RunTables:
    """Build every table of a run from its cells' metrics."""
    per_question = load_per_question(run_dir)
    summaries = load_summaries(run_dir)
    overview, cumulative, errors, recovery = agentic_tables(summaries)
    weights = sorted({s["weights"] for s in summaries})
    signatures = sorted({s["signature"] for s in summaries})
    return RunTables(
        per_question=per_question, comparison=compare(per_question),
        strata=strata_breakdown(per_question, strata_columns), agentic=overview, cumulative=cumulative,
        errors=errors, recovery=recovery, mode_means=mode_means(per_question),
        weights=",".join(weights), signature=" ; ".join(signatures) + f" ; bootstrap-seed:{BOOTSTRAP_SEED}",
    )


def write_tables(tables: RunTables, run_dir: Path) -> list[Path]:
    """CSV and LaTeX of each table under `<run>/analysis/` (floats at 10 significant digits)."""
    out_dir = run_dir / ANALYSIS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("comparison", "strata", "agentic", "cumulative", "errors", "recovery", "mode_means"):
        frame: pd.DataFrame = getattr(tables, name)
        csv_path = out_dir / f"{name}.csv"
        frame.to_csv(csv_path, index=False, float_format="%.10g", lineterminator="\n")
        written.append(csv_path)
    latex_path = out_dir / "comparison.tex"
    latex_path.write_text(comparison_latex(tables), encoding="utf-8")
    written.append(latex_path)
    (out_dir / "signature.txt").write_text(tables.signature + "\n", encoding="utf-8")
    return written


def comparison_latex(tables: RunTables) -> str:
    """The paper's main table: per configuration, Pass@1 / KG-valid / LLMetric, both modes, Holm p."""
    lines = [
        "% generated by t2c_lib.analysis; weights: " + tables.weights,
        "\\begin{tabular}{lrrrrrrrrr}",
        "\\hline",
        "Configuration & $n$ & \\multicolumn{2}{c}{Pass@1} & $p_{\\mathrm{Holm}}$ & \\multicolumn{2}{c}{KG-valid} & "
        "$p_{\\mathrm{Holm}}$ & \\multicolumn{2}{c}{LLMetric} \\\\",
        " & & SP & AG & & SP & AG & & SP & AG \\\\",
        "\\hline",
    ]
    for row in tables.comparison.to_dict("records"):
        lines.append(
            f"{_tex(row['configuration'])} & {row['n']} & {row['pass_at_1_sp']:.3f} & {row['pass_at_1_ag']:.3f} & "
            f"{_p(row['pass_at_1_mcnemar_p_holm'])} & {row['kg_valid_sp']:.3f} & {row['kg_valid_ag']:.3f} & "
            f"{_p(row['kg_valid_mcnemar_p_holm'])} & {row['llmetric_q_sp']:.3f} & {row['llmetric_q_ag']:.3f} \\\\"
        )
    lines += ["\\hline", "\\end{tabular}", ""]
    return "\n".join(lines)


def _tex(text: str) -> str:
    return text.replace("_", "\\_").replace("&", "\\&")


def _p(value: float) -> str:
    return "$<$0.001" if value < 0.001 else f"{value:.3f}"
