"""The loop's records: statuses, error types, validator verdicts, attempts and per-question state.

A leaf below every package: `validation/`, `feedback/`, `prompts/`, `metrics/`, `agent/` and
the study import these types, and this module imports none of them, so imports flow one way
(records <- validators <- loop <- study).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.graph.base import QueryResult


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
    RESOURCE_LIMIT = "RESOURCE_LIMIT"  # over a limit on the query's size, nesting, result bytes or memory
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
    def from_dict(cls, d: dict[str, Any]) -> ValidationResult:
        et = d.get("error_type")
        return cls(
            validator=d["validator"],
            ok=bool(d["ok"]),
            error_type=ErrorType(et) if et else None,
            message=d.get("message", ""),
            details=d.get("details") or {},
            elapsed_s=float(d.get("elapsed_s", 0.0)),
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
    kind: str = "generate"  # "generate" (a query written) or "verify" (the verifier's audit of one)
    verdict: dict[str, Any] = field(default_factory=dict)  # verify attempts: approved, issues, corrected_query
    seed: int | None = None  # a per-call sampling seed (vote samples), None = the model's own

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
    def from_dict(cls, d: dict[str, Any]) -> Attempt:
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["validations"] = [ValidationResult.from_dict(v) for v in d.get("validations", [])]
        kwargs["error_type"] = ErrorType(d["error_type"]) if d.get("error_type") else None
        return cls(**kwargs)


@dataclass
class Verdict:
    """The validator chain's verdict on one query: every result, the first failure, time taken, the rows."""

    validations: list[ValidationResult]
    ok: bool
    failed: ValidationResult | None
    elapsed_s: float
    result: QueryResult | None = None  # the query's result when the whole chain passed


SINGLE_PASS = "single-pass"
FEEDBACK = "feedback"
AGENTIC = "agentic"
"""The thesis's name for the `feedback` strategy; still read from params, CLI options and old run folders."""

LEGACY_STRATEGY_NAMES = {AGENTIC: FEEDBACK}


def canonical_strategy(name: str) -> str:
    """A strategy name with the legacy alias mapped (`agentic` -> `feedback`)."""
    return LEGACY_STRATEGY_NAMES.get(name, name)


def mode_name(max_iterations: int) -> str:
    """The default strategy for an iteration budget: `single-pass` for one, else `feedback` (was `agentic`)."""
    return SINGLE_PASS if max_iterations == 1 else FEEDBACK


@dataclass
class AgentState:
    """One question through the loop: every attempt, the final query and the totals."""

    question: str
    question_id: str = ""
    config: str = ""
    mode: str = ""  # the strategy's name (the field keeps its old name for old readers)
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
    llm_calls: int = 0  # every model request the strategy made, cached or not (its budget)
    final_iteration: int = 0  # the attempt whose query is the answer (the last, or the vote's winner)
    result: QueryResult | None = field(default=None, repr=False)  # the final query's result when it ran

    @property
    def iterations(self) -> int:
        return len(self.attempts)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def strategy(self) -> str:
        return self.mode

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (attempts included; the result as columns/rows)."""
        return {
            "question_id": self.question_id,
            "question": self.question,
            "config": self.config,
            "mode": self.mode,
            "max_iterations": self.max_iterations,
            "status": self.status.value,
            "iterations": self.iterations,
            "final_query": self.final_query,
            "success": self.success,
            "kg_valid": self.kg_valid,
            "error_type": self.error_type.value if self.error_type else None,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_time_s": self.model_time_s,
            "validation_time_s": self.validation_time_s,
            "wall_time_s": self.wall_time_s,
            "strategy": self.mode,
            "llm_calls": self.llm_calls,
            "final_iteration": self.final_iteration,
            "attempts": [a.to_dict() for a in self.attempts],
            "result": self.result.to_json() if self.result is not None else None,
        }
