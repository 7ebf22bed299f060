"""The words on and under the paper's figures: strategy names, stratum titles, captions.

One vocabulary everywhere: a cell is shown by the one name of the loop it ran (`RunTables.shown`:
`single-pass`, `thesis-loop` for the thesis's agentic loop, `revise`, `revise-strict`, derived from the
strategy's recorded options), and a caption says once what that loop does. Stratum titles are English, with the dataset's own
(Indonesian) words in the thesis-language variant of the strata figure. Every figure gets a
caption file beside it (`<name>.txt`): what is plotted, how many questions, what the error
bars are. Captions are plain text built only from the run's tables, so a rerun writes the
same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from t2c_lib.agent import spec
from t2c_lib.agent.strategies import loop_name, role_name
from t2c_lib.metrics.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

RunTables = Any  # t2c_lib.report.analysis.RunTables (not imported: the analysis imports this vocabulary)

BASELINE, TREATMENT = role_name(spec.BASELINE), role_name(spec.TREATMENT)


def shown(tables: RunTables, strategy: str) -> str:
    """What a figure calls `strategy`'s cells: the loop's one name (the strategy's with its defaults without tables)."""
    return tables.shown(strategy) if hasattr(tables, "shown") else loop_name(strategy).name


def loop_words(tables: RunTables) -> str:
    """`revise-strict: <what it does>` for the compared loop, as one caption sentence."""
    loop = tables.loop(TREATMENT) if hasattr(tables, "loop") else loop_name(TREATMENT)
    return f"{loop.name}: {loop.description} ({TREATMENT} strategy)."


STRATUM_TITLES: dict[str, dict[str, str]] = {
    "Tingkat Penalaran": {"en": "Reasoning level", "id": "Tingkat Penalaran"},
    "Sublevel": {"en": "Sublevel (hops)", "id": "Sublevel"},
    "Tingkat Kompleksitas": {"en": "Complexity", "id": "Tingkat Kompleksitas"},
    "type": {"en": "Question type"},
}
"""Stratum column -> title per language (a stratum not listed keeps its column name)."""

STRATUM_VALUES: dict[str, dict[str, str]] = {
    "Fakta Eksplisit": {"en": "explicit fact"},
    "Fakta Implisit": {"en": "implicit fact"},
    "Nodes": {"en": "nodes only"},
    "One-hop": {"en": "one hop"},
    "Multi-hop": {"en": "multi-hop"},
}
"""Stratum value -> label per language (a value not listed is shown as written in the data)."""


def both(tables: RunTables) -> str:
    """The two loops of a bar chart, with their colours."""
    return f"{shown(tables, BASELINE)} (grey) and {shown(tables, TREATMENT)} (blue)"


ERROR_BARS = (
    f"Error bars: 95% percentile bootstrap confidence intervals of the share over the questions "
    f"({BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED})."
)


def cluster_error_bars(tables: RunTables) -> str:
    """The error bars of a figure pooling configurations: the questions are the unit (each repeats per configuration)."""
    n = tables.per_question["question_id"].nunique() if "question_id" in tables.per_question else 0
    return (
        f"Error bars: 95% CI, questions resampled (cluster bootstrap, {n} questions, each with all its "
        f"configurations; {BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED})."
    )


def stratum_title(column: str, language: str = "en") -> str:
    return STRATUM_TITLES.get(column, {}).get(language, column)


def stratum_value(value: str, language: str = "en") -> str:
    return STRATUM_VALUES.get(value, {}).get(language, value)


def _who(tables: RunTables, pass_at_1: bool = True) -> str:
    """Who answered, and (where the figure or table shows Pass@1) under which scoring preset."""
    models = ", ".join(tables.models) or "model not recorded"
    local = (
        " The packaged local model's numbers are illustrative: they show the pipeline at work, not what a strong "
        "model achieves."
        if any(m.startswith("local") for m in tables.models)
        else ""
    )
    preset = f"; Pass@1 under the {tables.scoring} scoring preset" if pass_at_1 else ""
    return f"Model: {models}{preset}.{local}"


def model_and_scoring(tables: RunTables) -> str:
    """Who answered and under which scoring preset, as every caption (figures and the paper's tables) says it."""
    return _who(tables)


def _sizes(tables: RunTables) -> str:
    """`N = 6 questions per configuration, 2 configurations` (or the range when configurations differ)."""
    means = tables.strategy_means
    if means.empty:
        return "No finished questions."
    sizes = sorted({int(n) for n in means["n"]})
    n = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
    configurations = means["configuration"].nunique()
    return f"N = {n} questions per configuration and strategy, {configurations} configuration(s)."


def _pass_kgvalid(tables: RunTables) -> str:
    return (
        f"Share of questions whose final query is result-correct (Pass@1, left) and whose final query passes the "
        f"whole validator chain (KG-valid chain, right), per configuration: {both(tables)}, on the same questions. "
        f"{loop_words(tables)} Each bar is labelled k/N (k of N questions), so a zero bar reads as zero. "
        f"{_sizes(tables)} {ERROR_BARS} {_who(tables)}"
    )


def _heatmap(tables: RunTables) -> str:
    return (
        f"Mean LLMetric-Q ({tables.scoring} preset, weights {tables.weights}) per prompt type (rows) and schema "
        f"format (columns): {shown(tables, BASELINE)} (left) and {shown(tables, TREATMENT)} (right); "
        f"{loop_words(tables)} The value is printed in each cell, no error bars (per-configuration CIs are in analysis/mode_means.csv). "
        f"{_sizes(tables)} {_who(tables)}"
    )


def _cumulative(tables: RunTables) -> str:
    return (
        f"{loop_words(tables)} Share of questions whose query passed the whole validator "
        f"chain by attempt 1, 2, ..., one line per configuration (lines are shifted sideways so that equal rates "
        f"stay visible; the heights are exact). {_sizes(tables)} {_who(tables, pass_at_1=False)}"
    )


def _errors(tables: RunTables) -> str:
    return (
        f"{loop_words(tables)} Left: error types of the failed attempts of {shown(tables, TREATMENT)}, as shares of each "
        f"configuration's failed attempts (counts in analysis/errors.csv). Right: of the questions whose first "
        f"attempt failed with an error type, the share the loop then repaired, all configurations pooled; each bar "
        f"is labelled k/n. {_sizes(tables)} {_who(tables, pass_at_1=False)}"
    )


def _strata(tables: RunTables, language: str = "en") -> str:
    variant = " Titles and values as the dataset writes them (the thesis's language)." if language != "en" else ""
    return (
        f"Pass@1 of the final query per stratum value, all configurations pooled: {both(tables)}, on "
        f"the same questions; values in the dataset's order. {loop_words(tables)} "
        f"Each bar is labelled k/N (k of N question-configuration pairs). {_sizes(tables)} "
        f"{cluster_error_bars(tables)} {_who(tables)}{variant}"
    )


def _cost_gain(tables: RunTables) -> str:
    return (
        f"Pass@1 gain ({shown(tables, TREATMENT)} minus {shown(tables, BASELINE)}) against the extra tokens "
        f"(left) and extra model calls (right) per question, one numbered point per configuration (key on the "
        f"right; colour: prompt type, marker: schema format). No error bars: the paired bootstrap CIs of each gain "
        f"and its exact McNemar p are in analysis/comparison.csv. {loop_words(tables)} {_sizes(tables)} {_who(tables)}"
    )


def _strategy_cost(tables: RunTables) -> str:
    rows = (
        tables.strategies[tables.strategies["configuration"] == "ALL"]
        if not tables.strategies.empty
        else tables.strategies
    )
    n = ", ".join(f"{shown(tables, r['strategy'])} {int(r['n'])}" for r in rows.to_dict("records")) or "none"
    return (
        f"Pass@1 of the final answer (left) and KG-valid chain (middle) against the mean LLM calls per question, one "
        f"point per strategy, all configurations pooled (questions x configurations: {n}). No error bars: the "
        f"McNemar tests against single-pass are in analysis/strategies.csv. {loop_words(tables)} Right: two repeat rates per strategy, "
        f"the share of its refinements (attempts after the first; vote's independent samples are none) whose query, "
        f"whitespace and a trailing semicolon aside, repeats one that already failed for the question, k/N on each "
        f"bar: among all model replies (the replies a repeat guard rejected and asked again for included) and among "
        f"the accepted refinements (those rejected replies left out); without a repeat guard the two are equal. "
        f"Strategies without refinements have no bars. {_who(tables)}"
    )


CAPTIONS: dict[str, Callable[[RunTables], str]] = {
    "pass_kgvalid_by_config": _pass_kgvalid,
    "llmetric_heatmap": _heatmap,
    "cumulative_success": _cumulative,
    "error_types_recovery": _errors,
    "accuracy_by_stratum": _strata,
    "cost_vs_gain": _cost_gain,
    "strategy_cost_effectiveness": _strategy_cost,
}
"""Figure name -> its caption (plain text, one paragraph)."""


STRATA_VARIANT = "accuracy_by_stratum_"
"""Prefix of the strata figure in another language: `accuracy_by_stratum_id` is the thesis-language variant."""


def caption(name: str, tables: RunTables) -> str:
    """The caption of figure `name` (plain text ending in a newline)."""
    if name.startswith(STRATA_VARIANT):
        return _strata(tables, name[len(STRATA_VARIANT) :]) + "\n"
    return CAPTIONS[name](tables) + "\n"


def run_pair_caption(pair: Any) -> str:
    """The caption of `t2c study compare`'s figure (a `compare.RunPair`): what each panel shows, of which runs, by whom."""
    a, b = pair.label_a, pair.label_b
    models = "; ".join(f"{label}: {pair.models.get(label) or 'model not recorded'}" for label in (a, b))
    sizes = sorted({int(n) for n in pair.per_cell["n"]}) if "n" in pair.per_cell and len(pair.per_cell) else []
    n = "" if not sizes else f" N = {sizes[0] if len(sizes) == 1 else f'{sizes[0]}-{sizes[-1]}'} questions per bar."
    preset = pair.headline.replace("_", "-")
    return (
        f"Run {b} against run {a}, per configuration: the share of questions whose first reply held no query "
        f"(NO_QUERY, left), whose final query passes the whole validator chain (KG-valid chain, middle) and whose "
        f"final query is result-correct (Pass@1 under the {preset} scoring preset, right); "
        f"{BASELINE} (grey) and {TREATMENT} (blue) of each run, run {a} lighter; the loops: {_pair_loops(pair)}. "
        f"No error bars: the exact McNemar tests of {b} against {a} (Holm across the table) are in the tables "
        f"written beside this figure's run pair.{n} Models: {models}.\n"
    )


def pair_shown(pair: Any, label: str, strategy: str) -> str:
    """What run `label` of a run pair calls `strategy`'s cells: its loop's one name."""
    return getattr(pair, "loops", {}).get(label, {}).get(strategy) or loop_name(strategy).name


def _pair_loops(pair: Any) -> str:
    return "; ".join(
        f"run {label}: " + " and ".join(pair_shown(pair, label, s) for s in (BASELINE, TREATMENT))
        for label in (pair.label_a, pair.label_b)
    )
