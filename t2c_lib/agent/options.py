"""The `feedback` loop's named options: how a refinement is asked for, and what happens before and after.

Each option is off by default, and off means the thesis loop exactly (same requests, same
records, same manifests). When on, an option is named in the run's parameters, its manifest
and signature, and the strategy's settings.

| option | values | what it does |
| --- | --- | --- |
| `repair_turns` | `single` (default), `conversation`, `fresh`, `fresh-strict` | `conversation`: each failed reply stays in the messages as the model's own (assistant) turn and the feedback is the user's reply to it, turn after turn, in the chat template the instruct model was trained on; `fresh`: the first request again with the question followed by every failure's feedback, never the failed query written out by the loop (a database's syntax error still quotes it: measured 2026-11-29, kept as it ran for the published runs); `fresh-strict`: `fresh` with every line of the feedback that quotes a failed query taken out (`feedback/redact.py`; the attempt records the feedback so redacted, as the model read it); `single`: one user message with the question, the failed query and the feedback (the thesis) |
| `repeat_guard` | `false` (default), `true` | a refinement whose query (normalised as `records.normalized_query`) equals a query of the question that already failed is not accepted: the model is asked again along `GUARD_SCHEDULE`, at most `repeat_guard_retries` extra calls, each recorded as an attempt of kind `rejected_repeat` and counted in the question's LLM calls |
| `repeat_guard_retries` | integer >= 1 (default 2) | the guard's extra calls per refinement |
| `corrector` | `none` (default), `schema`, `schema+syntax` | `schema`: a failed query goes through the deterministic schema corrector (`agent/corrector.py`) before the model is asked; a changed query is validated as an attempt of its own (kind `corrector`, no model call) and the model, if still needed, is told what changed; `schema+syntax`: the same with the corrector's syntax rules too (its table) |
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from t2c_lib.agent.names import REVISE, REVISE_STRICT, THESIS_LOOP, LoopName
from t2c_lib.errors import InvalidValue


class RepairTurns(str, Enum):
    """How a refinement request shows the failed attempts."""

    SINGLE = "single"
    CONVERSATION = "conversation"
    FRESH = "fresh"
    FRESH_STRICT = "fresh-strict"


class CorrectorKind(str, Enum):
    """Which deterministic corrector runs on a failed query before the model is asked."""

    NONE = "none"
    SCHEMA = "schema"
    SCHEMA_SYNTAX = "schema+syntax"


@dataclass(frozen=True)
class GuardStep:
    """One retry of the repeat guard: the sampling temperature, and whether the request names the repeated query."""

    temperature: float
    explicit: bool  # the last user message gains "your query X failed; do not write it again"

    def describe(self) -> str:
        return f"T={self.temperature:g}" + (", 'do not write X again'" if self.explicit else ", same messages")


GUARD_SCHEDULE: tuple[GuardStep, ...] = (GuardStep(0.7, explicit=False), GuardStep(0.7, explicit=True))
"""The guard's retries in order (retry r uses the model's seed + r); retries past the list repeat its last step.

1) the same messages with another seed at temperature 0.7; 2) the explicit line naming the repeated query."""

FRESH_GUARD_SCHEDULE: tuple[GuardStep, ...] = (GuardStep(0.7, explicit=False), GuardStep(1.0, explicit=False))
"""The guard's retries with `repair_turns: fresh`: higher temperatures only, since the explicit line would show
the model the failed query that fresh attempts keep out of its sight."""

DEFAULT_GUARD_RETRIES = 2

OPTION_KEYS = ("repair_turns", "repeat_guard", "repeat_guard_retries", "corrector")
"""The options' names, as params YAML keys (and `--repair-turns`, `--repeat-guard`, ... on the command line)."""


@dataclass(frozen=True)
class LoopOptions:
    """The `feedback` loop's options; the defaults are the thesis loop."""

    repair_turns: RepairTurns = RepairTurns.SINGLE
    repeat_guard: bool = False
    repeat_guard_retries: int = DEFAULT_GUARD_RETRIES
    corrector: CorrectorKind = CorrectorKind.NONE

    def __post_init__(self) -> None:
        object.__setattr__(self, "repair_turns", _choice(RepairTurns, self.repair_turns, "repair_turns"))
        object.__setattr__(self, "corrector", _choice(CorrectorKind, self.corrector, "corrector"))
        if not isinstance(self.repeat_guard, bool):
            raise InvalidValue(f"repeat_guard={self.repeat_guard!r}: true or false")
        retries = self.repeat_guard_retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 1:
            raise InvalidValue(f"repeat_guard_retries={retries!r}: a positive integer")

    @property
    def is_default(self) -> bool:
        """All off: the thesis loop."""
        return self == LoopOptions()

    @property
    def conversation(self) -> bool:
        return self.repair_turns is RepairTurns.CONVERSATION

    @property
    def fresh(self) -> bool:
        """A refinement is the first request again with the failures' feedback (`fresh` or `fresh-strict`)."""
        return self.repair_turns in (RepairTurns.FRESH, RepairTurns.FRESH_STRICT)

    @property
    def hides_failed_queries(self) -> bool:
        """`fresh-strict`: the feedback loses every line that quotes a failed query."""
        return self.repair_turns is RepairTurns.FRESH_STRICT

    @property
    def corrects_syntax(self) -> bool:
        return self.corrector is CorrectorKind.SCHEMA_SYNTAX

    @property
    def corrects(self) -> bool:
        return self.corrector is not CorrectorKind.NONE

    def guard_step(self, retry: int) -> GuardStep:
        """The schedule's step for retry 1, 2, ..."""
        schedule = FRESH_GUARD_SCHEDULE if self.fresh else GUARD_SCHEDULE
        return schedule[min(retry, len(schedule)) - 1]

    def changed(self) -> dict[str, Any]:
        """The options that differ from the defaults, as params values (empty for the thesis loop)."""
        default = LoopOptions()
        out: dict[str, Any] = {}
        for key in OPTION_KEYS:
            value = getattr(self, key)
            if value != getattr(default, key) and not (key == "repeat_guard_retries" and not self.repeat_guard):
                out[key] = value.value if isinstance(value, Enum) else value
        return out

    def signature(self) -> dict[str, Any]:
        """What a manifest records: the changed options, and the guard's schedule when it is on."""
        out = self.changed()
        if self.repeat_guard:
            out["repeat_guard_retries"] = self.repeat_guard_retries
            out["repeat_guard_schedule"] = [
                self.guard_step(r).describe() for r in range(1, self.repeat_guard_retries + 1)
            ]
        return out

    def tag(self) -> str:
        """A short form for one-line signatures: `conv+guard2+corr`, or "" for the thesis loop."""
        parts = []
        if self.conversation:
            parts.append("conv")
        if self.fresh:
            parts.append("fresh-strict" if self.hides_failed_queries else "fresh")
        if self.repeat_guard:
            parts.append(f"guard{self.repeat_guard_retries}")
        if self.corrects:
            parts.append(f"corr-{self.corrector.value}")
        return "+".join(parts)

    def loop_name(self) -> LoopName:
        """The loop's one name and description: `thesis-loop`, `revise`, `revise-strict`, or one made of its tag."""
        for options, name, description in NAMED_LOOPS:
            if self == options:
                return LoopName(name, description)
        fragment = self.tag() or f"retries{self.repeat_guard_retries}"
        default = LoopOptions()
        values = {k: getattr(self, k) for k in OPTION_KEYS if getattr(self, k) != getattr(default, k)}
        settings = ", ".join(f"{k}={v.value if isinstance(v, Enum) else v}" for k, v in values.items())
        return LoopName(f"feedback-{fragment}", f"the feedback loop with options {settings}")

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> LoopOptions:
        """Options from a mapping that may hold other keys (params, CLI options); missing keys keep their defaults."""
        return cls(**{k: values[k] for k in OPTION_KEYS if values.get(k) is not None})


def _choice(enum: type[Enum], value: Any, key: str) -> Any:
    try:
        return enum(value)
    except ValueError:
        valid = ", ".join(m.value for m in enum)
        raise InvalidValue(f"{key}={value!r}: valid: {valid}") from None


NAMED_LOOPS: tuple[tuple[LoopOptions, str, str], ...] = (
    (
        LoopOptions(),
        THESIS_LOOP,
        "the thesis's agentic loop: one refinement message with the question, the failed query and "
        "error-specific feedback",
    ),
    (
        LoopOptions(RepairTurns.FRESH, True, 2, CorrectorKind.SCHEMA),
        REVISE,
        "a revising loop: each refinement a fresh attempt told every failure's feedback, a repeat guard "
        "(2 retries) and the schema corrector",
    ),
    (
        LoopOptions(RepairTurns.FRESH_STRICT, True, 2, CorrectorKind.SCHEMA_SYNTAX),
        REVISE_STRICT,
        "a revising loop: each refinement a fresh attempt told every failure's feedback with no line quoting a "
        "failed query, a repeat guard (2 retries) and the schema and syntax corrector",
    ),
)
"""The option combinations that have a name of their own; any other gets `feedback-<tag>` (`LoopOptions.tag`)."""
