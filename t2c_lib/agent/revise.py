"""The `feedback` loop with its options on (`agent/options.py`): conversation turns, the repeat guard, the corrector.

With every option off, `Feedback` runs the thesis loop (`strategies._Retry.solve`) and never
comes here. With any option on, a question goes:

1. the model answers the first request (the same request as the thesis loop's, so the cache
   and the pairing with single-pass hold);
2. a refinement that repeats a query of the question that already failed is, with
   `repeat_guard`, recorded as an attempt of kind `rejected_repeat` and asked again along
   `GUARD_SCHEDULE` (another seed at a higher temperature, then the line "your query X failed;
   do not write it again"), at most `repeat_guard_retries` extra calls; the last answer stands;
3. the chain judges the answer; a failure goes, with `corrector: schema` (or `schema+syntax`),
   through the corrector, and a changed query is judged as an attempt of its own (kind `corrector`, no
   model call, its changes in the attempt's `verdict`);
4. still failing, the model is asked again: with `repair_turns: conversation` each failed reply
   stays as its own assistant turn and the feedback is the user's reply; with `fresh` the first
   request again, its question followed by every failure's feedback and never a failed query
   (`fresh-strict`: nor the lines of that feedback that quote one, `feedback/redact.py`);
   otherwise the thesis's single refinement message. What the corrector changed is part of the
   feedback.

Every model call is counted in the question's LLM calls (`AgentLoop.ask`); `max_iterations`
bounds the accepted model answers (`loop` is the `steps.LoopSteps` the strategy was given), so a question may hold more attempts than that when the
guard rejected some or the corrector made some.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from t2c_lib.agent.corrector import Correction, correct
from t2c_lib.agent.options import LoopOptions
from t2c_lib.feedback.redact import without_queries
from t2c_lib.llm.base import Completion, Usage, model_attribute
from t2c_lib.llm.parse import Exchange, ParsedResponse, QuerySource
from t2c_lib.prompts.repair import (
    assistant_turn,
    conversation_messages,
    corrected_feedback,
    corrector_note,
    fresh_messages,
    with_guard_line,
)
from t2c_lib.records import AgentState, AgentStatus, AttemptKind, revision_of

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.validation.base import ValidationContext

NO_CALL = Completion("", Usage(0, 0), 0.0, model=AttemptKind.CORRECTOR.value)
"""The corrector's stand-in for a model reply: it asks no model (`AttemptKind.CORRECTOR`)."""


def solve(options: LoopOptions, loop: Any, state: AgentState, ctx: ValidationContext) -> None:
    """One question through the `feedback` loop with `options` (steps in the module notes)."""
    prompts = loop.prompts
    messages = prompts.initial(state.question)
    temperature = loop.temperature
    turns: list[tuple[str, str]] = []
    failures: list[str] = []  # what each failure was told, for fresh attempts
    budget = loop.max_iterations
    for iteration in range(1, budget + 1):
        loop.set_status(state, AgentStatus.GENERATING)
        exchange = loop.ask(state, messages, temperature)
        if iteration > 1 and options.repeat_guard:
            exchange = _guard(options, loop, state, ctx, exchange)
        completion, parsed = exchange.completion, exchange.parsed
        loop.set_status(state, AgentStatus.VALIDATING)
        checked = loop.validate(ctx, parsed)
        note = _told(options, state, parsed.query, loop.feedback_text(state, parsed, checked))
        last = iteration == budget
        correction = (
            _correction(loop, ctx, parsed.query, options.corrects_syntax)
            if not checked.ok and options.corrects
            else None
        )
        status = (
            AgentStatus.SUCCESS
            if checked.ok
            else (AgentStatus.FAILED if last and correction is None else AgentStatus.REFINING)
        )
        loop.record(state, exchange, checked, status=status, feedback=note)
        if checked.ok:
            return
        reply = assistant_turn(prompts, parsed.query, parsed.reasoning, completion.text)
        failed_query, told = parsed.query, note or ""
        if correction is not None:
            fixed, cnote, ok = _corrected_attempt(loop, state, ctx, correction, parsed.query, last, options)
            if ok:
                return
            failed_query = fixed
            told = (
                corrector_note(prompts, correction.changes, cnote or "")
                if options.fresh
                else corrected_feedback(prompts, correction.changes, fixed, cnote or "")
            )
        if last:
            return
        loop.set_status(state, AgentStatus.REFINING)
        if options.conversation:
            turns.append((reply, told))
            messages = conversation_messages(prompts, state.question, turns)
        elif options.fresh:
            failures.append(told)
            messages = fresh_messages(prompts, state.question, failures)
        else:
            messages = prompts.refinement(state.question, failed_query, told)
        temperature = loop.refine_temperature


def _correction(loop: Any, ctx: ValidationContext, query: str, syntax: bool = False) -> Correction | None:
    """The corrector on a failed query (`syntax`: its syntax rules too); the value index kept on the loop's context."""
    if not query:
        return None
    shared = getattr(loop, "ctx", None)
    if ctx.values is None and shared is not None and shared.values is not None:
        ctx.values = shared.values
    found = correct(query, ctx, syntax=syntax)
    if shared is not None and shared.values is None and ctx.values is not None:
        shared.values = ctx.values
    return found


def _told(options: LoopOptions, state: AgentState, query: str, note: str | None) -> str | None:
    """The feedback as the model will read it: with `fresh-strict`, no line quoting a failed query of the question."""
    if not note or not options.hides_failed_queries:
        return note
    return without_queries(note, [*(a.query for a in state.attempts), query])


def _corrected_attempt(
    loop: Any,
    state: AgentState,
    ctx: ValidationContext,
    correction: Correction,
    source: str,
    last: bool,
    options: LoopOptions,
) -> tuple[str, str | None, bool]:
    """Judge the corrector's query as an attempt of its own (no model call); (its query, its feedback, ok)."""
    loop.set_status(state, AgentStatus.VALIDATING)
    fixed = ParsedResponse(correction.query, source=QuerySource.CYPHER_TAG)
    checked = loop.validate(ctx, fixed)
    note = _told(options, state, correction.query, loop.feedback_text(state, fixed, checked))
    status = AgentStatus.SUCCESS if checked.ok else (AgentStatus.FAILED if last else AgentStatus.REFINING)
    loop.record(
        state,
        Exchange([], NO_CALL, fixed, temperature=0.0),
        checked,
        status=status,
        feedback=note,
        kind=AttemptKind.CORRECTOR,
        verdict_json={"changes": list(correction.changes), "corrected_from": source},
    )
    return correction.query, note, checked.ok


def _guard(
    options: LoopOptions,
    loop: Any,
    state: AgentState,
    ctx: ValidationContext,
    exchange: Exchange,
) -> Exchange:
    """Ask again while the answer repeats a failed query, at most `repeat_guard_retries` times; the last answer stands."""
    base_seed = model_attribute(loop.model, "seed", 0)
    base_seed = base_seed if isinstance(base_seed, int) and not isinstance(base_seed, bool) else 0
    first = list(exchange.messages)
    for retry in range(1, options.repeat_guard_retries + 1):
        revision = revision_of(exchange.parsed.query, state.attempts)
        if revision is None or not revision.repeats_failed:
            break
        loop.set_status(state, AgentStatus.VALIDATING)
        loop.record(
            state,
            exchange,
            loop.validate(ctx, exchange.parsed),
            status=AgentStatus.REFINING,
            kind=AttemptKind.REJECTED_REPEAT,
            verdict_json={"repeats_iteration": revision.repeats_iteration, "guard_retry": retry},
        )
        step = options.guard_step(retry)
        asked = with_guard_line(loop.prompts, first, exchange.parsed.query) if step.explicit else first
        loop.set_status(state, AgentStatus.GENERATING)
        exchange = loop.ask(state, asked, step.temperature, seed=base_seed + retry)
    return exchange
