"""Comparative analysis of a run: each strategy vs single-pass per configuration, with paired tests.

Input: every cell's `metrics.csv`, `attempt_scores.csv` and `summary.json`, and the run's
`gold_audit.csv`. Output: tables (CSV and LaTeX) under `results/<run_id>/analysis/`, which
the figures in `plots.py` are drawn from. The thesis table (`comparison`) is `feedback`
(the thesis's "agentic"; old runs' `agentic` rows are read as `feedback`) against
single-pass; `strategies` covers every strategy at its measured budget.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from t2c_lib.evaluation import ATTEMPT_SCORES_FILE, GOLD_AUDIT_FILE, METRICS_FILE, SUMMARY_FILE
from t2c_lib.stats import BOOTSTRAP_SEED, as_row, holm, mcnemar_exact, paired_bootstrap_ci, wilcoxon_pratt

BASELINE, TREATMENT = "single-pass", "feedback"
LEGACY_NAMES = {"agentic": "feedback"}
ANALYSIS_DIR = "analysis"
TABLES = ("comparison", "strata", "agentic", "cumulative", "errors", "recovery", "mode_means", "strategies",
          "transitions", "validator_audit")


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
    strategies: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    transitions: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    validator_audit: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)


def load_per_question(run_dir: Path) -> pd.DataFrame:
    """Every cell's per-question metrics in one frame (sorted, so the same files give the same frame)."""
    frames = [pd.read_csv(path, keep_default_na=False) for path in sorted(run_dir.glob(f"*/*/{METRICS_FILE}"))]
    if not frames:
        raise FileNotFoundError(f"{run_dir}: no {METRICS_FILE} found; run the evaluation step first")
    data = pd.concat(frames, ignore_index=True)
    data["mode"] = data["mode"].replace(LEGACY_NAMES)
    data["strategy"] = data["mode"]
    for column, fallback in (("llm_calls", "model_calls"), ("pass_at_1_first", None), ("oracle", None), ("harmed", None)):
        if column not in data:  # cells evaluated before strategies
            data[column] = data[fallback] if fallback else np.nan
        elif fallback:
            data[column] = data[column].fillna(data[fallback])
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
        if LEGACY_NAMES.get(summary.get("mode", ""), summary.get("mode")) != TREATMENT:
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


STRATEGY_METRICS = ("pass_at_1_first", "pass_at_1", "kg_valid", "oracle", "harmed", "llm_calls", "prompt_tokens",
                    "completion_tokens")


def strategy_table(per_question: pd.DataFrame) -> pd.DataFrame:
    """Per strategy and configuration (and `ALL` pooled): Pass@1 first/final, KG-valid, oracle@N, harm,
    mean LLM calls and tokens; each strategy against single-pass with exact McNemar, Holm across the grid."""
    data = per_question.copy()
    data["tokens"] = data["prompt_tokens"] + data["completion_tokens"]
    pooled = data.assign(configuration="ALL")
    records = []
    for (strategy, configuration), rows in pd.concat([data, pooled]).groupby(["strategy", "configuration"], sort=True):
        record: dict[str, Any] = {"strategy": strategy, "configuration": configuration, "n": len(rows)}
        for metric in (*STRATEGY_METRICS, "tokens"):
            record[metric] = float(pd.to_numeric(rows[metric]).mean())
        record["harm_rate"] = record.pop("harmed")
        record["oracle_at_n"] = record.pop("oracle")
        if strategy != BASELINE and configuration != "ALL":
            scope = data[data["configuration"] == configuration]
            base = scope[scope["strategy"] == BASELINE].set_index("question_id")
            common = base.index.intersection(rows.set_index("question_id").index).sort_values()
            if len(common):
                treat = rows.set_index("question_id").loc[common]
                for metric in ("pass_at_1", "kg_valid"):
                    record.update(as_row(f"{metric}_mcnemar", mcnemar_exact(base.loc[common, metric] > 0.5, treat[metric] > 0.5)))
                record["n_paired"] = len(common)
        records.append(record)
    table = pd.DataFrame.from_records(records)
    for test in ("pass_at_1_mcnemar", "kg_valid_mcnemar"):
        column = f"{test}_p_value"
        if column in table:
            tested = table[column].notna()
            table[f"{test}_p_holm"] = np.nan
            if tested.any():
                table.loc[tested, f"{test}_p_holm"] = holm(table.loc[tested, column].tolist())
    return table


def load_attempt_scores(run_dir: Path) -> pd.DataFrame:
    """Every cell's per-attempt correctness in one frame (empty for runs evaluated before strategies)."""
    frames = [pd.read_csv(path, keep_default_na=False) for path in sorted(run_dir.glob(f"*/*/{ATTEMPT_SCORES_FILE}"))]
    if not frames:
        return pd.DataFrame(columns=["question_id", "strategy", "configuration", "iteration", "kind", "ok", "kg_valid",
                                     "error_type", "failed_validator", "result_correct"])
    data = pd.concat(frames, ignore_index=True)
    data["strategy"] = data["strategy"].replace(LEGACY_NAMES)
    return data.sort_values(["strategy", "configuration", "question_id", "iteration"], kind="stable").reset_index(drop=True)


def error_transitions(attempts: pd.DataFrame) -> pd.DataFrame:
    """Per strategy: how often the outcome of one attempt (an error type, or OK) follows another's."""
    counts: dict[tuple[str, str, str], int] = {}
    for (strategy, _, _), rows in attempts.groupby(["strategy", "configuration", "question_id"], sort=True):
        states = [e if e else ("OK" if ok else "UNKNOWN") for e, ok in zip(rows["error_type"], rows["ok"])]
        for before, after in zip(states, states[1:]):
            counts[(strategy, before, after)] = counts.get((strategy, before, after), 0) + 1
    return pd.DataFrame.from_records(
        [{"strategy": s, "from": a, "to": b, "count": n} for (s, a, b), n in sorted(counts.items())],
        columns=["strategy", "from", "to", "count"],
    )


def validator_audit(attempts: pd.DataFrame, gold: pd.DataFrame | None) -> pd.DataFrame:
    """Per validator: gold queries it rejects, and per strategy its rejections of result-correct predictions."""
    gold_rejections: dict[str, int] = {}
    n_gold = 0
    if gold is not None and not gold.empty:
        n_gold = len(gold)
        for name in gold["failed_validator"]:
            if name:
                gold_rejections[name] = gold_rejections.get(name, 0) + 1
    records = []
    rejected = attempts[attempts["failed_validator"] != ""]
    for (strategy, validator), rows in rejected.groupby(["strategy", "failed_validator"], sort=True):
        records.append({"strategy": strategy, "validator": validator, "rejections": len(rows),
                        "false_rejections": int((rows["result_correct"].astype(int) == 1).sum()),
                        "gold_rejections": gold_rejections.get(validator, 0), "gold_n": n_gold})
    for validator in sorted(set(gold_rejections) - set(rejected["failed_validator"])):
        records.append({"strategy": "", "validator": validator, "rejections": 0, "false_rejections": 0,
                        "gold_rejections": gold_rejections[validator], "gold_n": n_gold})
    return pd.DataFrame.from_records(
        records, columns=["strategy", "validator", "rejections", "false_rejections", "gold_rejections", "gold_n"])


def analyze_run(run_dir: Path, strata_columns: list[str]) -> RunTables:
    """Build every table of a run from its cells' metrics."""
    per_question = load_per_question(run_dir)
    attempts = load_attempt_scores(run_dir)
    gold_path = run_dir / GOLD_AUDIT_FILE
    gold = pd.read_csv(gold_path, keep_default_na=False) if gold_path.is_file() else None
    summaries = load_summaries(run_dir)
    overview, cumulative, errors, recovery = agentic_tables(summaries)
    weights = sorted({s["weights"] for s in summaries})
    signatures = sorted({s["signature"] for s in summaries})
    return RunTables(
        per_question=per_question, comparison=compare(per_question),
        strata=strata_breakdown(per_question, strata_columns), agentic=overview, cumulative=cumulative,
        errors=errors, recovery=recovery, mode_means=mode_means(per_question),
        strategies=strategy_table(per_question), transitions=error_transitions(attempts),
        validator_audit=validator_audit(attempts, gold), weights=",".join(weights), signature=" ; ".join(signatures) + f" ; bootstrap-seed:{BOOTSTRAP_SEED}",
    )


def write_tables(tables: RunTables, run_dir: Path) -> list[Path]:
    """CSV and LaTeX of each table under `<run>/analysis/` (floats at 10 significant digits)."""
    out_dir = run_dir / ANALYSIS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in TABLES:
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
