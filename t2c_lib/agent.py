"""The agentic loop: statuses, error types, validator verdicts, attempts, and `AgentLoop`.

GENERATE -> VALIDATE -> DECIDE -> REFINE, at most `max_iterations` times. Single-pass is
the same loop with `max_iterations=1`: its first request is byte-for-byte the agentic
first request (same messages, temperature, max_tokens, stop), so the response cache
serves one mode from the other and the two pair question by question.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.feedback.builder import FeedbackBuilder
    from t2c_lib.graph.base import QueryResult
    from t2c_lib.llm.base import ChatModel
    from t2c_lib.prompts.builder import PromptBuilder
    from t2c_lib.validation.base import ValidationContext, Validator

log = logging.getLogger(__name__)


class AgentStatus(str, Enum):
    GENERATING = "GENERATING"
    VALIDATING = "VALIDATING"
    REFINING = "REFINING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"


class ErrorType(str, Enum):
    """Why a query failed validation; one feedback template per member."""

    NO_QUERY = "NO_QUERY"
    UNSAFE_QUERY = "UNSAFE_QUERY"
    SYNTAX_ERROR = "SYNTAX_ERROR"
    SCHEMA_ERROR = "SCHEMA_ERROR"
    PROPERTIES_ERROR = "PROPERTIES_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    TIMEOUT = "TIMEOUT"
    EMPTY_RESULT = "EMPTY_RESULT"


KG_VALID_STEPS = ("guard", "syntax", "schema", "properties")
"""Validator names whose success makes a query KG-valid (CyVer: syntax, schema, properties)."""


@dataclass
class ValidationResult:
    """One validator's verdict on one query."""

    validator: str
    ok: bool
    error_type: ErrorType | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["error_type"] = self.error_type.value if self.error_type else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ValidationResult":
        et = d.get("error_type")
        return cls(
            validator=d["validator"], ok=bool(d["ok"]), error_type=ErrorType(et) if et else None,
            message=d.get("message", ""), details=d.get("details") or {}, elapsed_s=float(d.get("elapsed_s", 0.0)),
        )


@dataclass
class Attempt:
    """One GENERATE+VALIDATE round, exactly as written to `attempts.jsonl`."""

    question_id: str
    iteration: int  # 1-based
    prompt_hash: str
    raw_response: str
    query: str
    validations: list[ValidationResult]
    ok: bool
    error_type: ErrorType | None
    feedback: str | None  # the feedback built from this attempt's failure (None when ok)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_latency_s: float = 0.0
    validation_s: float = 0.0
    cached: bool = False
    temperature: float = 0.0
    config: str = ""
    mode: str = ""
    parse_note: str = ""
    status: str = ""  # what the loop did next: SUCCESS, REFINING or FAILED
    reasoning: str = ""  # the model's <think> text, if any

    @property
    def kg_valid(self) -> bool:
        """Syntax, schema and property checks passed (CyVer's definition)."""
        by_name = {v.validator: v.ok for v in self.validations}
        return all(by_name.get(step, False) for step in KG_VALID_STEPS)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["validations"] = [v.to_dict() for v in self.validations]
        d["error_type"] = self.error_type.value if self.error_type else None
        d["kg_valid"] = self.kg_valid
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Attempt":
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["validations"] = [ValidationResult.from_dict(v) for v in d.get("validations", [])]
        kwargs["error_type"] = ErrorType(d["error_type"]) if d.get("error_type") else None
        return cls(**kwargs)


SINGLE_PASS = "single-pass"
AGENTIC = "agentic"


def mode_name(max_iterations: int) -> str:
    """`single-pass` for one iteration, else `agentic` (the mode names of a run directory)."""
    return SINGLE_PASS if max_iterations == 1 else AGENTIC


@dataclass
class AgentState:
    """One question through the loop: every attempt, the final query and the totals."""

    question: str
    question_id: str = ""
    config: str = ""
    mode: str = ""
    max_iterations: int = 3
    status: AgentStatus = AgentStatus.GENERATING
    attempts: list[Attempt] = field(default_factory=list)
    final_query: str = ""
    success: bool = False
    kg_valid: bool = False
    error_type: ErrorType | None = None  # the final attempt's, None on success
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_time_s: float = 0.0
    validation_time_s: float = 0.0
    wall_time_s: float = 0.0
    result: "QueryResult | None" = field(default=None, repr=False)  # the final query's result when it ran

    @property
    def iterations(self) -> int:
        return len(self.attempts)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (attempts included; the result as columns/rows)."""
        return {
            "question_id": self.question_id, "question": self.question, "config": self.config,
            "mode": self.mode, "max_iterations": self.max_iterations, "status": self.status.value,
            "iterations": self.iterations, "final_query": self.final_query, "success": self.success,
            "kg_valid": self.kg_valid, "error_type": self.error_type.value if self.error_type else None,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "model_time_s": self.model_time_s, "validation_time_s": self.validation_time_s,
            "wall_time_s": self.wall_time_s,
            "attempts": [a.to_dict() for a in self.attempts],
            "result": self.result.to_json() if self.result is not None else None,
        }


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
        from t2c_lib.prompts.templates import template_hashes

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
        from t2c_lib.llm.parse import parse_response
        from t2c_lib.prompts.builder import prompt_hash
        from t2c_lib.validation.chain import run_chain

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
