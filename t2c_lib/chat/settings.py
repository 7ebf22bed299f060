"""`ChatSettings`: every setting of a conversation, stored with the session so a resume uses the same ones."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from t2c_lib.agent.names import VOTE
from t2c_lib.agent.options import DEFAULT_GUARD_RETRIES, OPTION_KEYS, CorrectorKind, LoopOptions, RepairTurns
from t2c_lib.errors import InvalidValue
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S

ROUTERS = ("hybrid", "model", "rules")
FOLLOW_UPS = ("rewrite", "edit")
"""How a follow-up is answered. `rewrite` (the thesis chat): the model rewrites the previous query.
`edit` (issue 53): a token edit of the previous query when the message reads as one (`chat/edits.py`), judged by
the chain; after a failed turn, the follow-up is asked as a new question built on that turn's question; else
the model's rewrite."""
CACHE_MODES = ("use", "refresh", "off")
_MOST = {
    "max_iterations": 20,
    "max_tokens": 32768,
    "router_max_tokens": 32768,
    "answer_max_tokens": 32768,
    "display_limit": 10_000,
}
"""The largest value of each count a chat accepts (the study's own ranges, `study/param_bounds.py`: a session file
or a typed option is hostile input, so no count is unbounded)."""
_MOST_TIMEOUT_S = 3600.0
_BEFORE = {"stable_order": False, "value_hints": False}
"""What a session saved before a setting existed ran with: it resumes with that, not with today's default."""


@dataclass(frozen=True)
class ChatSettings:
    """Dataset, store and model; how questions are answered (prompt, schema format, strategy); display and budgets."""

    dataset: str = "kurikulum"
    store: str = "ladybug"
    model: str | None = None  # `local`, an endpoint's model name, or None: $T2C_MODEL or local
    prompt_type: str = "Few-Shot"
    schema_format: str = "nodes_paths"
    # self-consistency, chosen on the development dialogues (issue 53, fifth candidate);
    # None: single-pass for max_iterations 1, else feedback (the thesis loop)
    strategy: str | None = VOTE
    max_iterations: int = 3
    max_tokens: int = 256
    temperature: float = 0.0
    refine_temperature: float = 0.1
    router: str = "hybrid"  # hybrid: the model, the rules checking its UNKNOWN (and EXECUTE_QUERY after a failed turn); model: rules only when its reply is unusable; rules: rules only
    router_max_tokens: int = 16
    answer_max_tokens: int = 64
    display_limit: int = 20
    timeout_s: float = DEFAULT_TIMEOUT_S
    cache: str = "use"
    # the feedback loop's options (`agent.options`, the same as `t2c ask`'s); the defaults are the thesis loop
    repair_turns: str = RepairTurns.SINGLE.value
    repeat_guard: bool = False
    repeat_guard_retries: int = DEFAULT_GUARD_RETRIES
    corrector: str = CorrectorKind.NONE.value
    follow_up: str = "edit"  # FOLLOW_UPS; chosen on the development dialogues (issue 53, frozen at da3caa2)
    stable_order: bool = True  # an answer that sorts nothing is listed by its returned columns (issue 53, third round)
    value_hints: bool = True  # the prompt says where the question's values are stored (issue 53, fourth candidate)

    def __post_init__(self) -> None:
        if self.follow_up not in FOLLOW_UPS:
            raise InvalidValue(f"follow_up must be one of {', '.join(FOLLOW_UPS)}, got {self.follow_up!r}")
        for name in ("stable_order", "value_hints"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidValue(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.router not in ROUTERS:
            raise InvalidValue(f"router must be one of {', '.join(ROUTERS)}, got {self.router!r}")
        if self.cache not in CACHE_MODES:
            raise InvalidValue(f"cache must be one of {', '.join(CACHE_MODES)}, got {self.cache!r}")
        for name, most in _MOST.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
                raise InvalidValue(f"{name} must be a positive integer, at most {most:g}, got {value!r}")
        if not (isinstance(self.timeout_s, (int, float)) and 0 < self.timeout_s <= _MOST_TIMEOUT_S):
            raise InvalidValue(
                f"timeout_s must be a number above 0 and at most {_MOST_TIMEOUT_S:g}, got {self.timeout_s!r}"
            )
        _ = self.loop_options  # a bad option value is a one-line error here, not at the first question

    @property
    def loop_options(self) -> LoopOptions:
        """The feedback loop's options these settings name (all off: the thesis loop)."""
        return LoopOptions.from_values({key: getattr(self, key) for key in OPTION_KEYS})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatSettings:
        """Settings from a dict (a session file); unknown keys are an error that names the valid ones."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise InvalidValue(f"unknown chat setting(s) {unknown} (valid: {', '.join(sorted(names))})")
        return cls(**{**_BEFORE, **data})

    def with_overrides(self, **overrides: Any) -> ChatSettings:
        """A copy with the given settings changed (None values are ignored)."""
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = sorted(set(given) - {f.name for f in fields(self)})
        if unknown:
            raise InvalidValue(f"unknown chat setting(s) {unknown}")
        return replace(self, **given)
