"""`t2c run`, `t2c evaluate`, `t2c analyze`, `t2c study plan`: the study from the command line.

The notebooks call the same functions (`t2c_lib.study.steps`); `make all` runs the notebooks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from t2c_lib.agent.names import canonical_strategy
from t2c_lib.cli.common import (
    FILE_PATH,
    FOLDER_PATH,
    LIMIT,
    PROMPT_TYPE,
    SCHEMA_FORMAT,
    STRATEGY,
    friendly_errors,
    loop_options,
)
from t2c_lib.errors import InvalidValue, user_path
from t2c_lib.graph import STORES

if TYPE_CHECKING:  # pragma: no cover - imported where used, for a quick start of the command
    from collections.abc import Callable

    from t2c_lib.runs.layout import Cell
    from t2c_lib.study.params import StudyParams


def _params(params_file: str, **overrides: object) -> StudyParams:
    from t2c_lib.study.steps import resolve_params

    return resolve_params(params_file, **overrides)


def _cells(
    params: StudyParams, prompt_type: str | None, schema_format: str | None, strategy: str | None, params_file: str = ""
) -> list[Cell]:
    """The grid's cells that match the filters; a filter value outside the grid is an error, never an empty run."""
    from t2c_lib.runs.layout import expand_grid

    strategy = canonical_strategy(strategy) if strategy else None
    where = params_file or "the parameters"
    for option, value, grid, key in (
        ("--prompt", prompt_type, params.prompt_types, "prompt_types"),
        ("--schema", schema_format, params.schema_formats, "schema_formats"),
        ("--strategy", strategy, params.strategies, "strategies"),
    ):
        if value is not None and value not in grid:
            raise InvalidValue(
                f"{option} {value} is not in the grid of {where} ({key}: {', '.join(grid)}); "
                f"pick one of those, or add {value} to {key} in a parameter file of your own"
            )
    return [c for c in expand_grid(params) if _matches(c, prompt_type, schema_format, strategy)]


def _matches(cell: Cell, prompt_type: str | None, schema_format: str | None, strategy: str | None) -> bool:
    """Whether `cell` passes the --prompt/--schema/--strategy filters (None: any)."""
    return (
        prompt_type in (None, cell.prompt_type)
        and schema_format in (None, cell.schema_format)
        and strategy in (None, cell.strategy)
    )


params_option = click.option(
    "--params", "-p", "params_file", default="params/thesis.yaml", show_default=True, help="parameter file (YAML)"
)
cell_options = [
    click.option(
        "--prompt",
        "prompt_type",
        type=PROMPT_TYPE,
        help="only this prompt type (Zero-Shot, Few-Shot, CoT or zero_shot, ...)",
    ),
    click.option(
        "--schema",
        "schema_format",
        type=SCHEMA_FORMAT,
        help="only this schema format (full_schema, nodes_paths, only_paths or Full, Nodes+Paths, Only-Paths)",
    ),
    click.option(
        "--strategy",
        "--mode",
        "strategy",
        type=STRATEGY,
        help="only this strategy (--mode is its old name; agentic = feedback)",
    ),
]


def with_cell_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(cell_options):
        func = option(func)
    return func


@click.command("run")
@params_option
@with_cell_options
@click.option("--store", type=click.Choice(STORES.names()), help="override the parameter file's store")
@click.option("--model", help="override the parameter file's model")
@click.option("--limit", type=LIMIT, help="number of questions (a positive integer), or 'all'")
@click.option("--run-id", help="override the parameter file's run_id")
@click.option("--no-cache", is_flag=True, help="neither read nor write the response cache")
@click.option("--refresh", is_flag=True, help="call the model again and overwrite cached responses")
@click.option(
    "--replace-run",
    is_flag=True,
    default=None,
    help="a run folder started with other settings is moved aside to results/<run_id>.replaced-<n>/ (default: "
    "refused; T2C_REPLACE_RUN=1 does the same)",
)
@loop_options
@friendly_errors
def run_command(
    params_file: str,
    prompt_type: str | None,
    schema_format: str | None,
    strategy: str | None,
    no_cache: bool,
    refresh: bool,
    replace_run: bool | None,
    **overrides: Any,
) -> None:
    """Run the grid (or one cell of it): every question through the loop; resumes.

    The loop options (`--repair-turns`, `--repeat-guard`, `--corrector`) override the parameter file's
    and apply to its `feedback` cells; they are recorded in each cell's manifest and signature.
    """
    from t2c_lib.llm.cache import CacheMode
    from t2c_lib.study.grid import cells_at_once, run_grid
    from t2c_lib.study.steps import model_choice

    params = _params(params_file, **overrides)  # --store, --model, --limit, --run-id and the loop options
    cache_mode = CacheMode.from_flags(no_cache=no_cache, refresh=refresh).value
    cells = _cells(params, prompt_type, schema_format, strategy, params_file)
    choice = model_choice(params)
    choice.check()
    at_once = cells_at_once(params, len(cells))
    together = (
        f"; {at_once} cells at a time, at most {params.workers} requests in flight (each cell's line as it finishes)"
        if at_once > 1
        else ""
    )
    click.echo(
        f"t2c run {params.run_id}: {len(cells)} cell(s) (strategy x configuration), {choice.describe()}{together}"
    )
    run_grid(
        params,
        cells,
        cache_mode=cache_mode,
        on_report=lambda report: click.echo(report.line()),
        replace_run=replace_run or None,
    )


run_id_option = click.option(
    "--run-id", help="the run to use (results/<run_id>/); its recorded parameters replace --params"
)


def _run_cells(
    params_file: str, run_id: str | None, prompt_type: str | None, schema_format: str | None, strategy: str | None
) -> list[tuple[Cell, StudyParams]]:
    """(cell, params) pairs: from the run's own manifests with --run-id, else from the parameter file's grid."""
    if run_id:
        from t2c_lib.study.manifest import recorded_cells

        _params(params_file, run_id=run_id)  # checks the run id's spelling
        pairs = recorded_cells(run_id)
    else:
        params = _params(params_file)
        pairs = [(cell, params) for cell in _cells(params, None, None, None, params_file)]
    strategy = canonical_strategy(strategy) if strategy else None
    chosen = [(c, p) for c, p in pairs if _matches(c, prompt_type, schema_format, strategy)]
    if not chosen:
        raise InvalidValue("no configuration of the run matches --prompt/--schema/--strategy")
    return chosen


@click.command("evaluate")
@params_option
@run_id_option
@with_cell_options
@friendly_errors
def evaluate_command(
    params_file: str, run_id: str | None, prompt_type: str | None, schema_format: str | None, strategy: str | None
) -> None:
    """Score finished cells: metrics.csv and summary.json per cell."""
    from t2c_lib.study.steps import evaluate

    for cell, params in _run_cells(params_file, run_id, prompt_type, schema_format, strategy):
        summary = evaluate(params, cell.prompt_type, cell.schema_format, cell.strategy)
        click.echo(summary_line(summary))


def summary_line(summary: dict) -> str:
    """One cell's headline numbers, every scoring preset named, Pass@1 by attempt, KG-valid by kind."""
    parts = [
        f"{summary.get('strategy') or summary.get('mode', '')}/{summary['configuration']}: KG-valid structural {summary['kg_valid_structural_final']:.3f}"
        f" chain {summary['kg_valid_chain_final']:.3f}"
    ]
    for name, s in summary["by_scoring"].items():
        parts.append(
            f"[{name}] Pass@1 first {s['pass_at_1_first']:.3f} final {s['pass_at_1_final']:.3f}"
            f" LLMetric {s['llmetric']:.3f}"
        )
    model = f"; model {summary['model_id']}" if summary.get("model_id") else ""
    return " | ".join(parts) + f" (weights {summary['weights']}{model})"


@click.command("analyze")
@params_option
@run_id_option
@friendly_errors
def analyze_command(params_file: str, run_id: str | None) -> None:
    """Compare every strategy with single-pass: tables, paired tests and figures."""
    from t2c_lib import config
    from t2c_lib.report.analysis import STRATEGY_SUMMARY, paired_note, readable_summary, summary_header
    from t2c_lib.runs.layout import ANALYSIS_DIR, run_dir_for
    from t2c_lib.study.steps import analyze

    pairs = _run_cells(params_file, run_id, None, None, None) if run_id else []
    params = pairs[0][1] if run_id else _params(params_file)
    tables = analyze(params)  # the run's recorded grid: its parameters are the ones run.json holds
    if tables.grid_note():
        click.echo(f"run {params.run_id}: {tables.grid_note()}", err=True)
    click.echo(f"run {params.run_id}: " + summary_header(tables))
    if tables.gold:
        click.echo(f"run {params.run_id}: {tables.gold}")
    click.echo(readable_summary(tables).to_string(index=False))
    note = paired_note(tables)
    if note:
        click.echo(note)
    if "strategy" in tables.strategies and tables.strategies["strategy"].nunique() > 2:
        shown = [c for c in STRATEGY_SUMMARY if c in tables.strategies]
        click.echo(tables.strategies[shown].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    from t2c_lib.report.plots import skipped_figures

    for name, why in skipped_figures(tables).items():
        click.echo(f"figure {name} not drawn: it {why}")
    figures = config.FIGURES_DIR / params.run_id
    click.echo(
        f"tables: {run_dir_for(params) / ANALYSIS_DIR}/ (CSV; for the paper headline.tex, booktabs); figures: {figures}/ "
        f"({len(list(figures.glob('*.png')))} figures as PDF, SVG and PNG, each with its caption in a .txt beside it)"
    )


@click.group("study")
def study_group() -> None:
    """Helpers for `make all`."""


@study_group.command("plan")
@params_option
@click.option("--makefile", type=FILE_PATH, required=True, help="where to write the rules")
@click.option("--run-id", help="write this run instead of the parameter file's")
@click.option("--fresh", is_flag=True, help="write the run `make all FRESH=1` makes: <the file's run_id>-fresh")
@friendly_errors
def plan_command(params_file: str, makefile: Path, run_id: str | None, fresh: bool) -> None:
    """Write the make rules that run the notebooks for every cell of the grid."""
    from t2c_lib.study.make import make_rules

    if fresh:
        run_id = f"{_params(params_file).run_id}-fresh"  # publish.replicate.FRESH_SUFFIX, without its pandas
    params = _params(params_file, run_id=run_id)
    with user_path(makefile):
        makefile.parent.mkdir(parents=True, exist_ok=True)
        makefile.write_text(make_rules(params, params_file, run_id), encoding="utf-8")


@study_group.command("check-run")
@params_option
@click.option("--run-id", help="the run folder make writes instead of the parameter file's")
@click.option("--fresh", is_flag=True, help="the run `make all FRESH=1` makes: <the file's run_id>-fresh")
@click.option(
    "--replace-run", is_flag=True, default=None, help="move a run started with other settings aside (T2C_REPLACE_RUN=1)"
)
@friendly_errors
def check_run_command(params_file: str, run_id: str | None, fresh: bool, replace_run: bool | None) -> None:
    """Before `make all`'s first notebook: refuse (or move aside) a run folder started with other settings."""
    from t2c_lib.study.run_record import replace_wanted
    from t2c_lib.study.steps import check_bound_run

    if fresh:
        run_id = f"{_params(params_file).run_id}-fresh"
    params = _params(params_file, run_id=run_id)
    moved = check_bound_run(params, None, with_model=True, replace=replace_wanted(replace_run))
    if moved is not None:
        click.echo(f"run {params.run_id}: started with other settings; the old run moved aside to {moved}/", err=True)


@study_group.command("progress")
@params_option
@click.option(
    "--run-dir",
    type=FOLDER_PATH,
    required=True,
    help="the run's folder as make names it (results/<run_id>)",
)
@click.option("--since", type=float, default=None, help="when this make started (seconds since the epoch)")
@friendly_errors
def progress_command(params_file: str, run_dir: Path, since: float | None) -> None:
    """One line for `make all`: cells of the whole grid done of total, time so far, an estimate of the time left."""
    from t2c_lib.runs.layout import expand_grid
    from t2c_lib.study.progress import grid_progress

    params = _params(params_file)
    cells = [run_dir / cell.strategy / cell.configuration for cell in expand_grid(params)]
    click.echo(grid_progress(params.run_id, cells, run_dir, since).line(), err=True)


@study_group.command("compare")
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--labels",
    nargs=2,
    help="names of the two runs in the tables (default: the values of the one setting "
    "that differs, e.g. free constrained; else the run directories' names)",
)
@click.option(
    "--out",
    type=FOLDER_PATH,
    help="table directory (default: results/compare/<RUN_B>_vs_<RUN_A>, a folder of its own)",
)
@click.option(
    "--figures",
    "figures_dir",
    type=FOLDER_PATH,
    help="figure directory (default: figures/compare/<RUN_B>_vs_<RUN_A>)",
)
@friendly_errors
def compare_command(
    run_a: Path, run_b: Path, labels: tuple[str, str] | None, out: Path | None, figures_dir: Path | None
) -> None:
    """Set two finished runs side by side (e.g. results/thesis vs results/thesis-constrained): NO_QUERY, KG-valid, Pass@1."""
    from t2c_lib import config
    from t2c_lib.report.compare import compare_runs, default_labels
    from t2c_lib.report.plots import export_run_pair_figure

    label_a, label_b = labels or default_labels(run_a, run_b)
    pair = compare_runs(run_a, run_b, label_a, label_b)
    stem = f"{label_b}_vs_{label_a}"
    # a folder of the pair's own: neither run's analysis or figures hold what the other run's data made
    pair_dir = Path("compare") / f"{run_b.resolve().name}_vs_{run_a.resolve().name}"
    tables, figures = out or config.RESULTS_DIR / pair_dir, figures_dir or config.FIGURES_DIR / pair_dir
    with user_path(tables):
        written = pair.write(tables, stem)
    local = all(pair.models.get(label, "").startswith("local") for label in (label_a, label_b))
    with user_path(figures):
        written += export_run_pair_figure(pair, figures, stem, local_model=local)
    click.echo(pair.markdown())
    click.echo("written: " + ", ".join(str(p) for p in written))
