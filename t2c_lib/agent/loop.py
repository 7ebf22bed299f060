"""The agentic loop: GENERATE -> VALIDATE -> DECIDE -> REFINE, at most `max_iterations` times.

Single-pass is the same loop with `max_iterations=1`: its first request is byte-for-byte the
agentic first request (same messages, temperature, max_tokens, stop), so the response cache
serves one mode from the other and the two pair question by question.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

from t2c_lib.agent.types import AgentState, AgentStatus, Attempt, ErrorType, ValidationResult, mode_name
from t2c_lib.llm.parse import parse_response
from t2c_lib.prompts.builder import prompt_hash
from t2c_lib.prompts.templates import template_hashes
from t2c_lib.validation.chain import run_chain

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.feedback.builder import FeedbackBuilder
    from t2c_lib.llm.base import ChatModel
    from t2c_lib.prompts.builder import PromptBuilder
    from t2c_lib.validation.base import ValidationContext, Validator

log = logging.getLogger(__name__)


class AgentLoop:
    """Generate a query, validate it, feed the first failure back, and try again.

    `on_attempt(attempt)` is called as soon as each attempt is complete (a runner appends
    it to `attempts.jsonl` there); `on_status(state)` at every status change. An `LLMError`
    from the model propagates: the runner records it.
    """

    def __init__(
        self,
        model: "ChatModel",
        chain: "tuple[Validator, ...]",
        ctx: "ValidationContext",
        prompts: "PromptBuilder",
        feedback: "FeedbackBuilder",
        *,
        max_iterations: int = 3,
        temperature: float = 0.0,
        refine_temperature: float = 0.1,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        mode: str | None = None,
        on_attempt: Callable[[Attempt], None] | None = None,
        on_status: Callable[[AgentState], None] | None = None,
    ) -> None:
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
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
        self.mode = mode or mode_name(max_iterations)
        self.on_attempt = on_attempt
        self.on_status = on_status

    def signature(self) -> dict[str, Any]:
        """Every setting behind this loop's numbers (for run manifests)."""
        return {
            "model": getattr(self.model, "model_id", type(self.model).__name__),
            "config": self.prompts.config.name,
            "mode": self.mode,
            "max_iterations": self.max_iterations,
            "temperature": self.temperature,
            "refine_temperature": self.refine_temperature,
            "max_tokens": self.max_tokens,
            "stop": self.stop,
            "validators": [step.name for step in self.chain],
            "language": self.prompts.language,
            "schema_hash": self.ctx.schema.text_hash(self.prompts.config.schema_format),
            "templates": template_hashes(self.prompts.language),
        }

    def _set(self, state: AgentState, status: AgentStatus) -> None:
        state.status = status
        if self.on_status is not None:
            self.on_status(state)

    def run(self, question: str, question_id: str = "") -> AgentState:
        """Take one question through at most `max_iterations` attempts."""
        ctx = replace(self.ctx, result=None, shape=None, deferred=None, notes={})  # per-run scratch
        state = AgentState(
            question=question, question_id=question_id, config=self.prompts.config.name,
            mode=self.mode, max_iterations=self.max_iterations,
        )
        started = time.perf_counter()
        messages = self.prompts.initial(question)
        temperature = self.temperature
        for iteration in range(1, self.max_iterations + 1):
            self._set(state, AgentStatus.GENERATING)
            log.debug("question %s attempt %d prompt:\n%s", question_id, iteration,
                      "\n".join(f"[{m.role}] {m.content}" for m in messages))
            completion = self.model.complete(messages, temperature=temperature, max_tokens=self.max_tokens, stop=self.stop)
            parsed = parse_response(completion.text)
            log.debug("question %s attempt %d cypher: %s", question_id, iteration, parsed.query or f"<none: {parsed.reason}>")

            self._set(state, AgentStatus.VALIDATING)
            v_start = time.perf_counter()
            if parsed.query:
                validations = run_chain(parsed.query, self.chain, ctx)
            else:
                validations = [ValidationResult("guard", False, ErrorType.NO_QUERY, parsed.reason or "no query in the response")]
            ok = len(validations) == len(self.chain) and all(v.ok for v in validations)
            failed = next((v for v in validations if not v.ok), None)
            repeated = any(a.query == parsed.query for a in state.attempts)
            feedback = None if ok or failed is None else self.feedback.build(failed, parsed.query, repeated=repeated)
            validation_s = time.perf_counter() - v_start

            last = iteration == self.max_iterations
            status = AgentStatus.SUCCESS if ok else (AgentStatus.FAILED if last else AgentStatus.REFINING)
            attempt = Attempt(
                question_id=question_id, iteration=iteration, prompt_hash=prompt_hash(messages),
                raw_response=completion.text, query=parsed.query, validations=validations, ok=ok,
                error_type=None if ok or failed is None else failed.error_type, feedback=feedback,
                prompt_tokens=completion.usage.prompt_tokens, completion_tokens=completion.usage.completion_tokens,
                model_latency_s=completion.latency_s, validation_s=validation_s, cached=completion.cached,
                temperature=temperature, config=state.config, mode=self.mode, parse_note=parsed.reason,
                status=status.value, reasoning=parsed.reasoning,
            )
            state.attempts.append(attempt)
            state.prompt_tokens += attempt.prompt_tokens
            state.completion_tokens += attempt.completion_tokens
            state.model_time_s += attempt.model_latency_s
            state.validation_time_s += validation_s
            state.final_query = parsed.query
            state.kg_valid = attempt.kg_valid
            state.error_type = attempt.error_type
            if self.on_attempt is not None:
                self.on_attempt(attempt)
            if ok:
                state.success = True
                state.result = ctx.result
                break
            if not last:
                self._set(state, AgentStatus.REFINING)
                messages = self.prompts.refinement(question, parsed.query, feedback or "")
                temperature = self.refine_temperature
        state.wall_time_s = time.perf_counter() - started
        self._set(state, AgentStatus.SUCCESS if state.success else AgentStatus.FAILED)
        return state
