"""The loop's records: statuses, error types, validator verdicts, attempts and per-question state.

A leaf below every package: `validation/`, `feedback/`, `prompts/`, `metrics/`, `agent/` and
the study import these types, and this module imports none of them (only the Cypher lexer and,
for a type, `cypher/query_result.py`: a leaf module), so imports flow one way (records <- validators
<- loop <- study). How a later attempt's query follows the earlier ones (`revisions`: a repeat of
a failed query? none, edit, new?) is derived here from the queries alone, so the loop records it
and metrics recompute it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any

from t2c_lib.cypher.lexer import LexError, tokenize

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.cypher.query_result import QueryResult


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


class AttemptKind(StrEnum):
    """What made an attempt; written to `attempts.jsonl` as its `kind` (the member's value, unchanged since the strings).

    A `StrEnum`, not a `(str, Enum)` like `Change`: its `str()` and f-string form are the value, so a
    CSV, an f-string or `json.dumps` writes exactly the string a bare `kind` wrote before. An attempt
    read back (`Attempt.from_dict`) keeps the string it holds, which compares equal to its member.
    """

    GENERATE = "generate"  # a query the model wrote
    VERIFY = "verify"  # the verifier's audit of one (`agent/strategies.py`)
    REJECTED_REPEAT = "rejected_repeat"  # a refinement the repeat guard refused: call counted, answer unused
    CORRECTOR = "corrector"  # a query the schema corrector made (`agent/revise.py`): no model call
    FOLLOW_UP_EDIT = "follow_up_edit"  # a chat follow-up made as a token edit of the previous query (`chat/edits.py`)


NO_MODEL_CALL = frozenset({AttemptKind.CORRECTOR, AttemptKind.FOLLOW_UP_EDIT})
"""Attempt kinds that call no model (the schema corrector's edits): never a model call, never a cache hit."""


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
    mode: str = ""  # the strategy's name: `strategy` reads it; attempts.jsonl keeps the old key `mode`
    parse_note: str = ""
    status: str = ""  # what the loop did next: SUCCESS, REFINING or FAILED
    reasoning: str = ""  # the model's <think> text, if any
    kind: str = AttemptKind.GENERATE  # an `AttemptKind` (read back: the string it holds, equal to its member)
    verdict: dict[str, Any] = field(default_factory=dict)  # verify attempts: approved, issues, corrected_query
    seed: int | None = None  # a per-call sampling seed (vote samples), None = the model's own
    change: str = ""  # what its query changed from the attempt before (a `Change`); "" for a first attempt
    repeats_failed: bool | None = None  # its query equals an earlier failed one of the question; None for a first

    @property
    def strategy(self) -> str:
        """The strategy that made this attempt (stored as `mode`, its old name)."""
        return self.mode

    @property
    def called_model(self) -> bool:
        """The model answered this attempt (not the response cache, and not a kind that asks no model)."""
        return not self.cached and self.kind not in NO_MODEL_CALL

    @property
    def kg_valid(self) -> bool:
        """Syntax, schema and property checks passed (CyVer's definition)."""
        by_name = {v.validator: v.ok for v in self.validations}
        return all(by_name.get(step, False) for step in KG_VALID_STEPS)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["validations"] = [v.to_dict() for v in self.validations]
        d["error_type"] = self.error_type.value if self.error_type else None
        d["kind"] = str(self.kind)  # the plain string, whichever writer reads the dict
        d["kg_valid"] = self.kg_valid
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Attempt:
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["validations"] = [ValidationResult.from_dict(v) for v in d.get("validations", [])]
        kwargs["error_type"] = ErrorType(d["error_type"]) if d.get("error_type") else None
        return cls(**kwargs)


# --- how an attempt's query follows the earlier ones -------------------------------------------


class Change(str, Enum):
    """What a later attempt's query changed from the attempt just before it."""

    NONE = "none"  # the same query (normalised: `normalized_query`)
    EDIT = "edit"  # a small token-level edit: token similarity >= EDIT_SIMILARITY
    NEW = "new"  # any other query
    NO_QUERY = "no_query"  # nothing was extracted from the reply


EDIT_SIMILARITY = 0.7
"""Token similarity (difflib ratio over the lexer's tokens) at or above which a changed query is an `edit`.

Chosen on hand-made pairs of kurikulum queries: a flipped relationship direction or one changed
label scores 0.96, an added condition 0.78; renaming the node, its label and the returned property
(`MATCH (m:MK) RETURN m.nama` -> `MATCH (s:SO) RETURN s.kode`) scores 0.60 and a rewritten
pattern 0.3-0.6, which are new queries. At 0.5 the renamed one would count as an edit.
"""

_FALLBACK_TOKEN = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`|\w+|\S""")
"""Closed literals and names, words, single characters: an unclosed quote is one token, not the rest of the text."""


def normalized_query(query: str) -> str:
    """A query as repeats are compared: whitespace runs collapsed to one space, stripped, trailing `;` dropped.

    A trailing semicolon ends the statement without changing it (the store runs both forms
    alike), so `RETURN 1;` repeats `RETURN 1`. Case and literals are kept: `'Basis Data'` and
    `'basis data'` are different queries.
    """
    text = " ".join((query or "").split())
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text


def query_tokens(*queries: str) -> list[list[tuple[str, str]]]:
    """Each query's tokens as (kind, text): the Cypher lexer's, or, where it refuses any of them, a plain split of all."""
    try:
        return [[(tok.kind.value, tok.text) for tok in tokenize(q)] for q in queries]
    except LexError:  # an unterminated literal, say: split every query the same way so their tokens compare
        return [[("text", piece) for piece in _FALLBACK_TOKEN.findall(q)] for q in queries]


COMPARED_TOKENS = 1000
"""Tokens of each query that `token_similarity` compares: difflib's time grows with the square of the length
(1,000 tokens 0.08 s, 5,000 tokens 2.9 s, measured), and a recorded reply may be far longer than any real query."""


def token_similarity(before: str, after: str) -> float:
    """difflib's ratio (2 * matching tokens / all tokens) over the two normalised queries' first `COMPARED_TOKENS`
    tokens, 0..1."""
    a, b = (t[:COMPARED_TOKENS] for t in query_tokens(normalized_query(before), normalized_query(after)))
    if not a and not b:
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def change_between(before: str, after: str) -> Change:
    """What `after` changed from `before` (the queries of two consecutive attempts)."""
    new, old = normalized_query(after), normalized_query(before)
    if not new:
        return Change.NO_QUERY
    if new == old:
        return Change.NONE
    if old and token_similarity(old, new) >= EDIT_SIMILARITY:
        return Change.EDIT
    return Change.NEW


@dataclass(frozen=True)
class Revision:
    """How one later attempt's query follows the question's earlier attempts."""

    change: Change
    repeats_failed: bool  # equals (normalised) the query of an earlier attempt that failed the chain
    repeats_iteration: int | None = None  # the first earlier failed attempt it repeats


def revision_of(query: str, earlier: Sequence[Attempt]) -> Revision | None:
    """How `query` follows `earlier` (the question's attempts before it, in order); None for a first attempt."""
    if not earlier:
        return None
    norm = normalized_query(query)
    failed = (a.iteration for a in earlier if not a.ok and normalized_query(a.query) == norm)
    repeated = next(failed, None) if norm else None
    return Revision(change_between(earlier[-1].query, query), repeated is not None, repeated)


def revisions(attempts: Sequence[Attempt]) -> list[Revision | None]:
    """Each attempt's revision of the ones before it (None for the first), from the recorded queries alone.

    Pure and order-only, so an old `attempts.jsonl` (written before attempts carried `change`
    and `repeats_failed`) is scored exactly as a new one.
    """
    return [revision_of(a.query, attempts[:i]) for i, a in enumerate(attempts)]


@dataclass
class ChainResult:
    """The validator chain's result for one query: every validator's result, the first failure, time taken, the rows."""

    validations: list[ValidationResult]
    ok: bool
    failed: ValidationResult | None
    elapsed_s: float
    result: QueryResult | None = None  # the query's result when the whole chain passed


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
        """The strategy's name (stored as `mode`, its old name)."""
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
