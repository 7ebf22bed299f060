"""What every result column means: one spec for `metrics.csv` and the tables built from it.

Evaluation writes a cell's `metrics.csv` in the order of `METRICS_CSV`; the analysis, the run
comparison, the figures and the command line ask this module for a column's name, and never
build one themselves. Each column's record says:

- `per_preset`: written once per scoring preset, as `<name>__<preset slug>` (`pass_at_1_final__kg_axel`);
- `attempt`: which attempt of a question it describes (`first`, `final`, or neither);
- `kind`: what one question's value is: a pass/fail outcome (`binary`: shares, exact McNemar),
  a 0-1 score (`graded`: means, Wilcoxon signed-rank), a count (calls, tokens), text, or an id;
- `aggregation`: how a table summarises it over questions (`mean`, or `none` for text and ids;
  `column_mean` / `column_means` apply it, and `column_mean_ci` adds the bootstrap interval, so the
  evaluation's `summary.json`, the analysis, the paper tables, the run comparison and the figures do
  not write their own means);
- `higher_is_better`: the direction of a better result (None where it has none); `improvement` reads
  it wherever a table or figure calls a difference a gain;
- `label`: what figures and tables call it.

A few per-question values are not written to `metrics.csv` but computed from its columns by the tables
(`DERIVED`: tokens, the NO_QUERY shares); they have records here too, so they are averaged the same way.

Tables derived from these columns name their columns here too: the two sides of a paired
comparison (`<name>_sp`, `<name>_fb`, or a run's label), a test's fields
(`<name>_mcnemar_p_holm`), a confidence bound (`<name>_low`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from t2c_lib.records import Change

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.metrics.stats import BootstrapCI


class Attempt(str, Enum):
    FIRST = "first"
    FINAL = "final"


class Kind(str, Enum):
    ID = "id"  # names the row: question, configuration, strategy
    BINARY = "binary"  # 0/1 per question: shares, exact McNemar
    GRADED = "graded"  # a 0-1 score per question: means, Wilcoxon signed-rank
    COUNT = "count"  # calls, tokens, attempts per question: means
    TEXT = "text"  # statuses, error types, messages: not aggregated


@dataclass(frozen=True)
class Column:
    """One column of `metrics.csv` (a per-preset one stands for all its `__<preset>` copies)."""

    name: str
    kind: Kind
    label: str = ""
    per_preset: bool = False
    attempt: Attempt | None = None
    higher_is_better: bool | None = None

    @property
    def aggregation(self) -> str:
        return "none" if self.kind in (Kind.ID, Kind.TEXT) else "mean"

    @property
    def metric(self) -> str:
        """The measure without its attempt: `kg_valid_chain` for `kg_valid_chain_final`."""
        return self.name.removesuffix(f"_{self.attempt.value}") if self.attempt else self.name


def _id(name: str) -> Column:
    return Column(name, Kind.ID, name)


def _text(name: str, label: str = "") -> Column:
    return Column(name, Kind.TEXT, label or name)


def _count(name: str, label: str, higher_is_better: bool | None = None) -> Column:
    return Column(name, Kind.COUNT, label, higher_is_better=higher_is_better)


def _kg_valid(which: str, attempt: Attempt) -> Column:
    return Column(
        f"kg_valid_{which}_{attempt.value}", Kind.BINARY, f"KG-valid {which}", attempt=attempt, higher_is_better=True
    )


def _graded(name: str, label: str) -> Column:
    return Column(name, Kind.GRADED, label, per_preset=True, higher_is_better=True)


def change_column(change: Change | str) -> str:
    """The count of refinements with one kind of change: `n_change_none`, `n_change_edit`, ..."""
    return f"n_change_{Change(change).value}"


CHANGE_LABELS = {
    Change.NONE: "refinements: same query",
    Change.EDIT: "refinements: a small edit",
    Change.NEW: "refinements: a new query",
    Change.NO_QUERY: "refinements: no query",
}

LOOP = (
    _count(
        "n_refinements",
        "refinements, all model replies (attempts after the first, rejected repeats included; vote samples are none)",
    ),
    _count("n_repeated_refinements", "refinements repeating a failed query, all model replies", higher_is_better=False),
    _count("n_accepted_refinements", "refinements accepted (the repeat guard's rejected replies left out)"),
    _count("n_accepted_repeats", "accepted refinements repeating a failed query", higher_is_better=False),
    *(_count(change_column(change), CHANGE_LABELS[change]) for change in Change),
)
"""What the loop did after a question's first attempt (`metrics.agentic`: refinements, repeats, changes).
Changes count every model reply, rejected repeats included."""


@dataclass(frozen=True)
class RepeatRate:
    """A repeat rate of tables and summaries: `repeats` / `refinements` (two count columns of `LOOP`), pooled over
    questions, None or empty without refinements."""

    name: str
    repeats: str
    refinements: str
    label: str


REFINEMENT_REPEAT_RATE = "refinement_repeat_rate"
REFINEMENT_REPEAT_LABEL = "repeat rate, all model replies"
ACCEPTED_REPEAT_RATE = "accepted_refinement_repeat_rate"
ACCEPTED_REPEAT_LABEL = "repeat rate, accepted refinements"
REPEAT_RATES = (
    RepeatRate(REFINEMENT_REPEAT_RATE, "n_repeated_refinements", "n_refinements", REFINEMENT_REPEAT_LABEL),
    RepeatRate(ACCEPTED_REPEAT_RATE, "n_accepted_repeats", "n_accepted_refinements", ACCEPTED_REPEAT_LABEL),
)
"""The two repeat rates (`metrics.agentic` defines them), always shown together and under these labels:
all model replies counts every refinement the model wrote, the replies the repeat guard rejected included
(each a repeat); accepted refinements counts only the refinements that stood. Without the guard they are equal."""

BASE = (
    _id("question_id"),
    _id("strategy"),
    _text("loop", "loop"),
    _id("configuration"),
    _id("prompt_type"),
    _id("schema_format"),
    _text("status"),
    Column("success", Kind.BINARY, "passed the validator chain", higher_is_better=True),
    Column("first_attempt_ok", Kind.BINARY, "first attempt passed the chain", higher_is_better=True),
    _count("iterations", "attempts"),
    _count("llm_calls", "LLM calls"),
    _count("prompt_tokens", "prompt tokens"),
    _count("completion_tokens", "completion tokens"),
    _text("final_error_type"),
    _text("first_error_type"),
    _text("error"),
    _count("final_iteration", "attempt chosen"),
    Column("oracle", Kind.BINARY, "oracle@N (some attempt correct)", higher_is_better=True),
    Column("harmed", Kind.BINARY, "harmed (a correct attempt, a wrong answer)", higher_is_better=False),
    *LOOP,
)
"""The columns every cell writes first, before its strata columns (whose names the dataset gives). One fact, one
column: `strategy` (files before it wrote `mode` too, or only `mode`) and `loop` (the loop's one name, derived from the
strategy's options), `llm_calls` (files before it wrote the same count as `model_calls` too); readers take either."""

LEGACY_COLUMNS = {"mode": "strategy", "model_calls": "llm_calls"}
"""Old `metrics.csv` column -> the column that now holds the same fact (readers of old files map them)."""

KG_VALID = (
    _kg_valid("structural", Attempt.FIRST),
    _kg_valid("chain", Attempt.FIRST),
    _kg_valid("structural", Attempt.FINAL),
    _kg_valid("chain", Attempt.FINAL),
)
"""Preset-free: structural = guard, syntax, schema, properties passed; chain = every validator passed."""

PER_PRESET = (
    Column(
        "pass_at_1_first", Kind.BINARY, "Pass@1 first", per_preset=True, attempt=Attempt.FIRST, higher_is_better=True
    ),
    Column(
        "pass_at_1_final", Kind.BINARY, "Pass@1 final", per_preset=True, attempt=Attempt.FINAL, higher_is_better=True
    ),
    _graded("jaccard_output", "Jaccard output"),
    _graded("bleu", "BLEU"),
    _graded("rouge_l_f1", "ROUGE-L F1"),
    _graded("jaro_winkler", "Jaro-Winkler"),
    _graded("jaccard_tokens", "Jaccard tokens"),
    _graded("jarou", "JaRou"),
    _graded("llmetric_q", "LLMetric"),
)
"""Written once per scoring preset as `<name>__<preset slug>`, the headline preset first."""

TAIL = (_text("execution_error"),)
SUITE = (
    Column("pass_at_1_ts", Kind.BINARY, "test-suite Pass@1", higher_is_better=True),
    _text("failed_copies"),
)
"""With perturbed copies (`test_suite_copies` > 0): test-suite Pass@1 under the headline preset."""

REVIEW = (_text("question"), _text("gold_query"), _text("final_query", "final query (the attempt chosen)"))
"""Last: the question, its gold query and the query scored, so a question can be reviewed from metrics.csv alone."""

TOKENS = "tokens"
DERIVED = (
    _count(TOKENS, "tokens (prompt + completion)"),
    Column("no_query_first", Kind.BINARY, "NO_QUERY first reply", attempt=Attempt.FIRST, higher_is_better=False),
    Column("no_query_final", Kind.BINARY, "NO_QUERY final", attempt=Attempt.FINAL, higher_is_better=False),
)
"""Per-question values the tables compute from `metrics.csv` and average, never written there: `tokens` is
`prompt_tokens` + `completion_tokens`; `no_query_<attempt>` is 1 where that attempt's error type is NO_QUERY
(the reply held no query)."""

SCORES = (
    Column("pass_at_1", Kind.BINARY, "Pass@1", higher_is_better=True),
    Column("kg_valid", Kind.BINARY, "KG-valid (the preset's)", higher_is_better=True),
    Column("kg_valid_structural", Kind.BINARY, "KG-valid structural", higher_is_better=True),
    Column("kg_valid_chain", Kind.BINARY, "KG-valid chain", higher_is_better=True),
    Column("rouge_l_p", Kind.GRADED, "ROUGE-L precision", higher_is_better=True),
    Column("rouge_l_r", Kind.GRADED, "ROUGE-L recall", higher_is_better=True),
    Column("jaccard_cypher", Kind.GRADED, "Jaccard tokens", higher_is_better=True),
)
"""One query's scores under the names `metrics/scores.QuestionScores` and `t2c score` give them, before an attempt
and a preset make them columns of `metrics.csv`: `summarize` and `pairs.means` average them through this spec too."""

SPEC: dict[str, Column] = {
    c.name: c for c in (*BASE, *KG_VALID, *PER_PRESET, *TAIL, *SUITE, *REVIEW, *DERIVED, *SCORES)
}

ATTEMPT_SCORES_CSV = (
    "question_id",
    "strategy",
    "configuration",
    "iteration",
    "kind",
    "ok",
    "kg_valid",
    "error_type",
    "failed_validator",
    "result_correct",
    "change",
    "repeats_failed",
)
"""`attempt_scores.csv`: one row per attempt, `result_correct` under the headline preset; `change` (none, edit,
new, no_query) and `repeats_failed` (0/1) compare its query with the earlier ones, empty for a first attempt."""


# --- names ---------------------------------------------------------------------------------------

PRESET_SEPARATOR = "__"


def slug(preset: str) -> str:
    """A scoring preset as column names carry it: `kg-axel` -> `kg_axel`."""
    return preset.replace("-", "_")


def preset_name(preset_slug: str) -> str:
    """The preset a column slug stands for: `kg_axel` -> `kg-axel`."""
    return preset_slug.replace("_", "-")


def spec(name: str) -> Column:
    """The record of a column (a per-preset column by its name without the preset)."""
    try:
        return SPEC[name]
    except KeyError:
        raise KeyError(f"no result column {name!r} (known: {', '.join(SPEC)})") from None


def col(name: str, preset: str | None = None) -> str:
    """The name of a column: `col("pass_at_1_final", "kg-axel")` is `pass_at_1_final__kg_axel`.

    A per-preset column needs its preset; any other column takes none.
    """
    column = spec(name)
    if column.per_preset != (preset is not None):
        raise ValueError(f"column {name!r} is {'' if column.per_preset else 'not '}written per scoring preset")
    return f"{name}{PRESET_SEPARATOR}{slug(preset)}" if preset is not None else name


def at(metric: str, attempt: Attempt | str) -> str:
    """The column of a measure at an attempt: `at("kg_valid_chain", "final")` is `kg_valid_chain_final`."""
    name = f"{metric}_{Attempt(attempt).value}"
    spec(name)
    return name


def cols(names: Iterable[str], presets: Iterable[str]) -> list[str]:
    """Each per-preset column under each preset (preset-major: all of the first preset, then the next)."""
    names = list(names)
    return [col(name, preset) for preset in presets for name in names]


def metrics_csv(presets: Iterable[str], strata: Iterable[str], suite: bool) -> list[str]:
    """The columns of a cell's `metrics.csv`, in order: base, strata, KG-valid, per-preset, error, test suite, review texts."""
    return [
        *(c.name for c in BASE),
        *strata,
        *(c.name for c in KG_VALID),
        *cols((c.name for c in PER_PRESET), presets),
        *(c.name for c in TAIL),
        *((c.name for c in SUITE) if suite else ()),
        *(c.name for c in REVIEW),
    ]


def exact_mean(values: Any) -> float:
    """The mean of `values` from their correctly rounded sum (`math.fsum`), so it does not depend on the rows' order
    or on how a library pairs its additions; a pandas Series skips its missing values as pandas does; NaN for none."""
    if hasattr(values, "dropna"):
        values = values.dropna()
    array = np.asarray(values, dtype=float).ravel()
    return math.fsum(array.tolist()) / array.size if array.size else float("nan")


AGGREGATIONS: dict[str, Callable[[Any], float]] = {"mean": exact_mean}
"""How a column's `aggregation` summarises its values over questions (a pandas Series, a numpy array or a
sequence of numbers): `mean` is `exact_mean`."""


def aggregated(name: str) -> Column:
    """The record of column `name` (a per-preset one with its `__<preset>`), refused unless the spec aggregates it.

    An id or a text has no mean, so a table never averages one by mistake.
    """
    column = spec(name.split(PRESET_SEPARATOR, 1)[0])
    if column.aggregation not in AGGREGATIONS:
        raise ValueError(f"column {name!r} ({column.kind.value}) is not aggregated over questions")
    return column


def column_mean(values: Any, name: str) -> float:
    """Column `name`'s `values` over questions, summarised as its spec says (`Column.aggregation`).

    `values` is a pandas Series or a numpy array, or a plain sequence of numbers (read as a float array:
    `summary.json` averages the rows it has just written); `name` is a column of `metrics.csv` (a
    per-preset one with its `__<preset>`), a `DERIVED` one or one query's score (`SCORES`).
    """
    return AGGREGATIONS[aggregated(name).aggregation](values)


def column_means(frame: Any, names: Iterable[str]) -> dict[str, float]:
    """`column_mean` of each of `names`, each a column of `frame` under its own name."""
    return {name: column_mean(frame[name], name) for name in names}


def column_mean_ci(values: Any, name: str, clusters: Any = None) -> BootstrapCI:
    """Column `name`'s mean over questions with its bootstrap 95% CI (questions resampled, the fixed seed).

    The interval is of a mean, so the spec must aggregate the column by its mean; the estimate is that mean
    (NaN for no values, and where a value is missing: a bootstrap resamples every question). `clusters` (each
    row's question id, where a question repeats across configurations): the cluster bootstrap, questions resampled.
    """
    from t2c_lib.metrics.stats import cluster_bootstrap_ci, paired_bootstrap_ci  # scipy loads with them

    column = aggregated(name)
    if column.aggregation != "mean":
        raise ValueError(f"column {name!r} is aggregated by {column.aggregation}, not by a mean")
    scores = np.asarray(values, dtype=float)
    if clusters is not None:
        return cluster_bootstrap_ci(scores, list(clusters))
    return paired_bootstrap_ci(np.zeros_like(scores), scores)


def improvement(name: str, baseline: Any, treatment: Any) -> Any:
    """How much better `treatment` is than `baseline` on column `name`, in the direction its spec calls better.

    `treatment - baseline` where higher is better, `baseline - treatment` where lower is (harm, repeats,
    NO_QUERY), so a positive gain is always an improvement; numbers or arrays. A column with no direction
    (a count such as LLM calls, an id, a text) has no gain and is refused: report its difference as one.
    """
    better = spec(name.split(PRESET_SEPARATOR, 1)[0]).higher_is_better
    if better is None:
        raise ValueError(f"column {name!r} has no better direction: a difference of it is no gain")
    return treatment - baseline if better else baseline - treatment


def presets_in(columns: Iterable[str]) -> list[str]:
    """The preset slugs a table's columns were written under, in their order (headline first)."""
    head = f"pass_at_1_final{PRESET_SEPARATOR}"
    return [c[len(head) :] for c in columns if c.startswith(head)]


def label(name: str, preset: str | None = None) -> str:
    """What a figure or table calls a column: `Pass@1 final`, or `Pass@1 final (kg-axel)` with a preset."""
    text = spec(name).label
    return f"{text} ({preset_name(slug(preset))})" if preset is not None else text


# --- the columns of the tables built from metrics.csv ------------------------------------------

BASELINE_SIDE, TREATMENT_SIDE = "sp", "fb"
"""The two sides of the paired comparison (single-pass, feedback)."""


def side(name: str, which: str) -> str:
    """A column of one side of a pairing: `<name>_sp`, `<name>_fb`, or `<name>_<run label>`."""
    return f"{name}_{which}"


def stat(name: str, test: str, field: str) -> str:
    """A field of a paired test on a column: `stat("kg_valid_chain_final", "mcnemar", "p_holm")`."""
    return f"{name}_{test}_{field}"


def stat_row(name: str, test: str, result: Any) -> dict[str, Any]:
    """Every field of a test result (`McNemarResult`, `WilcoxonResult`, `BootstrapCI`) as table columns."""
    return {stat(name, test, k): v for k, v in asdict(result).items() if k not in ("level", "resamples", "seed")}


def bound(name: str, which: str) -> str:
    """A confidence bound of a column's mean: `<name>_low`, `<name>_high`."""
    return f"{name}_{which}"


def run_suffix(label_: str) -> str:
    """The suffix a run's copy of every column carries when two runs are joined: `__<label>`."""
    return f"{PRESET_SEPARATOR}{label_}"
