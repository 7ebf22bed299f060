"""The contract between the loop and the strategies: `Strategy` (what a strategy is) and `LoopSteps` (the steps
every strategy calls: ask the model, validate, record, choose, feedback), below both.

`loop.AgentLoop` is a `LoopSteps` that runs questions through its strategy. The contract lives here, under the
strategies (`strategies.py`), so a strategy is typed against the steps it uses without importing the loop, and the
loop's imports flow one way. The loop does the asking: it calls the model, parses the answer, runs the
validator chain, builds feedback, records each attempt (with what its query changed and whether it repeats a failed
one; `on_attempt` is called at once), and keeps the budget (LLM calls, tokens, model and validation time).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from t2c_lib.llm.parse import Exchange, ParsedResponse, parse_response
from t2c_lib.prompts.builder import prompt_hash
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


@runtime_checkable
class Strategy(Protocol):
    """How one question's attempts follow one another; the loop does the calls and the records."""

    name: str

    def solve(self, loop: LoopSteps, state: AgentState, ctx: ValidationContext) -> None:
        """Make the attempts for `state.question`, leaving the chosen answer in `state`."""
        ...

    def signature(self, loop: LoopSteps) -> dict[str, Any]:
        """The strategy's own settings (for manifests)."""
        ...


class LoopSteps:
    """The shared steps of the loop, and the settings they read (`AgentLoop.__init__` sets them)."""

    strategy: Strategy
    model: ChatModel
    chain: tuple[Validator, ...]
    prompts: PromptBuilder
    feedback: FeedbackBuilder
    max_iterations: int
    temperature: float
    refine_temperature: float
    max_tokens: int
    stop: list[str] | None
    on_attempt: Callable[[Attempt], None] | None
    on_status: Callable[[AgentState], None] | None

    def set_status(self, state: AgentState, status: AgentStatus) -> None:
        """Move the question to `status` and tell `on_status` (a progress display, a chat session)."""
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


__all__ = ["LoopSteps", "Strategy"]
