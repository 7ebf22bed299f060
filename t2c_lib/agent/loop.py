"""`AgentLoop`: one question through a strategy, with the loop's shared steps (generate, validate, record).

A strategy (see `strategies.py`) decides *what to ask next*; the loop does the asking: it
calls the model, parses the answer, runs the validator chain, builds feedback, records each
attempt (with what its query changed and whether it repeats a failed one; `on_attempt` is
called at once), and keeps the budget (LLM calls, tokens, model
and validation time). Single-pass is the loop with one attempt: its first request is
byte-for-byte the first request of `feedback`, `history`, `raw-error` and `verifier`, so
the response cache serves it once and the strategies pair question by question.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from t2c_lib.agent.names import default_strategy
from t2c_lib.agent.strategies import Strategy, get_strategy
from t2c_lib.errors import InvalidValue
from t2c_lib.feedback.templates import feedback_template_hashes
from t2c_lib.llm.parse import Exchange, ParsedResponse, parse_response
from t2c_lib.prompts.builder import prompt_hash
from t2c_lib.prompts.templates import template_hashes
from t2c_lib.records import (
    AgentState,
    AgentStatus,
    Attempt,
    AttemptKind,
    ChainResult,
    ErrorType,
    ValidationResult,
    revision_of,
)
from t2c_lib.validation.chain import run_chain

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.feedback.builder import FeedbackBuilder
    from t2c_lib.llm.base import ChatModel, Message
    from t2c_lib.prompts.builder import PromptBuilder
    from t2c_lib.validation.base import ValidationContext, Validator

log = logging.getLogger(__name__)


class AgentLoop:
    """Take a question through a strategy: generate, validate, and (per strategy) try again.

    `strategy` is a registry name (`single-pass`, `feedback`, `history`, `raw-error`,
    `verifier`, `vote`; `agentic` means `feedback`) or a `Strategy`; by default `single-pass`
    for `max_iterations=1`, else `feedback`. `on_attempt(attempt)` is called as soon as each
    attempt is complete (a runner appends it to `attempts.jsonl` there); `on_status(state)`
    at every status change. An `LLMError` from the model propagates: the runner records it.
    """

    def __init__(
        self,
        model: ChatModel,
        chain: tuple[Validator, ...],
        ctx: ValidationContext,
        prompts: PromptBuilder,
        feedback: FeedbackBuilder,
        *,
        max_iterations: int = 3,
        temperature: float = 0.0,
        refine_temperature: float = 0.1,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        strategy: str | Strategy | None = None,
        on_attempt: Callable[[Attempt], None] | None = None,
        on_status: Callable[[AgentState], None] | None = None,
    ) -> None:
        if max_iterations < 1:
            raise InvalidValue(f"max_iterations must be at least 1, got {max_iterations}")
        self.model = model
        self.chain = tuple(chain)
        self.ctx = ctx
        self.prompts = prompts
        self.feedback = feedback
        self.max_iterations = max_iterations
        self.temperature = temperature
        self.refine_temperature = refine_temperature
        self.max_tokens = max_tokens
        self.stop = list(stop) if stop else None
        chosen = strategy if strategy is not None else default_strategy(max_iterations)
        self.strategy: Strategy = get_strategy(chosen) if isinstance(chosen, str) else chosen
        self.on_attempt = on_attempt
        self.on_status = on_status

    def signature(self) -> dict[str, Any]:
        """Every setting behind this loop's numbers (for run manifests)."""
        return {
            "model": getattr(self.model, "model_id", type(self.model).__name__),
            "config": self.prompts.config.name,
            "mode": self.strategy.name,  # the strategy's name, under its old key
            "strategy": self.strategy.signature(self),
            "max_iterations": self.max_iterations,
            "temperature": self.temperature,
            "refine_temperature": self.refine_temperature,
            "max_tokens": self.max_tokens,
            "stop": self.stop,
            "validators": [step.name for step in self.chain],
            "language": self.prompts.language,
            "schema_hash": self.ctx.schema.text_hash(self.prompts.config.schema_format),
            "templates": {**template_hashes(self.prompts.language), **feedback_template_hashes(self.prompts.language)},
        }

    # --- the shared steps strategies call ---------------------------------------------------

    def set_status(self, state: AgentState, status: AgentStatus) -> None:
        state.status = status
        if self.on_status is not None:
            self.on_status(state)

    def ask(
        self, state: AgentState, messages: Sequence[Message], temperature: float, seed: int | None = None
    ) -> Exchange:
        """One model request, counted in the question's budget; the answer parsed."""
        log.debug(
            "question %s call %d prompt:\n%s",
            state.question_id,
            state.llm_calls + 1,
            "\n".join(f"[{m.role}] {m.content}" for m in messages),
        )
        extra = {} if seed is None else {"seed": seed}
        completion = self.model.complete(
            messages, temperature=temperature, max_tokens=self.max_tokens, stop=self.stop, **extra
        )
        state.llm_calls += 1
        state.prompt_tokens += completion.usage.prompt_tokens
        state.completion_tokens += completion.usage.completion_tokens
        state.model_time_s += completion.latency_s
        return Exchange(messages, completion, parse_response(completion.text), temperature, seed)

    def validate(self, ctx: ValidationContext, parsed: ParsedResponse) -> ChainResult:
        """The validator chain on a parsed answer (NO_QUERY when there is no query)."""
        started = time.perf_counter()
        ctx.result = None
        if parsed.query:
            validations = run_chain(parsed.query, self.chain, ctx)
        else:
            validations = [
                ValidationResult("guard", False, ErrorType.NO_QUERY, parsed.reason or "no query in the response")
            ]
        ok = len(validations) == len(self.chain) and all(v.ok for v in validations)
        failed = next((v for v in validations if not v.ok), None)
        return ChainResult(validations, ok, failed, time.perf_counter() - started, ctx.result if ok else None)

    def record(
        self,
        state: AgentState,
        exchange: Exchange,
        checked: ChainResult,
        *,
        status: AgentStatus,
        feedback: str | None = None,
        kind: AttemptKind = AttemptKind.GENERATE,
        verdict_json: dict[str, Any] | None = None,
    ) -> Attempt:
        """Append one attempt to the state (the final query follows it) and hand it to `on_attempt`.

        A later attempt records how its query follows the earlier ones (`records.revision_of`):
        what changed from the attempt before, and whether it repeats a query that already failed.
        """
        completion, parsed = exchange.completion, exchange.parsed
        revision = revision_of(parsed.query, state.attempts)
        attempt = Attempt(
            question_id=state.question_id,
            iteration=len(state.attempts) + 1,
            prompt_hash=prompt_hash(exchange.messages),
            raw_response=completion.text,
            query=parsed.query,
            validations=checked.validations,
            ok=checked.ok,
            error_type=None if checked.ok or checked.failed is None else checked.failed.error_type,
            feedback=feedback,
            prompt_tokens=completion.usage.prompt_tokens,
            completion_tokens=completion.usage.completion_tokens,
            model_latency_s=completion.latency_s,
            validation_s=checked.elapsed_s,
            cached=completion.cached,
            temperature=exchange.temperature,
            config=state.config,
            mode=self.strategy.name,
            parse_note=parsed.reason,
            status=status.value,
            reasoning=parsed.reasoning,
            kind=kind,
            verdict=verdict_json or {},
            seed=exchange.seed,
            change=revision.change.value if revision else "",
            repeats_failed=revision.repeats_failed if revision else None,
        )
        state.attempts.append(attempt)
        state.validation_time_s += checked.elapsed_s
        self.choose(state, attempt, checked)
        if self.on_attempt is not None:
            self.on_attempt(attempt)
        return attempt

    def choose(self, state: AgentState, attempt: Attempt, checked: ChainResult) -> None:
        """Make `attempt` the question's answer."""
        state.final_query = attempt.query
        state.final_iteration = attempt.iteration
        state.kg_valid = attempt.kg_valid
        state.error_type = attempt.error_type
        state.success = attempt.ok
        state.result = checked.result

    def feedback_text(self, state: AgentState, parsed: ParsedResponse, checked: ChainResult) -> str | None:
        """The thesis feedback for a failed chain result (None when it passed)."""
        if checked.ok or checked.failed is None:
            return None
        repeated = any(a.query == parsed.query for a in state.attempts)
        return self.feedback.build(checked.failed, parsed.query, repeated=repeated)

    # --- one question -----------------------------------------------------------------------

    def run(self, question: str, question_id: str = "") -> AgentState:
        """Take one question through the strategy."""
        ctx = replace(self.ctx, result=None, shape=None, deferred=None, notes={})  # per-run scratch
        state = AgentState(
            question=question,
            question_id=question_id,
            config=self.prompts.config.name,
            mode=self.strategy.name,
            max_iterations=self.max_iterations,
        )
        started = time.perf_counter()
        self.strategy.solve(self, state, ctx)
        state.wall_time_s = time.perf_counter() - started
        self.set_status(state, AgentStatus.SUCCESS if state.success else AgentStatus.FAILED)
        return state
