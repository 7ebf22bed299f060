"""The study's three steps, one call each: infer a cell, evaluate a cell, analyze a run.

Notebooks and the CLI call these; they hold no logic of their own. A cell is one
(strategy, prompt type, schema format) of the grid in `StudyParams` (`agentic`, the
thesis's name, is the `feedback` strategy).
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from t2c_lib import config
from t2c_lib.agent.names import canonical_strategy
from t2c_lib.agent.strategies import strategy_names, strategy_spec
from t2c_lib.datasets import DEV_QUESTIONS, DEV_SPLIT, TEST_SPLIT, Dataset, GroundTruthItem, load_dataset
from t2c_lib.errors import InvalidValue, StudyError
from t2c_lib.graph import open_store
from t2c_lib.graph.base import GraphStore
from t2c_lib.llm.stack import CellSlots, RequestSlots
from t2c_lib.metrics import columns
from t2c_lib.runs.layout import MANIFEST_FILE, SCHEMA_RECALL_FILE, SCREEN_DIR, Cell, expand_grid, run_dir_for
from t2c_lib.runs.runlog import write_json
from t2c_lib.schema import SchemaFormat
from t2c_lib.study.manifest import build_manifest, check_same_settings, recorded_models, run_manifest, run_signature
from t2c_lib.study.params import StudyParams
from t2c_lib.study.runner import CellReport, run_cell
from t2c_lib.study.screen import (
    GoldScreen,
    OrderProbe,
    read_cached_screen,
    refuse_failing_examples,
    sample_items,
    screen_cache_key,
    screen_gold,
    write_cached_screen,
)

log = logging.getLogger(__name__)


@dataclass
class StudyContext:
    """The parts every step of one run shares: dataset, store and the questions it asks."""

    params: StudyParams
    dataset: Dataset
    store: GraphStore
    questions: list[GroundTruthItem]
    screen: GoldScreen
    run_dir: Path


def open_study(params: StudyParams, results_dir: Path | None = None) -> StudyContext:
    """Load the dataset, open the store, drop gold pairs that cannot serve as ground truth, sample the questions.

    Dropped: pairs the dataset excludes, pairs the store cannot answer, and pairs whose
    answer depends on row order (`OrderProbe`). They are written with their reasons to
    `<run>/gold_screen/` (never silently).
    """
    dataset = load_dataset(params.dataset, split=params.split)
    store = open_store(params.store, dataset)
    run_dir = run_dir_for(params, results_dir)
    refuse_failing_examples(dataset, store, params.query_timeout_s)  # a few-shot example must run where it is shown
    screen = screened_gold(dataset, store, params.query_timeout_s)
    screen.write_report(run_dir / SCREEN_DIR)
    write_schema_texts(store, dataset, run_dir / "schema")
    if screen.dropped:
        kinds = ", ".join(f"{kind} {count}" for kind, count in screen.kind_counts().items())
        log.warning(
            "%d of %d gold pairs dropped on %s (%s); see %s",
            len(screen.dropped),
            len(dataset.questions),
            store.name,
            kinds,
            run_dir / SCREEN_DIR,
        )
    if screen.loud_warning():  # more than a quarter of the gold gone: said where a run starts, not only logged
        log.error("%s", screen.loud_warning())
        print(f"\n{'!' * 78}\n{screen.loud_warning()}\n{'!' * 78}\n", file=sys.stderr, flush=True)
    limit = None if params.limit == "all" else int(params.limit)
    strata = dataset.strata_columns[0] if dataset.strata_columns else None
    questions = sample_items(screen.kept, limit, strata, params.sample_seed)
    if params.split == TEST_SPLIT:
        refuse_dev_overlap(dataset, questions)
    return StudyContext(params, dataset, store, questions, screen, run_dir)


class DevOverlap(StudyError):
    """A question the run would report on is also in the dataset's development set."""


def refuse_dev_overlap(dataset: Dataset, questions: list[GroundTruthItem]) -> None:
    """Raise `DevOverlap` when a sampled test question is in `dev/questions.csv` (choose on dev, report on test)."""
    if not (dataset.path / DEV_QUESTIONS).is_file():
        return
    dev = {item.question for item in load_dataset(dataset.path, split=DEV_SPLIT).questions}
    shared = [item.id for item in questions if item.question in dev]
    if shared:
        raise DevOverlap(
            f"{len(shared)} sampled question(s) of {dataset.name} are in its development set "
            f"({', '.join(shared[:5])}): the run would report on questions designs were chosen on"
        )


def screened_gold(dataset: Dataset, store: GraphStore, timeout_s: float) -> GoldScreen:
    """`screen_gold` with the row-order probe, read from `.cache/gold_screen/` when the same screen was made before.

    Every notebook of a grid opens the study, and the screen (every gold query on the
    store and on a bottom-up copy) cost about 2 s each time; its key covers everything
    that decides the outcome (`gold.screen_cache_key`), so a reused screen is the same.
    """
    path = config.CACHE_DIR / "gold_screen" / f"{screen_cache_key(dataset, store, timeout_s, True)}.json"
    screen = read_cached_screen(dataset, path)
    if screen is None:
        probe = OrderProbe.open(dataset, forward=store)
        try:
            screen = screen_gold(dataset, store, timeout_s=timeout_s, order_probe=probe)
        finally:
            probe.close()
        write_cached_screen(screen, path)
    return screen


def write_schema_texts(store: GraphStore, dataset: Dataset, directory: Path) -> None:
    """The three schema texts the prompts use, for the paper's appendix."""
    directory.mkdir(parents=True, exist_ok=True)
    schema = store.schema()
    for fmt in (f for f in SchemaFormat if not f.per_question):
        path = directory / f"{dataset.name}_{fmt.value}.txt"
        text = schema.render(fmt)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def cell_for(params: StudyParams, prompt_type: str, schema_format: str, strategy: str) -> Cell:
    """The grid cell for these names, checked against the parameter vocabulary (`agentic` = `feedback`)."""
    checked = params.with_overrides(prompt_types=[prompt_type], schema_formats=[schema_format], strategies=[strategy])
    return Cell(checked.strategies[0], checked.prompt_types[0], checked.schema_formats[0])


class OutsideGrid(InvalidValue):
    """A cell the run's parameters do not name: running it would put it where the run's analysis pools its grid."""


def grid_cell(
    params: StudyParams, prompt_type: str | None = None, schema_format: str | None = None, strategy: str | None = None
) -> Cell:
    """The cell of the run's grid with these names (None: any; the first in run order), or a one-line `OutsideGrid`.

    Notebooks take their cell through this: a cell the parameters' grid lacks would land in the
    run's folder, and the run's analysis would pool it with the grid's cells (issue 39).
    """
    wanted = {
        "strategies": canonical_strategy(strategy) if strategy else None,
        "prompt_types": prompt_type,
        "schema_formats": schema_format,
    }
    checked = params.with_overrides(**wanted)  # spellings (zero_shot, Nodes+Paths, agentic) checked and made canonical
    names = {key: getattr(checked, key)[0] if value else None for key, value in wanted.items()}
    for key, value in names.items():
        if value is not None and value not in getattr(params, key):
            shown = ", ".join(getattr(params, key))
            raise OutsideGrid(
                f"{value} is not in run {params.run_id}'s grid ({key}: {shown}); pick one of those, "
                f"or give a parameter file whose {key} has {value} (with a run_id of its own)"
            )
    return next(
        cell
        for cell in expand_grid(params)
        if names["strategies"] in (None, cell.strategy)
        and names["prompt_types"] in (None, cell.prompt_type)
        and names["schema_formats"] in (None, cell.schema_format)
    )


class VoteBudgetUnknown(StudyError):
    """A strategy needs the measured mean LLM calls of the cell it waits for (vote's k), and that cell has none."""


def waited_mean_calls(cell: Cell, run_dir: Path) -> float:
    """The mean LLM calls per finished question of the cell `cell` waits for (`vote`: the `feedback` twin)."""
    from t2c_lib.runs.layout import QUESTIONS_FILE
    from t2c_lib.runs.runlog import read_jsonl

    waited = cell.twin()
    twin = waited.directory(run_dir) if waited is not None else None
    records = read_jsonl(twin / QUESTIONS_FILE) if twin is not None else []
    calls = [r.get("llm_calls", r.get("iterations", 0)) for r in records]
    if not calls or not any(calls):
        spec = strategy_spec(cell.strategy)
        raise VoteBudgetUnknown(
            f"{cell.strategy} {spec.why or 'needs the cell it waits for'}: run the {spec.waits_for} cell first "
            f"({twin} has no finished questions)"
        )
    return columns.column_mean(calls, "llm_calls")


def strategy_options(params: StudyParams, cell: Cell, run_dir: Path) -> dict[str, Any]:
    """The constructor options of `cell`'s strategy: its declared options read from `params` (`configure`)."""
    spec = strategy_spec(cell.strategy)
    values = {key: params.option(key) for key in spec.options}
    return spec.options_for(values, lambda: waited_mean_calls(cell, run_dir))


def measured_vote_k(params: StudyParams, cell: Cell, run_dir: Path) -> int:
    """k for a `vote` cell: `vote_k`, else the same configuration's `feedback` mean LLM calls, rounded up."""
    return strategy_options(params, cell, run_dir)["k"]


def make_chat_model(
    params: StudyParams,
    cache_mode: str = "use",
    grammar: str | None = None,
    slots: RequestSlots | None = None,
) -> Any:
    """The configured model stack (`llm.factory.build_model`): held to `grammar` if given, `workers` lanes of a
    packaged model, an endpoint's budgets (`requests_per_minute` per endpoint model on this machine; the run's
    `slots`, at most `workers` requests in flight) behind the response cache, whose answers take neither.
    """
    from t2c_lib.llm.factory import build_model

    return build_model(
        params.model,
        seed=params.seed,
        cache_mode=cache_mode,
        grammar=grammar,
        lanes=params.workers,
        requests_per_minute=params.requests_per_minute,
        slots=slots,
    )


def infer(
    params: StudyParams,
    prompt_type: str,
    schema_format: str,
    strategy: str | None = None,
    *,
    cache_mode: str = "use",
    progress: bool = True,
    results_dir: Path | None = None,
    model: Any = None,
    slots: CellSlots | None = None,
    replace_run: bool | None = None,
) -> CellReport:
    """Run one cell: every (unfinished) question through its strategy, attempts persisted as they happen.

    `strategy` is a registered name (`agentic` = `feedback`). `slots` (this cell's view of
    the run's request slots) is shared by cells that run at once (`t2c_lib.study.grid`): requests
    in flight are a budget of the whole run. Requests per minute are the endpoint's budget on this
    machine, across processes (`make_chat_model`).

    The run folder is bound to the settings it was started with (`study.run_record`): other
    settings are refused in one line, or with `replace_run` (None: `T2C_REPLACE_RUN=1`) the old run
    is moved aside.
    """
    from t2c_lib.agent.build import build_loop, build_parts
    from t2c_lib.prompts import Configuration
    from t2c_lib.study.run_record import replace_wanted

    cell = cell_for(params, prompt_type, schema_format, _strategy_arg(strategy))
    choice = model_choice(params)
    if choice is not None and model is None:
        choice.check()  # an endpoint in the environment and `model: local` in the file: refuse to guess
    replace = replace_wanted(replace_run)
    check_bound_run(params, results_dir, with_model=True, replace=replace)
    study = open_study(params, results_dir)
    schema = study.store.schema()
    grammar = None
    if params.decoding == "constrained":
        from t2c_lib.llm.grammar import cypher_grammar

        grammar = cypher_grammar(schema)
    chat = model or make_chat_model(params, cache_mode, grammar, slots.shared if slots else None)
    from t2c_lib.linking import settings_from

    parts = build_parts(
        study.store,
        study.dataset,
        Configuration.from_name(cell.configuration),
        descriptions=params.schema_descriptions,
        linking=settings_from(params),
        timeout_s=params.query_timeout_s,
    )
    chain = parts.chain
    spec = strategy_spec(cell.strategy)
    options = strategy_options(params, cell, study.run_dir)
    chosen = spec(**options)

    def make_loop(on_attempt: Any = None) -> Any:
        return build_loop(
            chat,
            parts,
            max_iterations=cell.max_iterations(params),
            temperature=params.temperature_first,
            refine_temperature=params.temperature_refine,
            max_tokens=params.max_tokens,
            strategy=chosen,
            on_attempt=on_attempt,
        )

    settings = chosen.signature(make_loop()) if not spec.thesis or options else None  # thesis cells: as they were
    lanes = _lane_group(chat)
    bind_study_run(study, chat.model_id, replace)
    write_cell_manifest(params, study, cell, chat.model_id, [step.name for step in chain], settings, grammar, lanes)
    # A packaged model answers one request at a time, or in `workers` lanes decoded together
    # (`LocalModel.lane_group`); an endpoint gets `workers` concurrent requests.
    workers = lanes.lanes if lanes is not None else 1 if chat.model_id.startswith("local/") else params.workers

    def solve(item: GroundTruthItem, on_attempt: Any) -> dict[str, Any]:
        return question_outcome(make_loop(on_attempt).run(item.question, item.id))

    try:
        return run_cell(
            cell,
            params,
            study.questions,
            solve,
            study.run_dir,
            workers=workers,
            progress=progress,
            model_id=chat.model_id,
            lanes=lanes,
            slots=slots,
        )
    finally:
        study.store.close()


def check_bound_run(
    params: StudyParams, results_dir: Path | None, *, with_model: bool, replace: bool = False
) -> Path | None:
    """Refuse (or with `replace`, move aside) a run folder bound to other parameters or another dataset version."""
    from t2c_lib.study.run_record import check_run, record_for

    dataset_hash = load_dataset(params.dataset, split=params.split).hash
    return check_run(
        run_dir_for(params, results_dir), record_for(params, dataset_hash), with_model=with_model, replace=replace
    )


def bind_study_run(study: StudyContext, model_id: str, replace: bool) -> None:
    """Check the run's model and build too, then bind the run folder (`run.json`) if it is not bound yet."""
    from t2c_lib.study.manifest import model_build
    from t2c_lib.study.run_record import bind_run, check_run, record_for

    build = model_build(model_id).get("llama_build", {}).get("id", "")
    record = record_for(study.params, study.dataset.hash, model_id, build)
    if check_run(study.run_dir, record, with_model=True, replace=replace) is not None:
        study.screen.write_report(study.run_dir / SCREEN_DIR)  # the moved run took them along
        write_schema_texts(study.store, study.dataset, study.run_dir / "schema")
    bind_run(study.run_dir, record)


def write_cell_manifest(
    params: StudyParams,
    study: StudyContext,
    cell: Cell,
    model_id: str,
    chain: list[str],
    strategy_settings: dict[str, Any] | None,
    grammar: str | None,
    lanes: Any,
) -> None:
    """A cell's `manifest.json`, refused in one line when the cell's folder recorded other settings."""
    from t2c_lib.feedback import feedback_template_hashes
    from t2c_lib.prompts import template_hashes

    language = study.dataset.language
    hashes = {**template_hashes(language), **feedback_template_hashes(language)}
    manifest = build_manifest(params, study.dataset, study.store, model_id, hashes, chain, cell)
    if strategy_settings is not None:
        manifest["strategy_settings"] = strategy_settings
    if grammar:
        from t2c_lib.llm.grammar import grammar_digest

        manifest["grammar"] = grammar_digest(grammar)
    if lanes is not None:  # replies decoded together: the engine decides bytes, so it is a setting
        manifest["engine"] = lanes.description
        manifest["signature"] = run_signature(manifest)
    check_same_settings(cell.directory(study.run_dir) / MANIFEST_FILE, manifest)
    write_json(cell.directory(study.run_dir) / MANIFEST_FILE, manifest)


def question_outcome(state: Any) -> dict[str, Any]:
    """What `questions.jsonl` records of one solved question (`AgentState`)."""
    return {
        "status": state.status.value,
        "success": state.success,
        "kg_valid": state.kg_valid,
        "iterations": state.iterations,
        "final_query": state.final_query,
        "error": None,
        "final_iteration": state.final_iteration,
        "llm_calls": state.llm_calls,
        "prompt_tokens": state.prompt_tokens,
        "completion_tokens": state.completion_tokens,
        "model_time_s": round(state.model_time_s, 6),
        "validation_time_s": round(state.validation_time_s, 6),
    }


def _lane_group(chat: Any) -> Any:
    """The lanes of the packaged model behind `chat` (the stack says it; a stand-in has none), or None."""
    lane_group = getattr(chat, "lane_group", None)
    return lane_group() if callable(lane_group) else None


def _strategy_arg(strategy: str | None) -> str:
    if strategy is None:
        raise InvalidValue(f"name a strategy ({', '.join(strategy_names())})")
    return strategy


def resolve_params(params_file: str | Path | None = None, **overrides: Any) -> StudyParams:
    """Parameters from a file (relative to the project root if not found here) plus explicit overrides.

    The model follows `t2c_lib.study.model_precedence`: an explicit `model` override, else `T2C_MODEL`,
    else the file's `model:`; the `ModelChoice` rides along in `params.extra` (`infer` checks it).
    """
    import dataclasses

    from t2c_lib.study.model_precedence import CHOICE_KEY, choose_model
    from t2c_lib.study.params import load_params

    base = StudyParams()
    if params_file:
        path = Path(params_file)
        if not path.is_file() and (config.PROJECT_ROOT / path).is_file():
            path = config.PROJECT_ROOT / path
        elif not path.is_file() and (config.PARAMS_DIR / path.name).is_file():
            path = config.PARAMS_DIR / path.name
        base = load_params(path)
    choice = choose_model(
        base.model, overrides.pop("model", None), file_name=str(params_file or "the default parameters")
    )
    params = base.with_overrides(model=choice.name, **overrides)
    return dataclasses.replace(params, extra={**params.extra, CHOICE_KEY: choice})


def model_choice(params: StudyParams) -> Any:
    """The `ModelChoice` behind `params.model` (None for parameters not made by `resolve_params`)."""
    from t2c_lib.study.model_precedence import CHOICE_KEY

    return params.extra.get(CHOICE_KEY)


def evaluate(
    params: StudyParams,
    prompt_type: str,
    schema_format: str,
    strategy: str | None = None,
    *,
    results_dir: Path | None = None,
) -> dict[str, Any]:
    """Score one finished cell: `metrics.csv`, `attempt_scores.csv` and `summary.json` beside its attempts.

    Refused in one line when `params` differ from the settings the cell's inference recorded
    (`check_evaluation_settings`): a left-out `-p max_iterations 2` would score attempts that never happened.
    """
    from t2c_lib.metrics import GoldCache
    from t2c_lib.study.evaluation import evaluate_cell
    from t2c_lib.study.manifest import check_evaluation_settings

    cell = cell_for(params, prompt_type, schema_format, _strategy_arg(strategy))
    check_evaluation_settings(cell.directory(run_dir_for(params, results_dir)) / MANIFEST_FILE, params, cell)
    check_bound_run(params, results_dir, with_model=False)
    study = open_study(params, results_dir)
    from t2c_lib.metrics.testsuite import TestSuite

    gold_cache = GoldCache.for_dataset(study.dataset)
    suite = (
        TestSuite.open(study.dataset, k=params.test_suite_copies, seed=params.seed)
        if params.test_suite_copies
        else None
    )
    try:
        summary = evaluate_cell(
            cell,
            study.run_dir,
            study.questions,
            study.dataset,
            study.store,
            params.weights,
            cell.max_iterations(params),
            params.query_timeout_s,
            gold_cache,
            scoring=params.scoring,
            suite=suite,
        )
        write_schema_recall(cell, study, params)
        from t2c_lib.runs.layout import GOLD_AUDIT_FILE
        from t2c_lib.study.evaluation import write_gold_audit

        if not (study.run_dir / GOLD_AUDIT_FILE).is_file():
            write_gold_audit(study.run_dir, study.questions, study.store, params.query_timeout_s)
    finally:
        study.store.close()
        if suite is not None:
            suite.close()
    return summary


def write_schema_recall(cell: Cell, study: StudyContext, params: StudyParams) -> Path:
    """`schema_recall.csv` of a cell: per question, the share of the gold query's elements its schema text showed."""
    from t2c_lib.metrics.schema_recall import schema_recall, used_elements, whole_schema_names
    from t2c_lib.study.evaluation import rows_to_csv

    fmt = SchemaFormat.parse(cell.schema_format)
    schema = study.store.schema().described(study.dataset.schema_spec.descriptions)
    if fmt.per_question:
        from t2c_lib.linking import retriever_for, settings_from

        retriever = retriever_for(study.store, schema, settings_from(params), params.query_timeout_s)
        shown_for = lambda question: retriever.retrieve(question).names()  # noqa: E731
    else:
        names = whole_schema_names(schema, fmt)
        shown_for = lambda question: names  # noqa: E731
    rows = []
    for item in study.questions:
        shown = shown_for(item.question)
        rows.append(
            {
                "question_id": item.id,
                "schema_recall": schema_recall(item.cypher, shown),
                "missing": " ".join(sorted(used_elements(item.cypher) - shown)),
            }
        )
    path = cell.directory(study.run_dir) / SCHEMA_RECALL_FILE
    path.write_text(rows_to_csv(rows, ["question_id", "schema_recall", "missing"]), encoding="utf-8")
    return path


def analyze(
    params: StudyParams,
    *,
    results_dir: Path | None = None,
    figures_dir: Path | None = None,
    grid: list[Cell] | None = None,
) -> Any:
    """Compare every strategy with single-pass over the run's grid: tables, tests and figures.

    The parameters must be those the run was started with (`study.run_record`, refused in one line
    otherwise), so the grid is the run's own (`grid` when given): a cell folder outside it is not pooled,
    and `RunTables.outside_grid` names it.
    """
    from t2c_lib.report.analysis import analyze_run, load_published, write_tables
    from t2c_lib.report.plots import export_figures

    dataset = load_dataset(params.dataset, split=params.split)
    published = load_published(dataset.path)
    if params.split != TEST_SPLIT:
        published = published.iloc[0:0]  # published numbers describe the test questions, never the dev ones
    run_dir = run_dir_for(params, results_dir)
    check_bound_run(params, results_dir, with_model=False)
    cells = grid if grid is not None else expand_grid(params)
    label = (
        f"this run: {params.run_id}, {', '.join(recorded_models(run_dir)) or params.model} (t2c's graph and questions)"
    )
    tables = analyze_run(
        run_dir,
        dict(dataset.ground_truth_spec.strata),
        published,
        label,
        language=dataset.language,
        folders=[cell.directory(run_dir) for cell in cells],
    )
    write_tables(tables, run_dir)
    from t2c_lib.study.paper_tables import write_paper_tables

    write_paper_tables(tables, run_dir, params.run_id, dataset.name)
    from t2c_lib.report.analysis import summary_text
    from t2c_lib.runs.layout import ANALYSIS_DIR

    (run_dir / ANALYSIS_DIR / "headline.txt").write_text(summary_text(tables, params.run_id), encoding="utf-8")
    export_figures(tables, Path(figures_dir or config.FIGURES_DIR / params.run_id))
    write_json(run_dir / MANIFEST_FILE, run_manifest(params, run_dir, cells))
    return tables
