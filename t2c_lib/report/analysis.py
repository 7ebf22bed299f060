"""Comparative analysis of a run: each strategy vs single-pass per configuration, with paired tests.

Input: every cell's `metrics.csv`, `attempt_scores.csv` and `summary.json`, and the run's
`gold_audit.csv`. Output: tables (CSV and LaTeX) under `results/<run_id>/analysis/`, which
the figures in `plots.py` are drawn from. The thesis table (`comparison`) is `feedback`
(the thesis's "agentic"; old runs' `agentic` rows are read as `feedback`) against
single-pass; `strategies` covers every strategy at its measured budget.

What the loop did is in the tables beside what it achieved, so "the model repeated itself"
is never read as "the loop could not help": `agentic` and `strategies` carry the refinements,
how many repeated an already failed query, as two rates side by side (`columns.REPEAT_RATES`:
`refinement_repeat_rate`, "repeat rate, all model replies", counts the replies the repeat guard
rejected; `accepted_refinement_repeat_rate`, "repeat rate, accepted refinements", only the
refinements that stood; equal without the guard), and what each changed (`n_change_none`,
`n_change_edit`, `n_change_new`, `n_change_no_query`); `recovery` and `recovery_by_strategy` say,
per error type of the first attempt, how many of those questions ended passing the chain; the
`t2c analyze` summary shows both repeat rates and the recoveries as k/n.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from t2c_lib.agent.names import FEEDBACK, LEGACY_STRATEGY_NAMES, LoopName, canonical_strategy
from t2c_lib.agent.strategies import check_loop, loop_name, recorded_loop
from t2c_lib.datasets import DatasetError
from t2c_lib.errors import IncompatibleResults, MissingResults
from t2c_lib.files.outputs import csv_frame
from t2c_lib.metrics import columns
from t2c_lib.metrics.agentic import UNKNOWN_ERROR
from t2c_lib.metrics.columns import BASELINE_SIDE, TREATMENT_SIDE, Kind, bound, col, side, stat, stat_row
from t2c_lib.metrics.stats import BOOTSTRAP_SEED, holm, mcnemar_exact, paired_bootstrap_ci, wilcoxon_pratt
from t2c_lib.records import Change
from t2c_lib.report.figure_text import BASELINE, TREATMENT
from t2c_lib.report.table_text import latex_text, p_text
from t2c_lib.runs.gold_screen import read_gold_note
from t2c_lib.runs.layout import (
    ANALYSIS_DIR,
    ATTEMPT_SCORES_FILE,
    GOLD_AUDIT_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    SCREEN_DIR,
    SUMMARY_FILE,
)
from t2c_lib.runs.runlog import read_json
from t2c_lib.runs.summary_record import CellSummary, read_summary

TABLES = (
    "comparison",
    "strata",
    "agentic",
    "cumulative",
    "errors",
    "recovery",
    "recovery_by_strategy",
    "strategy_means",
    "by_scoring",
    "reference",
    "strategies",
    "transitions",
    "validator_audit",
)
TABLE_FILES = {"strategy_means": "mode_means"}
"""Tables whose file keeps an older name (published runs are read and compared by file name)."""


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
    strategy_means: pd.DataFrame
    weights: str
    signature: str
    scoring: str = "t2c"  # the headline scoring preset
    by_scoring: pd.DataFrame = field(default_factory=pd.DataFrame)
    reference: pd.DataFrame = field(default_factory=pd.DataFrame)
    strategies: pd.DataFrame = field(default_factory=pd.DataFrame)
    transitions: pd.DataFrame = field(default_factory=pd.DataFrame)
    validator_audit: pd.DataFrame = field(default_factory=pd.DataFrame)
    recovery_by_strategy: pd.DataFrame = field(default_factory=pd.DataFrame)
    models: tuple[str, ...] = ()  # the model ids that answered (from the cells' summaries)
    strata_values: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # stratum -> its values in order (Easy < Medium < Hard)
    language: str = "en"  # the dataset's language: figures get a thesis-language variant when it is not English
    outside_grid: tuple[str, ...] = ()  # evaluated cells of the run folder outside its grid: not pooled
    loops: dict[str, LoopName] = field(default_factory=dict)  # strategy -> the loop its cells ran (manifests)
    gold: str = (
        ""  # how many gold pairs the run's screen kept and why it dropped the others (`runs.gold_screen.gold_note`)
    )

    def loop(self, strategy: str) -> LoopName:
        """The loop `strategy`'s cells ran: its one name and description (the strategy's defaults if unrecorded)."""
        return self.loops.get(strategy) or loop_name(strategy)

    def shown(self, strategy: str) -> str:
        """What tables and figures call `strategy`'s cells: the loop's one name (`thesis-loop`, `revise`, ...)."""
        return self.loop(strategy).name

    def grid_note(self) -> str:
        """Which cells of the run folder were not pooled, and why; "" when every cell is in the grid."""
        if not self.outside_grid:
            return ""
        return (
            f"not pooled: {', '.join(self.outside_grid)} (outside the run's grid: made with other parameters; "
            "move or delete the folder, or analyze it with a parameter file whose grid has it)"
        )

    def col(self, metric: str, scoring: str | None = None) -> str:
        """The column of a per-preset metric, under the headline preset unless named."""
        return col(metric, scoring or self.scoring)

    def headline_table(self) -> pd.DataFrame:
        """Per configuration: Pass@1 final (every preset) and KG-valid chain/structural, both strategies, Holm p."""
        if self.comparison.empty:
            return self.comparison
        names = ["configuration", "n"]
        for metric in [
            *columns.cols(["pass_at_1_final"], presets_of(self.per_question)),
            "kg_valid_chain_final",
            "kg_valid_structural_final",
        ]:
            names += [side(metric, BASELINE_SIDE), side(metric, TREATMENT_SIDE), stat(metric, "mcnemar", "p_holm")]
        return self.comparison[names]


PROMPT_ORDER = ("Zero-Shot", "Few-Shot", "CoT")
SCHEMA_ORDER = ("Full", "Nodes+Paths", "Only-Paths", "Retrieved")


def config_order(configurations: list[str]) -> list[str]:
    """Configurations in the thesis order: prompt type, then schema format."""

    def key(name: str) -> tuple[int, int, str]:
        prompt, _, schema = name.partition("_")
        return (_index(PROMPT_ORDER, prompt), _index(SCHEMA_ORDER, schema), name)

    return sorted(set(configurations), key=key)


def _index(order: tuple[str, ...], value: str) -> int:
    return order.index(value) if value in order else len(order)


KG_VALID_METRICS = ("kg_valid_structural_final", "kg_valid_chain_final")


def presets_of(per_question: pd.DataFrame) -> list[str]:
    """The scoring presets (column slugs) a run was evaluated under, headline first."""
    found = columns.presets_in(per_question.columns)
    if not found:
        raise IncompatibleResults(
            "metrics.csv has no pass_at_1_final__<preset> columns: made by an older t2c; evaluate the run again "
            "with the settings it recorded (`t2c evaluate --run-id RUN_ID` reads them from its run.json)"
        )
    return found


def read_table(path: Path) -> pd.DataFrame:
    """A CSV a step wrote (metrics, attempt scores, gold audit); a damaged one is a one-line error naming it."""
    try:
        return pd.read_csv(path, keep_default_na=False)
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise IncompatibleResults(
            f"{path}: not a readable CSV ({exc}); write it again with the step that made it"
        ) from exc


def cell_files(run_dir: Path, name: str, folders: list[Path] | None = None) -> list[Path]:
    """Each cell's file `name` in the run, sorted; only the cells in `folders` (a grid's folders) when given."""
    found = sorted(run_dir.glob(f"*/*/{name}"))
    if folders is None:
        return found
    keep = {Path(folder).resolve() for folder in folders}
    return [path for path in found if path.parent.resolve() in keep]


def outside_grid(run_dir: Path, folders: list[Path]) -> tuple[str, ...]:
    """The run's evaluated cells (`<strategy>/<configuration>`) that are not among the grid's `folders`."""
    inside = set(cell_files(run_dir, METRICS_FILE, folders)) | set(cell_files(run_dir, SUMMARY_FILE, folders))
    evaluated = [*run_dir.glob(f"*/*/{METRICS_FILE}"), *run_dir.glob(f"*/*/{SUMMARY_FILE}")]
    return tuple(sorted({p.parent.relative_to(run_dir).as_posix() for p in evaluated if p not in inside}))


def load_per_question(run_dir: Path, folders: list[Path] | None = None) -> pd.DataFrame:
    """Every cell's per-question metrics in one frame (sorted, so the same files give the same frame); `folders`: only those cells."""
    frames = [_cell_frame(path) for path in cell_files(run_dir, METRICS_FILE, folders)]
    if not frames:
        elsewhere = outside_grid(run_dir, folders) if folders is not None else ()
        where = f" (only cells outside the run's grid have one: {', '.join(elsewhere)})" if elsewhere else ""
        raise MissingResults(
            f"{run_dir}: no {METRICS_FILE} found in the grid's cells{where}; evaluate them first "
            f"(`t2c evaluate --run-id {run_dir.name}`: the settings the run recorded)"
        )
    data = pd.concat(frames, ignore_index=True)
    data["mode"] = data["strategy"]  # in memory only: the run comparison and replication join on the old name
    for column, fallback in (
        ("pass_at_1_first", None),
        ("oracle", None),
        ("harmed", None),
        *((c.name, None) for c in columns.LOOP),
    ):
        if column not in data:  # cells evaluated before strategies
            data[column] = data[fallback] if fallback else np.nan
        elif fallback:
            data[column] = data[column].fillna(data[fallback])
    return data.sort_values(["configuration", "mode", "question_id"], kind="stable").reset_index(drop=True)


def _cell_frame(path: Path) -> pd.DataFrame:
    """One cell's `metrics.csv` with today's columns: old files' `mode` / `model_calls` mapped, `loop` checked or derived.

    A file without `loop` (written before it) gets the loop its cell's manifest ran; a file whose `loop` disagrees
    with the manifest's options is refused (`agent.strategies.LoopNameMismatch`).
    """
    frame = read_table(path)
    for old, new in columns.LEGACY_COLUMNS.items():
        if old in frame and new not in frame:
            frame[new] = frame[old]
        frame = frame.drop(columns=[old], errors="ignore")
    frame["strategy"] = frame["strategy"].astype(str).replace(LEGACY_STRATEGY_NAMES)
    loop = cell_loop(path.parent, str(frame["strategy"].iloc[0]) if len(frame) else FEEDBACK)
    for recorded in sorted({str(v) for v in frame.get("loop", pd.Series(dtype=str)).unique()}):
        check_loop(loop, recorded, str(path))
    frame["loop"] = loop.name
    return frame


def cell_loop(directory: Path, strategy: str) -> LoopName:
    """The loop a cell ran: from its manifest (its recorded `loop` checked), else the strategy's with its defaults."""
    manifest = directory / MANIFEST_FILE
    if manifest.is_file():
        return recorded_loop(read_json(manifest), str(manifest))
    return loop_name(strategy)


def run_loops(run_dir: Path, folders: list[Path] | None = None) -> dict[str, LoopName]:
    """Strategy -> the one loop its cells ran (their manifests); a strategy whose cells ran different loops is refused."""
    found: dict[str, set[LoopName]] = {}
    for path in cell_files(run_dir, METRICS_FILE, folders):
        strategy = canonical_strategy(path.parent.parent.name)  # <run>/<strategy>/<config>
        found.setdefault(strategy, set()).add(cell_loop(path.parent, strategy))
    for strategy, loops in found.items():
        if len(loops) != 1:
            names = ", ".join(sorted(loop.name for loop in loops))
            raise IncompatibleResults(
                f"{run_dir}: strategy {strategy!r} ran different loops ({names}): analyze each loop's cells apart"
            )
    return {strategy: next(iter(loops)) for strategy, loops in sorted(found.items())}


def with_loop(table: pd.DataFrame, loops: dict[str, LoopName]) -> pd.DataFrame:
    """`table` with a `loop` column beside its `strategy` (the loop's one name), so each row says which loop made it."""
    if table.empty or "strategy" not in table or "loop" in table:
        return table
    out = table.copy()
    names = [loops[s].name if s in loops else loop_name(str(s)).name for s in out["strategy"]]
    out.insert(out.columns.get_loc("strategy") + 1, "loop", names)
    return out


def load_summaries(run_dir: Path, folders: list[Path] | None = None) -> list[CellSummary]:
    """Every cell's `summary.json` record (old files' keys mapped, `summary_record`)."""
    return [read_summary(p) for p in cell_files(run_dir, SUMMARY_FILE, folders)]


def paired_frame(per_question: pd.DataFrame, configuration: str) -> pd.DataFrame:
    """Baseline and treatment rows of one configuration joined on the question id."""
    rows = per_question[per_question["configuration"] == configuration]
    base = rows[rows["strategy"] == BASELINE].set_index("question_id")
    treat = rows[rows["strategy"] == TREATMENT].set_index("question_id")
    common = base.index.intersection(treat.index).sort_values()
    return (
        base.loc[common]
        .add_suffix(side("", BASELINE_SIDE))
        .join(treat.loc[common].add_suffix(side("", TREATMENT_SIDE)))
    )


def compare(per_question: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: means of both strategies, exact McNemar, Wilcoxon, bootstrap CIs, Holm.

    Every scoring preset's Pass@1 (first attempt and final) and LLMetric-Q, and both
    KG-valid kinds, each under its own column name.
    """
    presets = presets_of(per_question)
    tested = [*KG_VALID_METRICS, *columns.cols(["pass_at_1_final"], presets), *columns.cols(["llmetric_q"], presets)]
    binary = [m for m in tested if _kind(m) is Kind.BINARY]  # exact McNemar
    graded = [m for m in tested if _kind(m) is Kind.GRADED]  # Wilcoxon signed-rank (Pratt)
    means = [*binary, "success", *columns.cols(["pass_at_1_first", "jaccard_output", "llmetric_q"], presets)]
    records = []
    for configuration in sorted(per_question["configuration"].unique()):
        pair = paired_frame(per_question, configuration)
        if pair.empty:
            continue
        row: dict[str, Any] = {"configuration": configuration, "n": len(pair)}
        sp, fb = BASELINE_SIDE, TREATMENT_SIDE
        for metric in means:
            row[side(metric, sp)] = columns.column_mean(pair[side(metric, sp)], metric)
            row[side(metric, fb)] = columns.column_mean(pair[side(metric, fb)], metric)
        if (
            side("pass_at_1_ts", sp) in pair
        ):  # test-suite accuracy beside Pass@1 (headline preset), and the coincidental matches
            for suffix in (sp, fb):
                ts = pair[side("pass_at_1_ts", suffix)].astype(float)
                row[side("pass_at_1_ts", suffix)] = columns.column_mean(ts, "pass_at_1_ts")
                passed = pair[side(col("pass_at_1_final", presets[0]), suffix)] > 0.5
                row[side("n_coincidental", suffix)] = int((passed & (ts < 0.5)).sum())
        for metric in binary:
            row.update(
                stat_row(metric, "mcnemar", mcnemar_exact(pair[side(metric, sp)] > 0.5, pair[side(metric, fb)] > 0.5))
            )
        for metric in graded:
            row.update(stat_row(metric, "wilcoxon", wilcoxon_pratt(pair[side(metric, sp)], pair[side(metric, fb)])))
        for metric in [*binary, *graded]:
            row.update(stat_row(metric, "diff", paired_bootstrap_ci(pair[side(metric, sp)], pair[side(metric, fb)])))
        for suffix in (sp, fb):
            tokens = pair[side("prompt_tokens", suffix)] + pair[side("completion_tokens", suffix)]
            row[side("tokens_per_question", suffix)] = columns.column_mean(tokens, columns.TOKENS)
            row[side("model_calls_per_question", suffix)] = columns.column_mean(
                pair[side("llm_calls", suffix)], "llm_calls"
            )
        records.append(row)
    table = pd.DataFrame.from_records(records)
    if not table.empty:
        tests = [(m, "mcnemar") for m in binary] + [(m, "wilcoxon") for m in graded]
        for metric, test in tests:
            table[stat(metric, test, "p_holm")] = holm(table[stat(metric, test, "p_value")].tolist())
    return table


def _kind(name: str) -> Kind:
    """The kind of a metrics.csv column, per-preset names included (`llmetric_q__t2c` is graded)."""
    return columns.spec(name.split(columns.PRESET_SEPARATOR, 1)[0]).kind


def _stratum_means(rows: pd.DataFrame, presets: list[str], headline: str) -> dict[str, Any]:
    names = [*columns.cols(["pass_at_1_final"], presets), *KG_VALID_METRICS, col("llmetric_q", headline)]
    return {"n": len(rows), **columns.column_means(rows, names)}


STRATA_KEYS = ("stratum", "value", "configuration", "strategy")
"""The columns that place a row of the strata table (its numbers follow)."""


def strata_breakdown(
    per_question: pd.DataFrame, strata_columns: list[str] | dict[str, tuple[str, ...]], headline: str | None = None
) -> pd.DataFrame:
    """Pass@1 final (every preset), KG-valid (both kinds) and LLMetric-Q per stratum value and strategy.

    `strata_columns` may map each stratum to its values in their order (the dataset's
    declaration: Easy, Medium, Hard); rows then follow that order instead of the alphabet.
    """
    presets = presets_of(per_question)
    headline = columns.slug(headline) if headline else presets[0]
    records = []
    for column in strata_columns:
        if column not in per_question:
            continue
        for (configuration, value, strategy), rows in per_question.groupby(
            ["configuration", column, "strategy"], sort=True
        ):
            records.append(
                {
                    "stratum": column,
                    "value": value,
                    "configuration": configuration,
                    "strategy": strategy,
                    **_stratum_means(rows, presets, headline),
                }
            )
        for (value, strategy), rows in per_question.groupby([column, "strategy"], sort=True):
            records.append(
                {
                    "stratum": column,
                    "value": value,
                    "configuration": "ALL",
                    "strategy": strategy,
                    **_stratum_means(rows, presets, headline),
                }
            )
    stratum_order = list(strata_columns)
    declared = strata_columns if isinstance(strata_columns, dict) else {}

    def key(record: dict[str, Any]) -> tuple[Any, ...]:
        values = tuple(declared.get(record["stratum"], ()))
        value = str(record["value"])
        return (
            stratum_order.index(record["stratum"]),
            record["configuration"] == "ALL",
            record["configuration"],
            values.index(value) if value in values else len(values),
            value,
            record["strategy"],
        )

    records.sort(key=key)
    # a dataset without strata (an imported graph) still gets the table's columns: readers select on them
    return pd.DataFrame.from_records(records, columns=None if records else list(STRATA_KEYS))


def strategy_means(per_question: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and strategy: mean Pass@1 (first/final, every preset), KG-valid (both), LLMetric-Q, with 95% CIs."""
    presets = presets_of(per_question)
    metrics = [*columns.cols(["pass_at_1_first", "pass_at_1_final", "llmetric_q"], presets), *KG_VALID_METRICS]
    records = []
    for (configuration, strategy), rows in per_question.groupby(["configuration", "strategy"], sort=True):
        record: dict[str, Any] = {"configuration": configuration, "strategy": strategy, "n": len(rows)}
        for metric in metrics:
            ci = columns.column_mean_ci(rows[metric], metric)
            record.update({metric: ci.estimate, bound(metric, "low"): ci.low, bound(metric, "high"): ci.high})
        records.append(record)
    return pd.DataFrame.from_records(records)


THESIS_COLUMNS = (
    "pass_at_1_final_pct",
    "kg_valid_chain_pct",
    "jaccard_output",
    "bleu",
    "rouge_l_f1",
    "jaro_winkler",
    "jaccard_tokens",
    "llmetric_pct",
    "mean_iterations",
    "first_attempt_pct",
    "recovery_pct",
)
"""The thesis's summary columns, in its units (percent where it used percent)."""


def by_scoring_table(per_question: pd.DataFrame, summaries: list[CellSummary]) -> pd.DataFrame:
    """Per preset, configuration and strategy, the thesis's summary columns (its run-level definitions).

    Pass@1 is of the final query; KG-valid is the chain one; first-attempt = attempt 1
    passed the chain; recovery = later success among first failures; LLMetric in percent.
    """
    llm = {(s.configuration, s.strategy, name): v.llmetric for s in summaries for name, v in s.by_scoring.items()}
    records = []
    for s in presets_of(per_question):
        name = columns.preset_name(s)
        for (configuration, strategy), rows in per_question.groupby(["configuration", "strategy"], sort=True):
            failed_first = rows[rows["first_attempt_ok"] == 0]
            recovery = (
                100.0 * columns.column_mean(failed_first["success"], "success") if len(failed_first) else float("nan")
            )
            mean = {
                metric: columns.column_mean(rows[col(metric, s)], col(metric, s))
                for metric in (
                    "pass_at_1_final",
                    "pass_at_1_first",
                    "jaccard_output",
                    "bleu",
                    "rouge_l_f1",
                    "jaro_winkler",
                    "jaccard_tokens",
                )
            }
            records.append(
                {
                    "scoring": name,
                    "configuration": configuration,
                    "strategy": strategy,
                    "n": len(rows),
                    "pass_at_1_final_pct": 100.0 * mean["pass_at_1_final"],
                    "kg_valid_chain_pct": 100.0
                    * columns.column_mean(rows["kg_valid_chain_final"], "kg_valid_chain_final"),
                    "kg_valid_structural_pct": 100.0
                    * columns.column_mean(rows["kg_valid_structural_final"], "kg_valid_structural_final"),
                    "pass_at_1_first_pct": 100.0 * mean["pass_at_1_first"],
                    "jaccard_output": mean["jaccard_output"],
                    "bleu": mean["bleu"],
                    "rouge_l_f1": mean["rouge_l_f1"],
                    "jaro_winkler": mean["jaro_winkler"],
                    "jaccard_tokens": mean["jaccard_tokens"],
                    "llmetric_pct": 100.0 * llm.get((configuration, strategy, name), float("nan")),
                    "mean_iterations": columns.column_mean(rows["iterations"], "iterations"),
                    "first_attempt_pct": 100.0 * columns.column_mean(rows["first_attempt_ok"], "first_attempt_ok"),
                    "recovery_pct": recovery,
                }
            )
    return pd.DataFrame.from_records(records)


PUBLISHED_FILE = Path("reference") / "thesis_published.csv"
"""Inside a dataset folder: numbers a published study reported on its own graph and questions."""
PUBLISHED_COLUMNS = (
    "source_repo",
    "commit",
    "source_file",
    "model",
    "endpoint",
    "configuration",
    "n",
    "denominator",
    "metric",
    "value",
)


def load_published(dataset_dir: Path) -> pd.DataFrame:
    """The dataset's published reference numbers (long format, with provenance); empty when it has none."""
    path = dataset_dir / PUBLISHED_FILE
    if not path.is_file():
        return pd.DataFrame(columns=list(PUBLISHED_COLUMNS))
    frame = pd.read_csv(path, keep_default_na=False)
    missing = [c for c in PUBLISHED_COLUMNS if c not in frame.columns]
    if missing:
        raise DatasetError(path, f"missing column(s) {', '.join(missing)}")
    unknown = sorted(set(frame["metric"]) - set(THESIS_COLUMNS))
    if unknown:
        raise DatasetError(path, f"unknown metric(s) {', '.join(unknown)} (valid: {', '.join(THESIS_COLUMNS)})")
    frame["value"] = pd.to_numeric(frame["value"], errors="raise")
    return frame


def beside_reference(by_scoring: pd.DataFrame, published: pd.DataFrame, run_label: str) -> pd.DataFrame:
    """This run's kg-axel numbers (the feedback strategy: the thesis ran its loop) beside the published ones, one row each.

    Each published row cites its work (`citation`, from CITATION.cff: title, author, year, link, commit).
    """
    from t2c_lib.report.citations import citation_for_repository

    if published.empty or by_scoring.empty:
        return pd.DataFrame()
    cited: dict[str, str] = {}
    ours = by_scoring[(by_scoring["scoring"] == "kg-axel") & (by_scoring["strategy"] == TREATMENT)]
    rows = [
        {
            "source": run_label,
            "model": "",
            "endpoint": "",
            "configuration": r["configuration"],
            "n": r["n"],
            **{c: r[c] for c in THESIS_COLUMNS},
            "citation": "",
        }
        for r in ours.to_dict("records")
    ]
    wide = published.pivot_table(
        index=["source_repo", "source_file", "model", "endpoint", "configuration", "n"],
        columns="metric",
        values="value",
        aggfunc="first",
    ).reset_index()
    for r in wide.to_dict("records"):
        rows.append(
            {
                "source": f"published: {r['source_file']} (thesis graph and questions)",
                "model": r["model"],
                "endpoint": r["endpoint"],
                "configuration": r["configuration"],
                "n": int(r["n"]),
                **{c: r.get(c, float("nan")) for c in THESIS_COLUMNS},
                "citation": cited.setdefault(r["source_repo"], citation_for_repository(r["source_repo"])),
            }
        )
    return pd.DataFrame.from_records(rows)


def agentic_tables(summaries: list[CellSummary]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Agentic metrics per configuration, cumulative success by iteration, error types, recovery."""
    overview, cumulative, errors, recovery = [], [], [], []
    for summary in summaries:
        if summary.strategy != TREATMENT:
            continue
        agentic, configuration = summary.agentic, summary.configuration
        overview.append(
            {
                "configuration": configuration,
                "n": agentic["n_questions"],
                "success_rate": agentic["success_rate"],
                "first_attempt_success_rate": agentic["first_attempt_success_rate"],
                "mean_iterations": agentic["mean_iterations"],
                "recovery_rate": agentic["recovery_rate"],
                "n_initially_failed": agentic["n_initially_failed"],
                "n_recovered": agentic["n_recovered"],
                **_loop_overview(agentic),
                "llmetric": summary.llmetric,
                "scoring": summary.scoring,
                "weights": summary.weights,
            }
        )
        for iteration, rate in enumerate(agentic["cumulative_success"], start=1):
            cumulative.append({"configuration": configuration, "iteration": iteration, "success_rate": rate})
        for error_type, count in sorted(agentic["error_counts"].items()):
            errors.append({"configuration": configuration, "error_type": error_type, "count": count})
        for error_type, rate in sorted(agentic["recovery_by_error_type"].items()):
            recovery.append(
                {
                    "configuration": configuration,
                    "error_type": error_type,
                    "recovery_rate": rate,
                    "n_first": agentic["first_error_counts"].get(error_type, 0),
                    "n_recovered": agentic.get("first_error_recovered", {}).get(error_type),
                }
            )
    return (
        pd.DataFrame.from_records(overview),
        pd.DataFrame.from_records(cumulative),
        pd.DataFrame.from_records(errors),
        pd.DataFrame.from_records(recovery),
    )


def _loop_overview(agentic: dict[str, Any]) -> dict[str, Any]:
    """A summary's refinement counts as table columns (None for cells evaluated before t2c counted them)."""
    changes = agentic.get("refinement_changes") or {}
    return {
        **{
            name: agentic.get(name)
            for rate in columns.REPEAT_RATES
            for name in (rate.refinements, rate.repeats, rate.name)
        },
        **{columns.change_column(change): changes.get(change.value) for change in Change},
        "n_refined_questions": agentic.get("n_refined_questions"),
        "n_questions_only_repeats": agentic.get("n_questions_only_repeats"),
    }


def _loop_sums(rows: pd.DataFrame) -> dict[str, Any]:
    """Refinements, repeats and changes summed over questions, and both repeat rates (`columns.REPEAT_RATES`: all
    model replies, accepted refinements), NaN without refinements or from cells evaluated before they were counted."""
    out: dict[str, Any] = {}
    for c in columns.LOOP:
        values = pd.to_numeric(rows[c.name], errors="coerce") if c.name in rows else pd.Series(dtype=float)
        out[c.name] = float(values.sum()) if values.notna().any() else np.nan
    for rate in columns.REPEAT_RATES:
        n = out[rate.refinements]
        out[rate.name] = out[rate.repeats] / n if n and np.isfinite(n) else np.nan
    return out


def _recovery_sums(rows: pd.DataFrame) -> dict[str, Any]:
    """First attempts that failed the chain, how many of those questions ended passing it, and the share."""
    failed = rows[rows["first_attempt_ok"].astype(int) == 0]
    recovered = int(failed["success"].astype(int).sum())
    return {
        "n_initially_failed": len(failed),
        "n_recovered": recovered,
        "recovery_rate": recovered / len(failed) if len(failed) else np.nan,
    }


def recovery_by_strategy(per_question: pd.DataFrame) -> pd.DataFrame:
    """Per strategy, configuration (and `ALL` pooled) and error type of the first attempt: questions whose
    first attempt failed with it (`n_first`), how many ended passing the chain (`n_recovered`), the share."""
    failed = per_question[per_question["first_attempt_ok"].astype(int) == 0].assign(
        first_error_type=lambda f: f["first_error_type"].replace("", UNKNOWN_ERROR)
    )
    records = []
    for (strategy, configuration, error_type), rows in pd.concat([failed, failed.assign(configuration="ALL")]).groupby(
        ["strategy", "configuration", "first_error_type"], sort=True
    ):
        recovered = int(rows["success"].astype(int).sum())
        records.append(
            {
                "strategy": strategy,
                "configuration": configuration,
                "error_type": error_type,
                "n_first": len(rows),
                "n_recovered": recovered,
                "recovery_rate": recovered / len(rows),
            }
        )
    return pd.DataFrame.from_records(
        records, columns=["strategy", "configuration", "error_type", "n_first", "n_recovered", "recovery_rate"]
    )


def strategy_metrics(headline: str) -> dict[str, str]:
    """The means of `strategy_table`, in its column order: table column -> the column it averages (Pass@1 under the
    headline preset, KG-valid of the final query, ...; `metrics.csv`'s or a `columns.DERIVED` one)."""
    return {
        "pass_at_1_first": col("pass_at_1_first", headline),
        "pass_at_1_final": col("pass_at_1_final", headline),
        "kg_valid_structural": columns.at("kg_valid_structural", "final"),
        "kg_valid_chain": columns.at("kg_valid_chain", "final"),
        "llm_calls": "llm_calls",
        "prompt_tokens": "prompt_tokens",
        "completion_tokens": "completion_tokens",
        "tokens": columns.TOKENS,
        "harm_rate": "harmed",
        "oracle_at_n": "oracle",
    }


STRATEGY_SUMMARY = (
    "strategy",
    "configuration",
    "n",
    "pass_at_1_first",
    "pass_at_1_final",
    "kg_valid_structural",
    "kg_valid_chain",
    "oracle_at_n",
    "harm_rate",
    "llm_calls",
    "tokens",
    "n_refinements",
    columns.REFINEMENT_REPEAT_RATE,
    "n_accepted_refinements",
    columns.ACCEPTED_REPEAT_RATE,
    "recovery_rate",
    stat("pass_at_1_final", "mcnemar", "p_holm"),
)
"""The columns of `strategy_table` that `t2c analyze` prints when a run has more than two strategies."""


def strategy_table(per_question: pd.DataFrame) -> pd.DataFrame:
    """Per strategy and configuration (and `ALL` pooled): Pass@1 first/final (headline preset), KG-valid
    structural and chain (final query), oracle@N, harm, mean LLM calls and tokens; what the refinements did
    (summed: refinements, repeats of a failed query, changes; both repeat rates, all model replies and accepted
    refinements: `columns.REPEAT_RATES`) and recovery (first
    attempts failing the chain that ended passing it); each strategy against single-pass with exact McNemar,
    Holm across the grid."""
    means = strategy_metrics(presets_of(per_question)[0])
    data = per_question.assign(**{columns.TOKENS: per_question["prompt_tokens"] + per_question["completion_tokens"]})
    pooled = data.assign(configuration="ALL")
    records = []
    for (strategy, configuration), rows in pd.concat([data, pooled]).groupby(["strategy", "configuration"], sort=True):
        record: dict[str, Any] = {"strategy": strategy, "configuration": configuration, "n": len(rows)}
        for name, column in means.items():
            record[name] = columns.column_mean(pd.to_numeric(rows[column]), column)
        record.update(_loop_sums(rows))
        record.update(_recovery_sums(rows))
        if strategy != BASELINE and configuration != "ALL":
            scope = data[data["configuration"] == configuration]
            base = scope[scope["strategy"] == BASELINE].set_index("question_id")
            common = base.index.intersection(rows.set_index("question_id").index).sort_values()
            if len(common):
                treat = rows.set_index("question_id").loc[common]
                for metric in ("pass_at_1_final", "kg_valid_structural", "kg_valid_chain"):
                    column = means[metric]
                    record.update(
                        stat_row(metric, "mcnemar", mcnemar_exact(base.loc[common, column] > 0.5, treat[column] > 0.5))
                    )
                record["n_paired"] = len(common)
        records.append(record)
    table = pd.DataFrame.from_records(records)
    for metric in ("pass_at_1_final", "kg_valid_structural", "kg_valid_chain"):
        column, adjusted = stat(metric, "mcnemar", "p_value"), stat(metric, "mcnemar", "p_holm")
        if column in table:
            tested = table[column].notna()
            table[adjusted] = np.nan
            if tested.any():
                table.loc[tested, adjusted] = holm(table.loc[tested, column].tolist())
    return table


def load_attempt_scores(run_dir: Path, folders: list[Path] | None = None) -> pd.DataFrame:
    """Every cell's per-attempt correctness in one frame (empty for runs evaluated before strategies)."""
    frames = [read_table(path) for path in cell_files(run_dir, ATTEMPT_SCORES_FILE, folders)]
    if not frames:
        return pd.DataFrame(columns=list(columns.ATTEMPT_SCORES_CSV))
    data = pd.concat(frames, ignore_index=True)
    data["strategy"] = data["strategy"].replace(LEGACY_STRATEGY_NAMES)
    return data.sort_values(["strategy", "configuration", "question_id", "iteration"], kind="stable").reset_index(
        drop=True
    )


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
        records.append(
            {
                "strategy": strategy,
                "validator": validator,
                "rejections": len(rows),
                "false_rejections": int((rows["result_correct"].astype(int) == 1).sum()),
                "gold_rejections": gold_rejections.get(validator, 0),
                "gold_n": n_gold,
            }
        )
    for validator in sorted(set(gold_rejections) - set(rejected["failed_validator"])):
        records.append(
            {
                "strategy": "",
                "validator": validator,
                "rejections": 0,
                "false_rejections": 0,
                "gold_rejections": gold_rejections[validator],
                "gold_n": n_gold,
            }
        )
    return pd.DataFrame.from_records(
        records, columns=["strategy", "validator", "rejections", "false_rejections", "gold_rejections", "gold_n"]
    )


def analyze_run(
    run_dir: Path,
    strata_columns: list[str] | dict[str, tuple[str, ...]],
    published: pd.DataFrame | None = None,
    run_label: str = "this run (t2c graph and questions)",
    language: str = "en",
    folders: list[Path] | None = None,
) -> RunTables:
    """Build every table of a run from its cells' metrics (and published numbers to set beside them).

    `strata_columns` is a list of stratum columns or the dataset's mapping of each to its values
    in order (`Dataset.ground_truth_spec.strata`), which orders the strata table and figure.
    `folders`: the grid's cell folders; only those are pooled, and the tables name every other
    evaluated cell of the run (`outside_grid`). None pools every cell found.
    """
    per_question = load_per_question(run_dir, folders)
    attempts = load_attempt_scores(run_dir, folders)
    gold_path = run_dir / GOLD_AUDIT_FILE
    gold = read_table(gold_path) if gold_path.is_file() else None
    summaries = load_summaries(run_dir, folders)
    overview, cumulative, errors, recovery = agentic_tables(summaries)
    weights = sorted({s.weights for s in summaries})
    schemes = sorted({s.scoring for s in summaries})
    if len(schemes) != 1 or not schemes[0]:
        raise IncompatibleResults(
            f"{run_dir}: cells were evaluated with different or unknown headline scoring presets "
            f"({', '.join(schemes)}); evaluate the run again with the settings it recorded "
            f"(`t2c evaluate --run-id {run_dir.name}` reads them from its run.json)"
        )
    signatures = sorted({s.signature for s in summaries})
    models = tuple(sorted({s.model_id for s in summaries if s.model_id}))
    loops = run_loops(run_dir, folders)
    for summary in summaries:  # a summary naming another loop than its cell's manifest ran is refused
        if summary.strategy in loops:
            check_loop(loops[summary.strategy], summary.loop, f"{run_dir}: {summary.strategy}/{summary.configuration}")
    by_scoring = by_scoring_table(per_question, summaries)
    return RunTables(
        per_question=per_question,
        comparison=compare(per_question),
        strata=strata_breakdown(per_question, strata_columns, schemes[0]),
        agentic=overview,
        cumulative=cumulative,
        errors=errors,
        recovery=recovery,
        strategy_means=with_loop(strategy_means(per_question), loops),
        weights=",".join(weights),
        signature=" ; ".join(signatures) + f" ; bootstrap-seed:{BOOTSTRAP_SEED}",
        scoring=schemes[0],
        by_scoring=by_scoring,
        reference=beside_reference(by_scoring, published if published is not None else pd.DataFrame(), run_label),
        strategies=with_loop(strategy_table(per_question), loops),
        transitions=error_transitions(attempts),
        validator_audit=validator_audit(attempts, gold),
        recovery_by_strategy=recovery_by_strategy(per_question),
        models=models,
        loops=loops,
        strata_values={k: tuple(v) for k, v in strata_columns.items()} if isinstance(strata_columns, dict) else {},
        language=language,
        outside_grid=outside_grid(run_dir, folders) if folders is not None else (),
        gold=read_gold_note(run_dir / SCREEN_DIR),
    )


def paired_note(tables: RunTables) -> str:
    """Why a run has no paired tests (only one strategy, or no common questions), or "" when it has them."""
    if not tables.comparison.empty:
        return ""
    strategies = sorted(tables.per_question["strategy"].unique())
    return (
        f"paired tests need both strategies ({BASELINE} and {TREATMENT}) on the same questions; "
        f"this run has {', '.join(strategies) or 'none'}: the table shows each mode's means with bootstrap 95% CIs"
    )


def _count(share: float, n: int) -> str:
    """A share of n binary outcomes as `k/n`."""
    return f"{int(round(share * n))}/{n}" if np.isfinite(share) else "-"


def _interval(estimate: float, low: float, high: float, sign: bool = False) -> str:
    fmt = "{:+.3f}" if sign else "{:.3f}"
    if not np.isfinite(estimate):
        return "-"
    return f"{fmt.format(estimate)} [{fmt.format(low)}, {fmt.format(high)}]"


def readable_summary(tables: RunTables) -> pd.DataFrame:
    """The headline numbers as rounded text: counts k/n, paired bootstrap 95% CIs, Holm-adjusted exact McNemar p.

    Both strategies on the same questions: per configuration, single-pass -> feedback for Pass@1
    (headline preset) and KG-valid chain, the difference with its CI and p. One strategy only:
    each configuration's counts with the CI of the share. Either way, what the loop did beside
    it: refinements repeating an already failed query, among all model replies and among the accepted
    refinements (the repeat guard's rejected replies left out), and first attempts failing the chain that
    ended passing it, as k/n ("-" where there were none).
    """
    pass_col = tables.col("pass_at_1_final")
    pass_name = f"Pass@1 ({tables.scoring})"
    rows = []
    if tables.comparison.empty:
        rank = {name: i for i, name in enumerate(config_order(tables.strategy_means["configuration"].tolist()))}
        for r in sorted(
            tables.strategy_means.to_dict("records"), key=lambda r: (rank[r["configuration"]], r["strategy"])
        ):
            row = {"configuration": r["configuration"], "strategy": r["strategy"], "n": int(r["n"])}
            for metric, name in ((pass_col, pass_name), ("kg_valid_chain_final", "KG-valid chain")):
                row[name] = _count(r[metric], int(r["n"]))
                row[f"{name} share [95% CI]"] = _interval(r[metric], r[bound(metric, "low")], r[bound(metric, "high")])
            row.update(_loop_text(tables.per_question, r["configuration"], r["strategy"]))
            rows.append(row)
        return pd.DataFrame.from_records(rows)
    rank = {name: i for i, name in enumerate(config_order(tables.comparison["configuration"].tolist()))}
    for r in sorted(tables.comparison.to_dict("records"), key=lambda r: rank[r["configuration"]]):
        n = int(r["n"])
        row = {"configuration": r["configuration"], "n": n}
        for metric, name, short in (
            (pass_col, pass_name, "Pass@1"),
            ("kg_valid_chain_final", "KG-valid chain", "KG-valid"),
        ):
            row[f"{name} sp -> fb"] = (
                f"{_count(r[side(metric, BASELINE_SIDE)], n)} -> {_count(r[side(metric, TREATMENT_SIDE)], n)}"
            )
            row[f"{short} diff [95% CI]"] = _interval(
                r[stat(metric, "diff", "estimate")],
                r[stat(metric, "diff", "low")],
                r[stat(metric, "diff", "high")],
                sign=True,
            )
            row[f"{short} p Holm"] = f"{r[stat(metric, 'mcnemar', 'p_holm')]:.3f}"
        row.update({f"fb {k}": v for k, v in _loop_text(tables.per_question, r["configuration"], TREATMENT).items()})
        rows.append(row)
    return pd.DataFrame.from_records(rows)


RECOVERED_TEXT = "chain-invalid first attempts made valid"
"""The summary's column on first attempts the loop made valid (k/n), prefixed `fb ` beside a paired comparison;
its repeat columns are the repeat rates' labels (`columns.REPEAT_RATES`)."""


def _loop_text(per_question: pd.DataFrame, configuration: str, strategy: str) -> dict[str, str]:
    """Repeats / refinements for each repeat rate (all model replies, accepted refinements), and chain-invalid
    first attempts ending valid / those, as `k/n`."""
    rows = per_question[(per_question["configuration"] == configuration) & (per_question["strategy"] == strategy)]
    loop, recovery = _loop_sums(rows), _recovery_sums(rows)
    text = {}
    for rate in columns.REPEAT_RATES:
        refined = loop[rate.refinements]
        text[rate.label] = f"{int(loop[rate.repeats])}/{int(refined)}" if np.isfinite(refined) and refined else "-"
    text[RECOVERED_TEXT] = (
        f"{recovery['n_recovered']}/{recovery['n_initially_failed']}" if recovery["n_initially_failed"] else "-"
    )
    return text


def summary_header(tables: RunTables) -> str:
    """What the summary's numbers are: who answered, the headline preset, the statistics and their settings."""
    paired = not tables.comparison.empty
    tests = (
        f"{tables.shown(TREATMENT)} (fb: {TREATMENT} strategy, {tables.loop(TREATMENT).description}) against "
        f"{BASELINE} (sp) on the same questions; exact McNemar, Holm across "
        f"{len(tables.comparison)} configuration(s); "
        if paired
        else ""
    )
    return (
        f"answered by: {', '.join(tables.models) or 'unknown (cells evaluated before t2c recorded it)'}; "
        f"headline scoring {tables.scoring} (every preset in analysis/comparison.csv); {tests}"
        f"paired bootstrap 95% CIs, seed {BOOTSTRAP_SEED}"
    )


def summary_text(tables: RunTables, run_id: str) -> str:
    """The headline as `make all` ends with it (`analysis/headline.txt`): who answered and how it was tested, what was
    not pooled or paired, then the readable summary, one unbroken line per configuration."""
    lines = [f"run {run_id}: {summary_header(tables)}"]
    lines += [tables.gold] if tables.gold else []
    lines += [note for note in (tables.grid_note(), paired_note(tables)) if note]
    lines.append(readable_summary(tables).to_string(index=False))
    return "\n".join(lines) + "\n"


def summary_view(tables: RunTables) -> pd.DataFrame:
    """The comparison's headline columns, or each strategy's means when there is nothing to pair."""
    if tables.comparison.empty:
        means = tables.strategy_means
        wanted = {*columns.cols(["pass_at_1_final"], presets_of(tables.per_question)), *KG_VALID_METRICS}
        keep = ["configuration", "strategy", "n"] + [c for c in means.columns if c in wanted]
        return means[keep]
    return tables.headline_table()


def write_tables(tables: RunTables, run_dir: Path) -> list[Path]:
    """CSV and LaTeX of each table under `<run>/analysis/` (floats at 10 significant digits)."""
    out_dir = run_dir / ANALYSIS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in TABLES:
        frame: pd.DataFrame = getattr(tables, name)
        if name == "reference" and frame.empty:
            continue
        csv_path = out_dir / f"{TABLE_FILES.get(name, name)}.csv"
        csv_frame(frame).to_csv(csv_path, index=False, float_format="%.10g", lineterminator="\n")
        written.append(csv_path)
    latex_path = out_dir / "comparison.tex"
    latex_path.write_text(comparison_latex(tables), encoding="utf-8")
    written.append(latex_path)
    (out_dir / "signature.txt").write_text(tables.signature + "\n", encoding="utf-8")
    return written


def comparison_latex(tables: RunTables) -> str:
    """The paper's main table: per configuration, Pass@1 final per preset, KG-valid chain and structural, LLMetric.

    A run with one strategy has nothing to pair: the table then holds each configuration's
    means with bootstrap 95% CIs (never an empty body).
    """
    if tables.comparison.empty:
        return means_latex(tables)
    h = columns.slug(tables.scoring)
    presets = [h, *(s for s in presets_of(tables.per_question) if s != h)]
    groups = [(col("pass_at_1_final", s), columns.label("pass_at_1_final", s), True) for s in presets]
    groups += [(name, columns.label(name), True) for name in ("kg_valid_chain_final", "kg_valid_structural_final")]
    groups += [(col("llmetric_q", h), f"{columns.label('llmetric_q')} ({tables.scoring})", False)]
    spec = "lr" + "".join("rrr" if tested else "rr" for _, _, tested in groups)
    head = " & ".join(f"\\multicolumn{{{3 if t else 2}}}{{c}}{{{label}}}" for _, label, t in groups)
    sub = " & ".join("SP & FB & $p_{\\mathrm{Holm}}$" if t else "SP & FB" for _, _, t in groups)
    lines = [
        f"% generated by t2c_lib.analysis; scoring: {tables.scoring} (headline); weights: {tables.weights}; "
        f"SP: {tables.shown(BASELINE)}, FB: {tables.shown(TREATMENT)} ({tables.loop(TREATMENT).description}); "
        "p: exact McNemar, Holm across configurations",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\hline",
        f"Configuration & $n$ & {head} \\\\",
        f" & & {sub} \\\\",
        "\\hline",
    ]
    for row in tables.comparison.to_dict("records"):
        cells = [latex_text(row["configuration"]), str(row["n"])]
        for metric, _, tested in groups:
            cells += [f"{row[side(metric, BASELINE_SIDE)]:.3f}", f"{row[side(metric, TREATMENT_SIDE)]:.3f}"]
            if tested:
                cells.append(p_text(row[stat(metric, "mcnemar", "p_holm")], latex=True))
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}", ""]
    return "\n".join(lines)


def means_latex(tables: RunTables) -> str:
    """Per configuration and strategy: n, Pass@1 final (headline) and KG-valid chain as k/n with the share's 95% CI."""
    pass_col = tables.col("pass_at_1_final")
    lines = [
        f"% generated by t2c_lib.analysis; one strategy, no paired tests; scoring: {tables.scoring} (headline); "
        f"bootstrap 95% CIs, seed {BOOTSTRAP_SEED}",
        "\\begin{tabular}{llrrr}",
        "\\hline",
        f"Configuration & Strategy & $n$ & Pass@1 final ({tables.scoring}) & KG-valid chain \\\\",
        "\\hline",
    ]
    for r in tables.strategy_means.to_dict("records"):
        n = int(r["n"])
        cells = [latex_text(r["configuration"]), latex_text(tables.shown(r["strategy"])), str(n)]
        for metric in (pass_col, "kg_valid_chain_final"):
            low, high = r[bound(metric, "low")], r[bound(metric, "high")]
            cells.append(f"{_count(r[metric], n)} ({r[metric]:.3f} [{low:.3f}, {high:.3f}])")
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}", ""]
    return "\n".join(lines)
