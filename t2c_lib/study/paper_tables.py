"""The paper's tables: `analysis/headline.{csv,tex}` and, for a run of several strategies, `strategies_headline.{csv,tex}`.

`headline`: per configuration and figure of merit (Pass@1 of the final query under the run's
headline scoring preset, KG-valid chain), single-pass and feedback as k/N (each row names the loop
that made it, `loop`: `thesis-loop`, `revise`, ...), the paired
difference (feedback minus single-pass) with its bootstrap 95% CI, and the exact McNemar p,
Holm-adjusted across configurations. `strategies_headline`: the same for every other
strategy against single-pass (Holm across strategies and configurations, as
`analysis/strategies.csv`). A run with one strategy has nothing to pair: its headline holds
each configuration's k/N with the share's 95% CI.

The LaTeX is a `table` float with caption and label, `booktabs` rules (`\\usepackage{booktabs}`)
and one row per configuration and figure of merit, six narrow columns: it fits one column of a
two-column paper. The caption names the model(s), the dataset and the scoring preset, in the
words of the figures' captions (`figure_text`). The CSV holds the same rows as numbers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from t2c_lib.agent.strategies import grid_order, strategy_names
from t2c_lib.files.outputs import csv_frame
from t2c_lib.metrics.columns import BASELINE_SIDE, TREATMENT_SIDE, bound, column_mean, side, stat
from t2c_lib.metrics.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, paired_bootstrap_ci
from t2c_lib.report.analysis import BASELINE, TREATMENT, RunTables, config_order
from t2c_lib.report.figure_text import model_and_scoring
from t2c_lib.report.table_text import latex_text, p_text
from t2c_lib.runs.layout import ANALYSIS_DIR

HEADLINE, STRATEGIES_HEADLINE = "headline", "strategies_headline"
PAIRED_COLUMNS = (
    "strategy",
    "loop",
    "configuration",
    "measure",
    "n",
    "k_baseline",
    "k_strategy",
    "share_baseline",
    "share_strategy",
    "diff",
    "diff_low",
    "diff_high",
    "p_holm",
)
MEANS_COLUMNS = ("strategy", "loop", "configuration", "measure", "n", "k", "share", "share_low", "share_high")
CI_WORDS = f"paired bootstrap 95% CI ({BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED})"


def measures(tables: RunTables) -> list[tuple[str, str]]:
    """(column in the comparison and per-question tables, what the paper calls it): the two figures of merit."""
    return [(tables.col("pass_at_1_final"), "Pass@1"), ("kg_valid_chain_final", "KG-valid")]


def headline_frame(tables: RunTables) -> pd.DataFrame:
    """The headline rows as numbers (`PAIRED_COLUMNS`), or each strategy's shares (`MEANS_COLUMNS`) with nothing to pair."""
    records: list[dict[str, Any]] = []
    if tables.comparison.empty:
        rank = {c: i for i, c in enumerate(config_order(tables.strategy_means["configuration"].tolist()))}
        for r in sorted(
            tables.strategy_means.to_dict("records"), key=lambda r: (rank[r["configuration"]], r["strategy"])
        ):
            n = int(r["n"])
            for column, name in measures(tables):
                records.append(
                    {
                        "strategy": r["strategy"],
                        "loop": tables.shown(r["strategy"]),
                        "configuration": r["configuration"],
                        "measure": name,
                        "n": n,
                        "k": _k(r[column], n),
                        "share": r[column],
                        "share_low": r[bound(column, "low")],
                        "share_high": r[bound(column, "high")],
                    }
                )
        return pd.DataFrame.from_records(records, columns=list(MEANS_COLUMNS))
    rank = {c: i for i, c in enumerate(config_order(tables.comparison["configuration"].tolist()))}
    for r in sorted(tables.comparison.to_dict("records"), key=lambda r: rank[r["configuration"]]):
        n = int(r["n"])
        for column, name in measures(tables):
            base, treat = r[side(column, BASELINE_SIDE)], r[side(column, TREATMENT_SIDE)]
            records.append(
                {
                    "strategy": TREATMENT,
                    "loop": tables.shown(TREATMENT),
                    "configuration": r["configuration"],
                    "measure": name,
                    "n": n,
                    "k_baseline": _k(base, n),
                    "k_strategy": _k(treat, n),
                    "share_baseline": base,
                    "share_strategy": treat,
                    "diff": r[stat(column, "diff", "estimate")],
                    "diff_low": r[stat(column, "diff", "low")],
                    "diff_high": r[stat(column, "diff", "high")],
                    "p_holm": r[stat(column, "mcnemar", "p_holm")],
                }
            )
    return pd.DataFrame.from_records(records, columns=list(PAIRED_COLUMNS))


def strategies_frame(tables: RunTables) -> pd.DataFrame:
    """Every strategy but single-pass against single-pass, per configuration, on the questions both answered."""
    data = tables.per_question
    tested = {"pass_at_1_final": tables.col("pass_at_1_final"), "kg_valid_chain": "kg_valid_chain_final"}
    p_holm = {
        (r["strategy"], r["configuration"], metric): r.get(stat(metric, "mcnemar", "p_holm"), np.nan)
        for r in tables.strategies.to_dict("records")
        for metric in tested
    }
    names = dict(zip(tested, (name for _, name in measures(tables))))
    order = [s for s in strategy_order() if s in set(data["strategy"]) - {BASELINE}]
    records = []
    for strategy in order:
        for configuration in config_order(data["configuration"].tolist()):
            rows = data[data["configuration"] == configuration]
            base = rows[rows["strategy"] == BASELINE].set_index("question_id")
            treat = rows[rows["strategy"] == strategy].set_index("question_id")
            common = base.index.intersection(treat.index).sort_values()
            if not len(common):
                continue
            n = len(common)
            for metric, column in tested.items():
                b, t = base.loc[common, column].astype(float), treat.loc[common, column].astype(float)
                ci = paired_bootstrap_ci(b.to_numpy(), t.to_numpy())
                records.append(
                    {
                        "strategy": strategy,
                        "loop": tables.shown(strategy),
                        "configuration": configuration,
                        "measure": names[metric],
                        "n": n,
                        "k_baseline": int((b > 0.5).sum()),
                        "k_strategy": int((t > 0.5).sum()),
                        "share_baseline": column_mean(b, column),
                        "share_strategy": column_mean(t, column),
                        "diff": ci.estimate,
                        "diff_low": ci.low,
                        "diff_high": ci.high,
                        "p_holm": p_holm.get((strategy, configuration, metric), np.nan),
                    }
                )
    return pd.DataFrame.from_records(records, columns=list(PAIRED_COLUMNS))


def strategy_order() -> list[str]:
    """The compared strategies in run order (every registered one but the baseline)."""
    return [name for name in grid_order(strategy_names()) if name != BASELINE]


def write_paper_tables(tables: RunTables, run_dir: Path, run_id: str, dataset: str) -> list[Path]:
    """`headline.csv`/`.tex` under `<run>/analysis/`; `strategies_headline.*` when the run has strategies besides feedback."""
    out = run_dir / ANALYSIS_DIR
    out.mkdir(parents=True, exist_ok=True)
    written = []
    frames = [(HEADLINE, headline_frame(tables))]
    if set(tables.per_question["strategy"]) - {BASELINE, TREATMENT}:
        frames.append((STRATEGIES_HEADLINE, strategies_frame(tables)))
    for name, frame in frames:
        csv_path, tex_path = out / f"{name}.csv", out / f"{name}.tex"
        csv_frame(frame).to_csv(csv_path, index=False, float_format="%.10g", lineterminator="\n")
        tex_path.write_text(table_latex(frame, tables, run_id, dataset, name), encoding="utf-8")
        written += [csv_path, tex_path]
    return written


def caption_text(frame: pd.DataFrame, tables: RunTables, dataset: str, name: str) -> str:
    """The caption, plain text in the figures' words: what is compared, on what, by whom, under which preset, how tested."""
    n_configs = frame["configuration"].nunique() if not frame.empty else 0
    measures_words = (
        f"Pass@1: the final query is result-correct ({tables.scoring} scoring preset); KG-valid: the final query "
        "passes the whole validator chain (KG-valid chain)."
    )
    who = model_and_scoring(tables)
    if "k" in frame.columns:
        strategies = ", ".join(tables.shown(s) for s in dict.fromkeys(frame["strategy"])) or "no strategy"
        text = (
            f"{strategies} on {dataset}, per configuration: questions right as k/N (k of N questions) and the "
            f"share's bootstrap 95% CI ({BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED}); one strategy, "
            f"so no paired test. {measures_words} {who}"
        )
        return text[0].upper() + text[1:]
    if name == HEADLINE:
        loop = tables.loop(TREATMENT)
        compared, scope = f"the loop {loop.name} (FB: {loop.description})", f"{n_configs} configuration(s)"
    else:
        listed = ", ".join(tables.shown(s) for s in dict.fromkeys(frame["strategy"]))
        compared, scope = f"each strategy (S: {listed})", "strategies and configurations"
    text = (
        f"{compared} against single-pass (SP) on {dataset}, on the same questions, per configuration: questions "
        f"right as k/N (k of N questions); Δ: difference of the shares (S or FB minus SP) with its {CI_WORDS}; "
        f"p_Holm: exact McNemar, Holm-adjusted across {scope}. {measures_words} {who}"
    )
    return text[0].upper() + text[1:]


def table_latex(frame: pd.DataFrame, tables: RunTables, run_id: str, dataset: str, name: str) -> str:
    """A booktabs `table` float (caption, label): a heading row per configuration (and strategy), a row per figure of merit."""
    label = f"tab:{_label(run_id)}-{name.replace('_', '-')}"
    means = "k" in frame.columns
    if means:
        spec, head = "@{}lrl@{}", "Measure & $k/N$ & Share [95\\% CI] \\\\"
    else:
        other = "FB" if name == HEADLINE else "S"
        spec = "@{}lrrlr@{}"
        head = f"Measure & SP & {other} & $\\Delta$ [95\\% CI] & $p_{{\\mathrm{{Holm}}}}$ \\\\"
    width = len(spec.replace("@{}", ""))
    lines = [
        f"% generated by t2c (t2c_lib/study/paper_tables.py) for run {_comment(run_id)}; needs \\usepackage{{booktabs}}",
        "\\begin{table}[t]",
        "\\centering",
        "\\footnotesize",
        "\\setlength{\\tabcolsep}{4pt}",
        f"\\caption{{{_caption_tex(caption_text(frame, tables, dataset, name))}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        head,
        "\\midrule",
    ]
    previous = None
    for r in frame.to_dict("records"):
        group = (r["strategy"], r["configuration"])
        if group != previous:
            if previous is not None:
                lines.append("\\addlinespace")
            who = "" if name == HEADLINE and not means else f"{latex_text(r['loop'])}, "
            lines.append(f"\\multicolumn{{{width}}}{{@{{}}l}}{{{who}{_configuration(r['configuration'])}}} \\\\")
        if means:
            cells = [
                f"\\quad {latex_text(r['measure'])}",
                f"{int(r['k'])}/{int(r['n'])}",
                f"{_num(r['share'])} [{_num(r['share_low'])}, {_num(r['share_high'])}]",
            ]
        else:
            cells = [
                f"\\quad {latex_text(r['measure'])}",
                f"{int(r['k_baseline'])}/{int(r['n'])}",
                f"{int(r['k_strategy'])}/{int(r['n'])}",
                f"{_num(r['diff'], sign=True)} [{_num(r['diff_low'], sign=True)}, {_num(r['diff_high'], sign=True)}]",
                p_text(r["p_holm"], latex=True),
            ]
        lines.append(" & ".join(cells) + " \\\\")
        previous = group
    if frame.empty:
        lines.append(f"\\multicolumn{{{width}}}{{c}}{{no paired questions}} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(lines)


def _k(share: float, n: int) -> int:
    return int(round(float(share) * n)) if np.isfinite(share) else 0


def _configuration(name: str) -> str:
    """`Few-Shot_Nodes+Paths` -> `Few-Shot, Nodes+Paths` (escaped)."""
    prompt, _, schema = name.partition("_")
    return latex_text(f"{prompt}, {schema}" if schema else prompt)


def _num(value: float, sign: bool = False) -> str:
    if not np.isfinite(value):
        return "--"
    text = f"{value:+.2f}" if sign else f"{value:.2f}"
    return f"${text}$"


def _caption_tex(text: str) -> str:
    """A caption for LaTeX: the plain text escaped, then its Δ and p_Holm set as math."""
    return latex_text(text).replace("Δ", "$\\Delta$").replace("p\\_Holm", "$p_{\\mathrm{Holm}}$")


def _label(run_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", run_id)


def _comment(text: str) -> str:
    return re.sub(r"[\x00-\x1f\x7f]", " ", text)
