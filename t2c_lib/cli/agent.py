"""`t2c ask` (one question through the agentic loop) and `t2c validate` (the validator chain alone)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

import click

from t2c_lib.agent import AgentState, Attempt
from t2c_lib.agent.strategies import strategy_spec
from t2c_lib.cli.common import (
    POSITIVE_INT,
    PROMPT_TYPE,
    SCHEMA_FORMAT,
    TEMPERATURE,
    TIMEOUT,
    dataset_option,
    format_table,
    friendly_errors,
    loop_options,
    open_dataset_store,
    store_option,
    strategy_option,
)
from t2c_lib.files.outputs import to_json
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S
from t2c_lib.metrics import columns
from t2c_lib.metrics.agentic import is_accepted_refinement, is_refinement, refinements
from t2c_lib.prompts import Configuration, PromptType
from t2c_lib.records import AttemptKind, Change, revision_of, token_similarity
from t2c_lib.schema import SchemaFormat

ASK_DEFAULTS = {"prompt_type": "Few-Shot", "schema_format": "only_paths", "max_tokens": 256}
ASK_DEFAULTS_MEASUREMENT = """Why `t2c ask` defaults to Few-Shot, only_paths and 256 tokens (measured 2026-11-25, issue 25).

The packaged default model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, `local`), first attempt
only (single-pass), max_tokens 512, temperature 0, on the seeded stratified sample of 8
kurikulum gold questions (`limit: 8, sample_seed: 13`), all nine configurations (`t2c run`
with strategies [single-pass]; then `t2c evaluate`); one thread on a shared 2-core machine:

| configuration | validated (SUCCESS) | KG-valid | NO_QUERY | Pass@1 (t2c) | LLMetric | completion tokens median / max | model s per call |
| --- | --- | --- | --- | --- | --- | --- | --- |
| Zero-Shot_Full | 0/8 | 0.000 | 0/8 | 0.000 | 0.060 | 43 / 68 | 8.2 |
| Zero-Shot_Nodes+Paths | 2/8 | 0.375 | 0/8 | 0.125 | 0.273 | 44 / 55 | 7.1 |
| Zero-Shot_Only-Paths | 0/8 | 0.000 | 0/8 | 0.000 | 0.056 | 32 / 78 | 7.9 |
| Few-Shot_Full | 5/8 | 0.750 | 0/8 | 0.500 | 0.624 | 50 / 84 | 8.1 |
| Few-Shot_Nodes+Paths | 5/8 | 0.625 | 0/8 | 0.500 | 0.574 | 51 / 84 | 9.3 |
| Few-Shot_Only-Paths | 6/8 | 0.875 | 0/8 | 0.625 | 0.736 | 50 / 78 | 7.8 |
| CoT_Full | 2/8 | 0.375 | 0/8 | 0.250 | 0.342 | 96 / 180 | 17.3 |
| CoT_Nodes+Paths | 4/8 | 0.625 | 0/8 | 0.250 | 0.443 | 96 / 125 | 19.8 |
| CoT_Only-Paths | 5/8 | 0.750 | 0/8 | 0.375 | 0.557 | 90 / 137 | 13.6 |

Few-Shot is the best prompt type on every measure (CoT writes twice the tokens and is
right less often; Zero-Shot rarely writes a query that validates). Among its schema
formats Only-Paths leads on Pass@1, KG-valid and LLMetric, by one question of eight: a
small margin, taken because every measure agrees. No reply came near 256 tokens (the
longest, a CoT one, had 180), so 256 stays: it bounds a runaway reply, and it equals the
study grids' max_tokens, so an `ask` first attempt and a study's share the response cache.
(The previous defaults, Few-Shot and nodes_paths, were measured on Gemma 3 270M, which was
right on none of the eight.)
"""


def _debug_logging() -> None:
    """Send the loop's debug log (prompts and generated Cypher) to stderr."""
    logger = logging.getLogger("t2c_lib.agent")
    if not any(getattr(h, "_t2c_debug", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("DEBUG %(name)s: %(message)s"))
        handler._t2c_debug = True  # type: ignore[attr-defined]  # our mark, looked for above
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def _with_loop_options(strategy: str | None, max_iterations: int, values: dict[str, Any]) -> Any:
    """The strategy to run (`agent.build.loop_strategy`); options on a strategy without them are a usage error."""
    from t2c_lib.agent.build import LoopOptionsMisplaced, loop_strategy
    from t2c_lib.agent.options import LoopOptions

    try:
        return loop_strategy(strategy, max_iterations, LoopOptions.from_values(values))
    except LoopOptionsMisplaced as exc:
        raise click.UsageError(str(exc)) from None


def _echo_attempt(attempt: Attempt, earlier: Sequence[Attempt] | None = None) -> None:
    """Print one attempt as soon as the loop hands it over; with `earlier` (verbose), also each validator's
    verdict and how its query follows the question's earlier attempts (what changed, a repeat of a failed one)."""
    cached = ", cached" if attempt.cached else ""
    rejected = " [rejected repeat]" if attempt.kind == AttemptKind.REJECTED_REPEAT else ""
    click.echo(
        f"Attempt {attempt.iteration}{rejected} (temperature {attempt.temperature:g}; model {attempt.model_latency_s:.2f} s{cached}; "
        f"validation {attempt.validation_s:.2f} s; tokens {attempt.prompt_tokens}+{attempt.completion_tokens})"
    )
    if attempt.kind == AttemptKind.VERIFY:
        approved = attempt.verdict.get("approved")
        issues = "; ".join(attempt.verdict.get("issues") or [])
        click.echo(
            f"  verifier:  {'approved' if approved else ('rejected' if approved is False else 'no verdict')}"
            + (f" ({issues})" if issues else "")
        )
    if attempt.kind == AttemptKind.CORRECTOR:
        click.echo("  corrector: " + "; ".join(attempt.verdict.get("changes") or []) + " (no model call)")
    if attempt.kind == AttemptKind.REJECTED_REPEAT:
        click.echo(
            f"  rejected:  repeats the failed query of attempt {attempt.verdict.get('repeats_iteration')}; "
            "the repeat guard asked again"
        )
    if attempt.reasoning:
        click.echo("  reasoning: " + _indent(attempt.reasoning, 13).lstrip())
    click.echo(
        "  query:     " + (_indent(attempt.query, 13).lstrip() if attempt.query else f"(none: {attempt.parse_note})")
    )
    if not attempt.query:  # show why: what the model wrote instead of a query
        click.echo("  reply:     " + trimmed_reply(attempt.raw_response))
    if earlier is not None:
        _echo_revision(attempt, earlier)
    failed = next((v for v in attempt.validations if not v.ok), None)
    if failed is None:
        click.echo("  verdict:   passed " + " -> ".join(v.validator for v in attempt.validations))
    else:
        error = failed.error_type.value if failed.error_type else "?"
        click.echo(f"  failed:    {failed.validator} [{error}] " + _indent(failed.message, 13).lstrip())
        if attempt.feedback:
            sent = "feedback sent" if attempt.status == "REFINING" else "feedback (not sent: no iterations left)"
            click.echo(f"  {sent}:")
            click.echo(_indent(attempt.feedback.rstrip(), 4))


def _samples(strategy: str) -> bool:
    """Whether `strategy` declares its later attempts samples, not refinements (`StrategySpec.samples`); an
    attempt recorded without a strategy refines."""
    return bool(strategy) and strategy_spec(strategy).samples


def _echo_revision(attempt: Attempt, earlier: Sequence[Attempt]) -> None:
    """`--verbose`: every validator's verdict in order, then what changed from the attempt before and whether
    the query repeats one that already failed (whitespace and a trailing semicolon aside)."""
    verdicts = [f"{v.validator} {'ok' if v.ok else 'FAILED'}" for v in attempt.validations]
    click.echo("  validators: " + (" -> ".join(verdicts) or "none ran"))
    revision = revision_of(attempt.query, earlier)
    if revision is None:
        click.echo("  change:    first attempt")
        return
    before = earlier[-1].iteration
    if revision.change is Change.NO_QUERY:
        change = "no query extracted"
    elif revision.change is Change.NONE:
        change = f"none: the same query as attempt {before}"
    elif not earlier[-1].query.strip():
        change = f"new (attempt {before} had no query)"
    else:
        similarity = token_similarity(earlier[-1].query, attempt.query)
        change = f"{revision.change.value} (token similarity {similarity:.2f} to attempt {before})"
    samples = _samples(attempt.strategy)
    sampled = (
        ""
        if is_refinement(attempt, samples)
        else "; the corrector's query, not a model refinement"
        if attempt.kind == AttemptKind.CORRECTOR
        else "; an independent sample, not a refinement"
    )
    click.echo(f"  change:    {change}{sampled}")
    if revision.repeats_failed:
        stood = (
            "; REJECTED by the repeat guard (a model reply, not an accepted refinement)"
            if attempt.kind == AttemptKind.REJECTED_REPEAT
            else "; accepted"
            if is_accepted_refinement(attempt, samples)
            else ""
        )
        click.echo(f"  REPEATS a failed query: attempt {revision.repeats_iteration}'s, which failed the chain{stood}")
    else:
        click.echo("  repeats a failed query: no")


class AttemptPrinter:
    """`on_attempt` for `t2c ask`: prints each attempt; `verbose` adds validators, change and repeats."""

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = verbose
        self.seen: list[Attempt] = []

    def __call__(self, attempt: Attempt) -> None:
        if attempt.iteration == 1:
            self.seen = []
        _echo_attempt(attempt, self.seen if self.verbose else None)
        self.seen.append(attempt)


def _echo_refinements(state: AgentState) -> None:
    """`--verbose`: the question's refinements (model replies, of which the repeat guard rejected some, and those
    accepted), what they changed, and both repeat rates (`columns.REPEAT_RATES`) as k/n."""
    done = refinements(state.attempts, _samples(state.strategy))
    if not done.n_refinements:
        click.echo("refinements: none")
        return
    changes = ", ".join(f"{name} {count}" for name, count in done.changes)
    rejected = done.n_refinements - done.n_accepted_refinements
    guard = f" ({rejected} rejected by the repeat guard)" if rejected else ""
    click.echo(
        f"refinements: {done.n_refinements} model replies{guard}, {done.n_accepted_refinements} accepted; "
        f"changes: {changes}"
    )
    for rate in columns.REPEAT_RATES:
        k, n = getattr(done, rate.repeats), getattr(done, rate.refinements)
        click.echo(f"{rate.label}: {k}/{n} repeating an already failed query")


def trimmed_reply(text: str, limit: int = 300) -> str:
    """The model's reply on one line, cut at `limit` characters (so a failure shows what came back)."""
    flat = " ".join((text or "").split())
    if not flat:
        return "(empty reply)"
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


VERDICT_NOTE = (
    "SUCCESS means the query passed every validator (read-only, syntax, schema, properties, runs, "
    "returns rows); KG-valid means syntax, schema and properties passed. Neither says the answer is "
    "correct: that needs a gold query (`t2c evaluate` scores a run against the ground truth)."
)


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in text.splitlines())


def _export(state: AgentState, path: str, quiet: bool) -> None:
    """`--export`: the final result to `path` with its sidecar; nothing written when no query succeeded."""
    from t2c_lib.chat.export import export_state

    if not state.success or state.result is None:
        click.echo(f"t2c: nothing exported to {path}: no query passed the validator chain", err=True)
        return
    data_path, sidecar = export_state(state, path)
    if not quiet:
        click.echo(f"exported {len(state.result.rows)} row(s) to {data_path} (details: {sidecar})")


PREVIEW_ROWS = 10
"""Rows `t2c ask` and `t2c validate` print of a result; the footer says how many there are and how to get them all."""


def _summary(state: AgentState, rows: int = PREVIEW_ROWS) -> None:
    verdict = "SUCCESS" if state.success else f"FAILED ({state.error_type.value if state.error_type else '?'})"
    click.echo(
        f"{verdict} after {state.iterations} attempt(s), {state.llm_calls} LLM call(s) [{state.config}, {state.strategy}]; "
        f"KG-valid: {'yes' if state.kg_valid else 'no'}; tokens {state.prompt_tokens}+{state.completion_tokens}; "
        f"model {state.model_time_s:.2f} s, validation {state.validation_time_s:.2f} s"
    )
    if state.final_query:
        click.echo("final query: " + _indent(state.final_query, 13).lstrip())
    if state.result is not None:
        click.echo(
            format_table(
                state.result,
                max_rows=rows,
                rest="--rows N shows more, --export FILE.csv writes them all, --json prints them all",
            )
        )
    click.echo(VERDICT_NOTE)


@click.command("ask")
@click.argument("question")
@dataset_option
@store_option
@click.option(
    "--prompt",
    "-p",
    "prompt_type",
    type=PROMPT_TYPE,
    default=ASK_DEFAULTS["prompt_type"],
    show_default=True,
    help="prompt type: Zero-Shot, Few-Shot or CoT (or zero_shot, few_shot, cot)",
)
@click.option(
    "--schema",
    "schema_format",
    type=SCHEMA_FORMAT,
    default=ASK_DEFAULTS["schema_format"],
    show_default=True,
    help="schema format: full_schema, nodes_paths, only_paths or retrieved (or Full, Nodes+Paths, Only-Paths, Retrieved)",
)
@click.option("--descriptions", is_flag=True, help="render schema.yaml's descriptions into the schema text")
@click.option(
    "--max-iterations",
    "-n",
    default=3,
    show_default=True,
    type=POSITIVE_INT,
    help="attempts of the retry strategies; vote's k; 1 = single-pass baseline",
)
@strategy_option("how attempts follow one another [default: single-pass for -n 1, else feedback; agentic = feedback]")
@click.option(
    "--model",
    "-m",
    default=None,
    help="`local` (packaged Qwen2.5-Coder-1.5B-Instruct), local/qwen2.5-coder-0.5b, local/gemma-3-270m, or a model name of the endpoint [default: $T2C_MODEL or local]",
)
@click.option("--temperature", default=0.0, show_default=True, type=TEMPERATURE, help="first attempt (0 to 2)")
@click.option(
    "--refine-temperature", default=0.1, show_default=True, type=TEMPERATURE, help="refinement attempts (0 to 2)"
)
@click.option(
    "--max-tokens",
    default=ASK_DEFAULTS["max_tokens"],
    show_default=True,
    type=POSITIVE_INT,
    help="tokens the model may write per attempt (>= 1)",
)
@click.option(
    "--timeout",
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    type=TIMEOUT,
    help="seconds before a query is stopped (> 0)",
)
@click.option("--no-cache", is_flag=True, help="call the model, neither reading nor writing the response cache")
@click.option("--refresh", is_flag=True, help="call the model and overwrite the cached response")
@click.option("--json", "as_json", is_flag=True, help="print the whole run (attempts, result) as JSON")
@click.option(
    "--rows",
    "rows",
    default=PREVIEW_ROWS,
    show_default=True,
    type=POSITIVE_INT,
    help="result rows printed (the footer gives the total; --export or --json for all)",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="with each attempt, every validator's verdict, what changed from the attempt before and whether it "
    "repeats a query that already failed",
)
@click.option("--debug", is_flag=True, help="log the prompts and the generated Cypher to stderr")
@loop_options
@click.option(
    "--export",
    "export",
    default=None,
    type=click.Path(dir_okay=False),
    help="write the result to FILE (.csv, .json, .xlsx or .parquet) with a FILE.meta.json sidecar",
)
@friendly_errors
def ask(
    question: str,
    dataset: str,
    store: str,
    prompt_type: str,
    schema_format: str,
    descriptions: bool,
    max_iterations: int,
    strategy: str | None,
    model: str | None,
    temperature: float,
    refine_temperature: float,
    max_tokens: int,
    timeout: float,
    no_cache: bool,
    refresh: bool,
    as_json: bool,
    rows: int,
    verbose: bool,
    debug: bool,
    repair_turns: str | None,
    repeat_guard: bool | None,
    repeat_guard_retries: int | None,
    corrector: str | None,
    export: str | None,
) -> None:
    """Answer QUESTION with Cypher: generate, validate, feed back, repair; print every attempt and the result."""
    from t2c_lib.agent.build import build_loop, build_parts
    from t2c_lib.llm.factory import make_cached_model

    if not question.strip():  # before the model is built: an empty question costs no call
        raise click.BadParameter(
            "the question is empty; write one, e.g. t2c ask \"Berapa SKS mata kuliah 'Basis Data'?\"",
            param_hint="QUESTION",
        )
    if export:
        from t2c_lib.chat.export import export_format

        export_format(export)  # a bad extension fails before the model is called
    if debug:
        _debug_logging()
    config = Configuration(PromptType.parse(prompt_type), SchemaFormat.parse(schema_format))
    chosen = _with_loop_options(
        strategy,
        max_iterations,
        {
            "repair_turns": repair_turns,
            "repeat_guard": repeat_guard,
            "repeat_guard_retries": repeat_guard_retries,
            "corrector": corrector,
        },
    )
    ds, graph = open_dataset_store(dataset, store)
    try:
        parts = build_parts(graph, ds, config, descriptions=descriptions, timeout_s=timeout)
        loop = build_loop(
            make_cached_model(model, no_cache=no_cache, refresh=refresh),
            parts,
            max_iterations=max_iterations,
            temperature=temperature,
            refine_temperature=refine_temperature,
            max_tokens=max_tokens,
            strategy=chosen,
            on_attempt=None if as_json else AttemptPrinter(verbose),
        )
        if not as_json:
            click.echo(
                f"{config.name}, {loop.strategy.name}, model {loop.model.model_id}, store {graph.name}, dataset {ds.name}"
            )
        state = loop.run(question)
    finally:
        graph.close()
    if as_json:
        click.echo(to_json(state.to_dict(), ensure_ascii=False, indent=2))
    else:
        if verbose:
            _echo_refinements(state)
        _summary(state, rows)
    if export:
        _export(state, export, quiet=as_json)
    if not state.success:
        sys.exit(1)


@click.command("validate")
@click.argument("cypher")
@dataset_option
@store_option
@click.option(
    "--timeout",
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    type=TIMEOUT,
    help="seconds before the query is stopped (> 0)",
)
@click.option("--json", "as_json", is_flag=True, help="print the list of ValidationResults as JSON")
@click.option("--feedback", "show_feedback", is_flag=True, help="also print the feedback the model would get")
@friendly_errors
def validate(cypher: str, dataset: str, store: str, timeout: float, as_json: bool, show_feedback: bool) -> None:
    """Run only the validator chain on CYPHER and print each step's verdict (exit 0 only if all pass)."""
    from t2c_lib.feedback import FeedbackBuilder
    from t2c_lib.validation import build_chain, make_context, run_chain

    ds, graph = open_dataset_store(dataset, store)
    try:
        ctx = make_context(graph, timeout_s=timeout)
        chain = build_chain(graph)
        results = run_chain(cypher, chain, ctx)
        failed = next((r for r in results if not r.ok), None)
        feedback = FeedbackBuilder(ctx.schema, ds.language, timeout).build(failed, cypher) if failed else None
        result = ctx.result
    finally:
        graph.close()
    passed = failed is None and len(results) == len(chain)
    if as_json:
        click.echo(to_json([r.to_dict() for r in results], ensure_ascii=False, indent=2))
    else:
        for r in results:
            mark = "ok  " if r.ok else "FAIL"
            error = f" [{r.error_type.value}]" if r.error_type else ""
            click.echo(f"{mark} {r.validator:<11}{error} {_indent(r.message, 17).lstrip()}")
        for step in chain[len(results) :]:
            click.echo(f"skip {step.name}")
        if show_feedback and feedback:
            click.echo("feedback:\n" + _indent(feedback.rstrip(), 2))
        if passed and result is not None:
            click.echo(format_table(result, max_rows=PREVIEW_ROWS, rest="t2c db query prints them all"))
            click.echo(
                "valid: the query passed every step on this graph; whether it answers a question needs a gold query"
            )
    if not passed:
        sys.exit(1)
