"""The paper's figures, drawn from a run's analysis tables.

Every figure is written as vector PDF and SVG plus PNG, in the `paper.mplstyle` style, with
fonts embedded as Type 42 and no timestamps or random ids, so a rerun writes the same bytes,
and a caption file `<name>.txt` beside it (`t2c_lib.report.figure_text`: what is plotted, n, what
the error bars are). Bars of shares carry their count (k/N), so a zero bar reads as zero.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from t2c_lib.metrics import columns
from t2c_lib.metrics.columns import BASELINE_SIDE, TREATMENT_SIDE, bound, side
from t2c_lib.report.analysis import BASELINE, PROMPT_ORDER, SCHEMA_ORDER, TREATMENT, RunTables, config_order
from t2c_lib.report.compare import KG_VALID, RunPair
from t2c_lib.report.figure_layout import COUNT_GID, agg_renderer, declutter_counts, place_point_labels
from t2c_lib.report.figure_text import (
    caption,
    pair_shown,
    run_pair_caption,
    stratum_title,
    stratum_value,
)

STYLE = Path(__file__).with_name("paper.mplstyle")
FORMATS = ("pdf", "svg", "png")
STRATEGY_COLORS = {BASELINE: "#8C8C8C", TREATMENT: "#4C72B0"}
_METADATA = {
    "pdf": {"CreationDate": None, "ModDate": None},
    "svg": {"Date": None},
    "png": {},
}


def save_figure(fig: plt.Figure, out_dir: Path, name: str) -> list[Path]:
    """Write one figure in every format, deterministically, and close it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in FORMATS:
        path = out_dir / f"{name}.{fmt}"
        fig.savefig(path, format=fmt, metadata=_METADATA[fmt])
        paths.append(path)
    plt.close(fig)
    return paths


def _count_labels(
    ax: plt.Axes, x: np.ndarray, values: np.ndarray, tops: np.ndarray, n: np.ndarray, upright: bool
) -> None:
    """`k/N` above each bar (above its error bar when it has one): a zero bar reads as zero, not as missing."""
    for xi, value, top, size in zip(x, values, tops, n):
        if not np.isfinite(value) or not np.isfinite(size):
            continue
        ax.text(
            xi,
            (top if np.isfinite(top) else value) + 0.015,
            f"{int(round(value * size))}/{int(size)}",
            ha="center",
            va="bottom",
            rotation=0 if upright else 90,
            fontsize=6 if upright else 4.5,
            color="#333333",
            gid=COUNT_GID,
        )


UPRIGHT_BARS = 8
"""Up to this many bars in a panel, their k/N labels stand upright; more bars, and the labels turn on their side."""


def _shares(
    ax: plt.Axes,
    x: np.ndarray,
    width: float,
    values: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    n: np.ndarray,
    strategy: str,
    bars_in_panel: int,
    label: str,
) -> None:
    """Bars of shares with their 95% CI and their k/N."""
    err = np.vstack([values - low, high - values])
    ax.bar(
        x,
        values,
        width,
        yerr=np.nan_to_num(err),
        capsize=1.5,
        color=STRATEGY_COLORS[strategy],
        label=label,
        error_kw={"elinewidth": 0.6, "capthick": 0.6},
    )
    _count_labels(ax, x, values, high, n, upright=bars_in_panel <= UPRIGHT_BARS)


def _legend_below(fig: plt.Figure, ax: plt.Axes) -> None:
    """The strategies' legend under the panels, clear of every bar and label."""
    fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=6, **_on_canvas(fig, 0.5))
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    declutter_counts(fig)


def _on_canvas(fig: plt.Figure, x: float) -> dict[str, Any]:
    """A figure legend anchored at (x, 0) of the canvas in figure coordinates: `savefig.bbox: tight` crops the saved
    area, and a legend anchored to the figure's box (the default) would move with the crop onto the texts below it."""
    return {"bbox_to_anchor": (x, 0.0), "bbox_transform": fig.transFigure}


ILLUSTRATIVE = "local model results are illustrative"


def mark_illustrative(fig: plt.Figure) -> Any:
    """The "illustrative" mark, under everything the figure draws (the saved area grows to hold it: `savefig.bbox:
    tight`), right-aligned, `MARK_GAP_IN` below the lowest text: it cannot cover an axis label, a tick label or a
    legend, and stands clear of them on paper."""
    fig.canvas.draw()
    renderer = agg_renderer(fig)
    box = fig.get_tightbbox(renderer)  # inches
    width, height = fig.get_size_inches()
    return fig.text(
        box.x1 / width, (box.y0 - MARK_GAP_IN) / height, ILLUSTRATIVE, ha="right", va="top", fontsize=5, color="#777777"
    )


MARK_GAP_IN = 0.08
"""The clear space between the "illustrative" mark and the lowest text above it (about 6 points)."""


def _illustrative(tables: RunTables) -> bool:
    """Whether the packaged local model answered (its numbers show the pipeline, not a strong model's accuracy)."""
    return any(model.startswith("local") for model in tables.models) or "model:local" in tables.signature


def _thesis_strategies(tables: RunTables) -> list[str]:
    """Single-pass and feedback, those of them the run has (a one-strategy run draws its one)."""
    present = set(tables.per_question["strategy"]) if "strategy" in tables.per_question else set()
    return [s for s in (BASELINE, TREATMENT) if s in present]


def _offsets(strategies: list[str], width: float) -> list[tuple[float, str]]:
    """Each strategy's bar offset from its tick: side by side around it, or on it when there is one."""
    return [((i - (len(strategies) - 1) / 2) * width, s) for i, s in enumerate(strategies)]


def skipped_figures(tables: RunTables) -> dict[str, str]:
    """The figures this run cannot fill, each with why (a line for the notebook and `t2c analyze`)."""
    have = sorted(set(tables.per_question["strategy"])) if "strategy" in tables.per_question else []
    has = ", ".join(have) or "none"
    skipped = {}
    if tables.comparison.empty:
        skipped["cost_vs_gain"] = (
            f"needs {BASELINE} and {TREATMENT} on the same questions (this run has {has}): no gain to plot"
        )
    if TREATMENT not in have:
        for name in ("cumulative_success", "error_types_recovery"):
            skipped[name] = f"shows the {TREATMENT} loop's attempts (this run has {has})"
    if len(have) < 2:
        skipped["strategy_cost_effectiveness"] = f"sets strategies against each other (this run has {has})"
    return skipped


def fig_pass_kgvalid(tables: RunTables) -> plt.Figure:
    """Pass@1 and KG-valid per configuration, single-pass vs feedback, with bootstrap 95% CIs and k/N on every bar."""
    means = tables.strategy_means
    configs = config_order(means["configuration"].tolist())
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.2), sharey=True)
    x = np.arange(len(configs))
    width = 0.38
    drawn = _offsets(_thesis_strategies(tables), width)
    for ax, metric, title in (
        (axes[0], tables.col("pass_at_1_final"), f"{columns.label('pass_at_1_final')} ({tables.scoring})"),
        (axes[1], "kg_valid_chain_final", f"{columns.label('kg_valid_chain_final')} (final query)"),
    ):
        for offset, strategy in drawn:
            rows = means[means["strategy"] == strategy].set_index("configuration").reindex(configs)
            _shares(
                ax,
                x + offset,
                width,
                rows[metric].to_numpy(dtype=float),
                rows[bound(metric, "low")].to_numpy(dtype=float),
                rows[bound(metric, "high")].to_numpy(dtype=float),
                rows["n"].to_numpy(dtype=float),
                strategy,
                bars_in_panel=len(drawn) * len(configs),
                label=tables.shown(strategy),
            )
        ax.set_title(title)
        ax.set_xticks(x, configs, rotation=45, ha="right", fontsize=6)
        ax.set_ylim(0, 1.18)
        ax.set_yticks(np.linspace(0, 1, 6))
    axes[0].set_ylabel("share of questions")
    _legend_below(fig, axes[0])
    return fig


def fig_llmetric_heatmap(tables: RunTables) -> plt.Figure:
    """Prompt type x schema format heatmaps of LLMetric, one per strategy (seaborn, one shared colour bar)."""
    means = tables.strategy_means.copy()
    means[["prompt", "schema"]] = means["configuration"].str.split("_", n=1, expand=True)
    strategies = _thesis_strategies(tables)
    fig, axes_grid = plt.subplots(
        1,
        len(strategies) + 1,
        figsize=(0.4 + 3.0 * len(strategies), 2.6),
        gridspec_kw={"width_ratios": [1] * len(strategies) + [0.06]},
        squeeze=False,
    )
    axes = list(axes_grid[0])
    prompts = [p for p in PROMPT_ORDER if p in set(means["prompt"])]
    schemas = [s for s in SCHEMA_ORDER if s in set(means["schema"])]
    for ax, strategy in zip(axes[:-1], strategies):
        grid = (
            means[means["strategy"] == strategy]
            .pivot(index="prompt", columns="schema", values=tables.col("llmetric_q"))
            .reindex(index=prompts, columns=schemas)
            .astype(float)
        )
        sns.heatmap(
            grid,
            ax=ax,
            vmin=0,
            vmax=1,
            cmap="viridis",
            annot=True,
            fmt=".2f",
            annot_kws={"fontsize": 7},
            cbar=ax is axes[-2],
            cbar_ax=axes[-1] if ax is axes[-2] else None,
            cbar_kws={"label": f"{columns.label('llmetric_q')} ({tables.scoring}, weights {tables.weights})"},
            linewidths=0.5,
            linecolor="white",
        )
        ax.set_title(f"{columns.label('llmetric_q')}, {tables.shown(strategy)}", fontsize=7)
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.grid(False)
        ax.tick_params(axis="y", rotation=0)
        if ax is not axes[0]:
            ax.set_yticklabels([])
    fig.tight_layout()
    return fig


def fig_cumulative_success(tables: RunTables) -> plt.Figure:
    """Cumulative success rate after iteration 1..N, one line per configuration (feedback)."""
    fig, ax = plt.subplots(figsize=(4.2, 3.0))
    data = tables.cumulative
    configurations = config_order(data["configuration"].tolist()) if not data.empty else []
    for i, configuration in enumerate(configurations):
        rows = data[data["configuration"] == configuration].sort_values("iteration")
        # dodged sideways so that configurations with equal rates stay visible (y is exact)
        dodge = (i - (len(configurations) - 1) / 2) * (0.3 / max(1, len(configurations) - 1))
        ax.plot(
            rows["iteration"] + dodge,
            rows["success_rate"],
            marker="o",
            label=configuration,
            linewidth=1.0,
            linestyle=("-", "--", ":")[i % 3],
            alpha=0.9,
        )
    ax.set_xlabel(f"attempt ({tables.shown(TREATMENT)})")
    ax.set_ylabel("share passed the chain so far")
    ax.set_ylim(0, 1.02)
    if not data.empty:
        ax.set_xticks(sorted(data["iteration"].unique()))
    ax.legend(ncol=1, fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def fig_errors(tables: RunTables) -> plt.Figure:
    """Error types over all failed attempts (stacked, per configuration) and recovery per first error type."""
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.0))
    errors = tables.errors
    if not errors.empty:
        counts = errors.pivot(index="configuration", columns="error_type", values="count").fillna(0)
        counts = counts.reindex(config_order(counts.index.tolist()))
        counts = counts.loc[:, counts.sum(axis=0) > 0]
        shares = counts.div(counts.sum(axis=1).replace(0, np.nan), axis=0).fillna(0)
        bottom = np.zeros(len(shares))
        for error_type in shares.columns:
            axes[0].bar(range(len(shares)), shares[error_type], bottom=bottom, label=error_type)
            bottom += shares[error_type].to_numpy()
        axes[0].set_xticks(range(len(shares)), list(shares.index), rotation=45, ha="right", fontsize=6)
        if len(shares.columns):  # a run without failed attempts has no error types to name
            fig.legend(
                *axes[0].get_legend_handles_labels(),
                fontsize=6,
                loc="lower left",
                ncol=min(4, len(shares.columns)),
                **_on_canvas(fig, 0.06),
            )
    axes[0].set_title(f"error types of failed attempts ({tables.shown(TREATMENT)})", fontsize=8)
    axes[0].set_ylabel("share of failed attempts")
    recovery = tables.recovery
    if not recovery.empty:
        pooled = recovery.assign(recovered=recovery["recovery_rate"].fillna(0) * recovery["n_first"])
        pooled = pooled.groupby("error_type", sort=True)[["recovered", "n_first"]].sum()
        pooled = pooled[pooled["n_first"] > 0]
        rates = pooled["recovered"] / pooled["n_first"]
        axes[1].bar(range(len(rates)), rates.to_numpy(), color="#55A868")
        for i, (recovered, n) in enumerate(zip(pooled["recovered"], pooled["n_first"])):
            axes[1].text(i, recovered / n + 0.02, f"{int(round(recovered))}/{int(n)}", ha="center", fontsize=6)
        axes[1].set_xticks(range(len(rates)), [e.replace("_", "\n") for e in rates.index], fontsize=6)
    axes[1].set_ylim(0, 1.1)
    axes[1].set_title("repaired, by first error type (all configurations)", fontsize=8)
    axes[1].set_ylabel("recovered / initially failed")
    fig.tight_layout(rect=(0, 0.1, 1, 1))  # room for the error-type legend under the tick labels
    return fig


def fig_strata(tables: RunTables, language: str = "en") -> plt.Figure:
    """Pass@1 per stratum value, single-pass vs feedback, all configurations pooled, with cluster bootstrap 95% CIs
    (questions resampled, each with all its configurations) and k/N.

    Panels are titled in English (`language="en"`) or in the dataset's own words (the
    thesis-language variant); values follow the dataset's declared order (Easy < Medium < Hard).
    """
    per_question = tables.per_question
    metric = tables.col("pass_at_1_final")
    data = tables.strata
    strata = list(dict.fromkeys(data["stratum"])) if not data.empty else []
    values_of = {}
    for stratum in strata:
        present = {str(v) for v in per_question[stratum].astype(str)}
        declared = [v for v in tables.strata_values.get(stratum, ()) if v in present]
        values_of[stratum] = declared + sorted(present - set(declared))
    widths = [max(2.0, 0.6 * len(values_of[s])) for s in strata] or [2.4]
    fig, axes = plt.subplots(
        1,
        len(widths),
        figsize=(max(4.0, sum(widths)), 3.0),
        sharey=True,
        squeeze=False,
        gridspec_kw={"width_ratios": widths},
    )
    width = 0.38
    for ax, stratum in zip(axes[0], strata):
        values = values_of[stratum]
        x = np.arange(len(values))
        column = per_question[stratum].astype(str)
        drawn = _offsets(_thesis_strategies(tables), width)
        for offset, strategy in drawn:
            shares, lows, highs, sizes = [], [], [], []
            for value in values:
                rows = per_question[(column == value) & (per_question["strategy"] == strategy)]
                scores = rows[metric]
                ci = columns.column_mean_ci(scores, metric, clusters=rows["question_id"])  # questions repeat
                shares.append(ci.estimate)
                lows.append(ci.low)
                highs.append(ci.high)
                sizes.append(len(scores) if len(scores) else np.nan)
            _shares(
                ax,
                x + offset,
                width,
                np.array(shares),
                np.array(lows),
                np.array(highs),
                np.array(sizes),
                strategy,
                bars_in_panel=len(drawn) * len(values),
                label=tables.shown(strategy) if ax is axes[0][0] else "_nolegend_",
            )
        ax.set_xticks(
            x, [stratum_value(v, language) for v in values], fontsize=6, rotation=30, ha="right", rotation_mode="anchor"
        )
        ax.set_title(stratum_title(stratum, language), fontsize=8)
        ax.set_ylim(0, 1.18)
        ax.set_yticks(np.linspace(0, 1, 6))
    axes[0][0].set_ylabel(f"{columns.label('pass_at_1_final')} ({tables.scoring})")
    if strata:
        _legend_below(fig, axes[0][0])
    else:
        fig.tight_layout()
    return fig


SCHEMA_MARKERS = {"Full": "o", "Nodes+Paths": "s", "Only-Paths": "^"}


def fig_cost_gain(tables: RunTables) -> plt.Figure:
    """Extra tokens and model calls per question (agentic - single-pass) against the Pass@1 gain.

    Configurations are numbered (key on the right); configurations at the same point share
    one label, and labels that would collide are moved up until they do not.
    """
    comp = tables.comparison
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.0), sharey=True)
    gain_label = (
        f"{columns.label('pass_at_1_final')} gain ({tables.scoring}, "
        f"{tables.shown(TREATMENT)} - {tables.shown(BASELINE)})"
    )
    if comp.empty:
        axes[0].set_ylabel(gain_label)
        fig.tight_layout()
        return fig
    order = config_order(comp["configuration"].tolist())
    comp = comp.set_index("configuration").loc[order]
    number = {name: i + 1 for i, name in enumerate(order)}
    passed = tables.col("pass_at_1_final")
    gain = columns.improvement(passed, comp[side(passed, BASELINE_SIDE)], comp[side(passed, TREATMENT_SIDE)])
    gain = gain.to_numpy(dtype=float)
    costs = (
        ("tokens_per_question", "extra tokens per question"),
        ("model_calls_per_question", "extra model calls per question"),
    )
    points = []
    for ax, (column, label) in zip(axes, costs):
        extra = (comp[side(column, TREATMENT_SIDE)] - comp[side(column, BASELINE_SIDE)]).to_numpy(dtype=float)
        for i, name in enumerate(order):
            prompt, _, schema = name.partition("_")
            ax.scatter(
                [extra[i]],
                [gain[i]],
                marker=SCHEMA_MARKERS.get(schema, "D"),
                s=22,
                alpha=0.8,
                color=STRATEGY_COLORS[TREATMENT]
                if prompt == PROMPT_ORDER[0]
                else ("#DD8452" if prompt == PROMPT_ORDER[1] else "#55A868"),
                zorder=3,
            )
        groups: dict[tuple[float, float], list[int]] = {}
        for i, name in enumerate(order):
            groups.setdefault((round(float(extra[i]), 9), round(float(gain[i]), 9)), []).append(number[name])
        points.append((ax, groups))
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xlabel(label)
    axes[0].set_ylabel(gain_label)
    present = {part for name in order for part in name.split("_", 1)}
    handles = [
        plt.Line2D([], [], linestyle="", marker="o", color=c, label=p)
        for p, c in zip(PROMPT_ORDER, (STRATEGY_COLORS[TREATMENT], "#DD8452", "#55A868"))
        if p in present
    ]
    handles += [
        plt.Line2D([], [], linestyle="", marker=m, color="#555555", label=s)
        for s, m in SCHEMA_MARKERS.items()
        if s in present
    ]
    handles += [plt.Line2D([], [], linestyle="", marker="", label=f"{number[name]:>2}  {name}") for name in order]
    axes[1].legend(
        handles=handles,
        fontsize=6,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        handlelength=0.8,
        handletextpad=0.4,
        labelspacing=0.3,
        borderaxespad=0.0,
    )  # one key: colours, markers, then the configurations' numbers
    fig.tight_layout()
    renderer = agg_renderer(fig)
    for ax, groups in points:
        place_point_labels(ax, groups, renderer)
    return fig


def fig_strategy_cost(tables: RunTables) -> plt.Figure:
    """Pass@1 and KG-valid against mean LLM calls per question, one point per strategy (all configurations pooled),
    and beside them each strategy's two repeat rates (all model replies, accepted refinements): a loop whose
    refinements repeat a failed query did not try again, whatever its calls say."""
    fig, axes = plt.subplots(1, 3, figsize=(9.6, 3.0), gridspec_kw={"width_ratios": (1.0, 1.0, 0.9)})
    axes[1].sharex(axes[0])
    table = tables.strategies
    rows = table[table["configuration"] == "ALL"] if not table.empty else table
    points: list[tuple[plt.Axes, dict[tuple[float, float], list[str]]]] = []
    labels = (
        ("pass_at_1_final", f"{columns.label('pass_at_1_final')} ({tables.scoring})"),
        ("kg_valid_chain", columns.label("kg_valid_chain_final")),
    )
    for ax, (metric, label) in zip(axes, labels):
        groups: dict[tuple[float, float], list[str]] = {}
        if not rows.empty:
            ax.scatter(rows["llm_calls"], rows[metric], color="#4C72B0")
            for x, y, name in zip(rows["llm_calls"], rows[metric], rows["strategy"]):
                groups.setdefault((round(float(x), 9), round(float(y), 9)), []).append(tables.shown(str(name)))
        points.append((ax, groups))
        ax.set_xlabel("mean LLM calls per question")
        ax.set_ylabel(label)
        ax.set_ylim(-0.02, 1.02)
    _repeat_panel(axes[2], rows, tables)
    fig.tight_layout()
    declutter_counts(fig)
    renderer = agg_renderer(fig)
    for ax, groups in points:
        place_point_labels(ax, groups, renderer)
    return fig


def _repeat_panel(ax: plt.Axes, rows: Any, tables: RunTables) -> None:
    """Per strategy, side by side, its two repeat rates (`columns.REPEAT_RATES`): the share of all its model
    replies after the first, and of its accepted refinements, whose query repeats an already failed one; k/N on
    each bar. The two differ only where the repeat guard rejected replies."""
    first = columns.REPEAT_RATES[0]
    shown = (
        rows[rows[first.refinements].fillna(0) > 0] if not rows.empty and first.refinements in rows else rows.iloc[0:0]
    )
    x = np.arange(len(shown))
    n_rates = len(columns.REPEAT_RATES)
    width = 0.8 / n_rates
    for i, (rate, color) in enumerate(zip(columns.REPEAT_RATES, REPEAT_COLORS)):
        if rate.name not in shown:  # tables of runs evaluated before t2c counted it
            continue
        at = x + (i - (n_rates - 1) / 2) * width
        values = shown[rate.name].to_numpy(dtype=float)
        ax.bar(at, np.nan_to_num(values), width, color=color, label=rate.label)
        n = shown[rate.refinements].to_numpy(dtype=float)
        _count_labels(ax, at, values, values, n, upright=len(shown) * n_rates <= UPRIGHT_BARS)
    ax.set_xticks(x, [tables.shown(str(name)) for name in shown["strategy"]], rotation=30, ha="right")
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("share repeating a failed query")
    if len(shown):  # above the panel: clear of every bar and its k/N
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=5, frameon=False, borderaxespad=0.2)
    else:
        ax.text(0.5, 0.5, "no refinements", transform=ax.transAxes, ha="center", va="center", fontsize=7)


REPEAT_COLORS = ("#C44E52", "#8172B2")
"""The repeat panel's bars: all model replies, accepted refinements (`columns.REPEAT_RATES` order)."""


FIGURES: dict[str, Callable[[RunTables], plt.Figure]] = {
    "pass_kgvalid_by_config": fig_pass_kgvalid,
    "llmetric_heatmap": fig_llmetric_heatmap,
    "cumulative_success": fig_cumulative_success,
    "error_types_recovery": fig_errors,
    "accuracy_by_stratum": fig_strata,
    "cost_vs_gain": fig_cost_gain,
    "strategy_cost_effectiveness": fig_strategy_cost,
}


def figures_of(tables: RunTables) -> dict[str, Callable[[RunTables], plt.Figure]]:
    """The figures a run gets: `FIGURES`, plus the strata figure in the thesis's language when the dataset is not English."""
    skipped = skipped_figures(tables)
    figures = {name: draw for name, draw in FIGURES.items() if name not in skipped}
    if tables.language != "en" and any(
        stratum_title(s, tables.language) != stratum_title(s) for s in tables.strata_values
    ):
        figures["accuracy_by_stratum_" + tables.language] = lambda t: fig_strata(t, t.language)
    return figures


def export_figures(tables: RunTables, out_dir: Path) -> list[Path]:
    """Draw every paper figure the run can fill into `out_dir` in every format, each with its caption (`<name>.txt`).

    A figure the run cannot fill (`skipped_figures`) is not drawn, and one an earlier analysis
    left in `out_dir` is removed, so the folder holds this run's figures only.
    """
    written: list[Path] = []
    for name in skipped_figures(tables):
        for suffix in (*FORMATS, "txt"):
            (out_dir / f"{name}.{suffix}").unlink(missing_ok=True)
    with plt.style.context(str(STYLE)), matplotlib.rc_context({"svg.hashsalt": "t2c-paper"}):
        for name, draw in figures_of(tables).items():
            fig = draw(tables)
            if _illustrative(tables):
                mark_illustrative(fig)
            written += save_figure(fig, out_dir, name)
            text = out_dir / f"{name}.txt"
            text.write_text(caption(name, tables), encoding="utf-8")
            written.append(text)
    return written


CONVERSATION_METRICS = (
    ("intent_accuracy", "turns"),
    ("turn_pass_at_1", "query_turns"),
    ("new_question_pass_at_1", "new_question_turns"),
    ("follow_up_success", "follow_up_turns"),
    ("follow_up_success_after_right_previous", "follow_up_turns_after_right_previous"),
    ("dialogue_success", "dialogues"),
)
CONVERSATION_LABELS = {
    "intent_accuracy": "intent accuracy",
    "turn_pass_at_1": "turn Pass@1",
    "new_question_pass_at_1": "new questions: Pass@1",
    "follow_up_success": "follow-up success",
    "follow_up_success_after_right_previous": "follow-ups after a right answer",
    "dialogue_success": "dialogues: all turns pass",
}


def fig_conversations(summary: dict) -> plt.Figure:
    """The conversation metrics (`chat.evaluate` summary) as horizontal bars, each with its share and count."""
    names = [name for name, _ in CONVERSATION_METRICS]
    values = [summary.get(name) or 0.0 for name in names]
    fig, ax = plt.subplots(figsize=(4.6, 2.5))
    y = np.arange(len(names))
    ax.barh(y, values, color=STRATEGY_COLORS[TREATMENT])
    for row, (_name, count_key) in enumerate(CONVERSATION_METRICS):
        total = summary.get(count_key) if count_key else None
        count = f" ({round(values[row] * total)}/{total})" if total else ""
        ax.text(min(values[row] + 0.02, 0.98), row, f"{values[row]:.2f}{count}", va="center", fontsize=6)
    ax.set_yticks(y, [CONVERSATION_LABELS[n] for n in names], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.0)
    ax.set_xlabel("share")
    fig.tight_layout()
    return fig


def export_conversation_figure(summary: dict, out_dir: Path, model_id: str = "") -> list[Path]:
    """`conversations.{pdf,svg,png}` in the paper style, deterministically."""
    with plt.style.context(str(STYLE)), matplotlib.rc_context({"svg.hashsalt": "t2c-paper"}):
        fig = fig_conversations(summary)
        if model_id.startswith("local"):
            fig.text(
                0.995,
                0.005,
                "local model results are illustrative",
                ha="right",
                va="bottom",
                fontsize=5,
                color="#777777",
            )
        return save_figure(fig, out_dir, "conversations")


def fig_run_pair(pair: RunPair) -> plt.Figure:
    """NO_QUERY (first reply), KG-valid chain and Pass@1 per configuration: both runs x {single-pass, feedback}."""
    table = pair.per_cell
    headline = pair.headline
    configs = config_order(table["configuration"].tolist())
    fig, axes = plt.subplots(1, 3, figsize=(7.2, 2.9), sharey=True)
    x = np.arange(len(configs))
    bars = [(label, strategy) for label in (pair.label_a, pair.label_b) for strategy in (BASELINE, TREATMENT)]
    width = 0.8 / len(bars)
    shades = {pair.label_a: 0.45, pair.label_b: 1.0}
    for ax, metric, title in (
        (axes[0], "no_query_first", "NO_QUERY (first reply)"),
        (axes[1], KG_VALID, f"{columns.label(KG_VALID)} (final)"),
        (axes[2], columns.col("pass_at_1_final", headline), columns.label("pass_at_1_final", headline)),
    ):
        for i, (label, strategy) in enumerate(bars):
            rows = table[table["strategy"] == strategy].set_index("configuration").reindex(configs)
            ax.bar(
                x - 0.4 + width * (i + 0.5),
                rows[side(metric, label)].to_numpy(dtype=float),
                width,
                color=STRATEGY_COLORS[strategy],
                alpha=shades[label],
                label=f"{label}, {pair_shown(pair, label, strategy)}",
            )
        ax.set_title(title)
        ax.set_xticks(x, configs, rotation=45, ha="right", fontsize=6)
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("share of questions")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(bars), fontsize=6, frameon=False, **_on_canvas(fig, 0.5))
    fig.tight_layout(rect=(0, 0.07, 1, 1))  # the legend below the panels, clear of the bars
    return fig


def export_run_pair_figure(pair: RunPair, out_dir: Path, name: str, local_model: bool = False) -> list[Path]:
    """`<name>.{pdf,svg,png}` in the paper style, deterministically, and its caption `<name>.txt`."""
    with plt.style.context(str(STYLE)), matplotlib.rc_context({"svg.hashsalt": "t2c-paper"}):
        fig = fig_run_pair(pair)
        if local_model:
            mark_illustrative(fig)
        written = save_figure(fig, out_dir, name)
    caption_file = out_dir / f"{name}.txt"
    caption_file.write_text(run_pair_caption(pair), encoding="utf-8")
    return [*written, caption_file]
