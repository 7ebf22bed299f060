"""`AgentLoop`: one question through a strategy, with the loop's shared steps (`steps.LoopSteps`: generate,
validate, record).

A strategy (see `strategies.py`) decides *what to ask next*; the loop does the asking (`steps.py`).
Single-pass is the loop with one attempt: its first request is byte-for-byte the first request of
`feedback`, `history`, `raw-error` and `verifier`, so the response cache serves it once and the
strategies pair question by question.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from t2c_lib.agent.names import default_strategy
from t2c_lib.agent.steps import LoopSteps, Strategy
from t2c_lib.agent.strategies import get_strategy
from t2c_lib.errors import InvalidValue
from t2c_lib.feedback.templates import feedback_template_hashes
from t2c_lib.prompts.templates import template_hashes
from t2c_lib.records import AgentState, AgentStatus, Attempt

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.feedback.builder import FeedbackBuilder
    from t2c_lib.llm.base import ChatModel
    from t2c_lib.prompts.builder import PromptBuilder
    from t2c_lib.validation.base import ValidationContext, Validator


class AgentLoop(LoopSteps):
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
