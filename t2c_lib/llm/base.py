"""The `ChatModel` protocol: one interface for every LLM backend (remote or in process)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from t2c_lib.errors import T2CError


@dataclass(frozen=True)
class Message:
    """One chat message; role is "system", "user" or "assistant"."""

    role: str
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Usage:
    """Token counts of one completion."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Completion:
    """What a model returned: text, usage, wall time of the original call, model id."""

    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False


class LLMError(T2CError, RuntimeError):
    """A model call failed for good (after retries); the message names endpoint and status."""


class LLMConfigError(LLMError):
    """No retry and no other question can succeed (bad key, forbidden, unknown model, bad URL): stop the run."""


class LLMUnavailableError(LLMError):
    """The endpoint gave no answer after every retry (refused or dropped connections, timeouts, 429, 5xx).

    An outage says nothing about the question: a study stops and records nothing for it, so
    the run resumed once the endpoint is back asks it again (an outage is never an answer).
    """


STOPS_THE_RUN: tuple[type[LLMError], ...] = (LLMConfigError, LLMUnavailableError)
"""Model errors after which a study stops without recording the question (see `t2c_lib.study.runner`)."""


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns chat messages into a completion."""

    model_id: str

    def complete(
        self,
        messages: Sequence[Message],
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Return the model's answer to `messages`; raise `LLMError` when it cannot.

        `seed` overrides the model's sampling seed for this one request (vote's samples, the repeat
        guard's retries); None keeps the model's own.
        """
        ...


def model_attribute(model: object, name: str, default: object) -> Any:
    """`model.name`, else `default`: every layer of a model stack says itself what it offers (`ModelWrapper`), so
    nothing digs through `.model` layers."""
    return getattr(model, name, default)


_Number = TypeVar("_Number", int, float)


def env_number(
    env: Mapping[str, str], name: str, default: _Number, read: Callable[[str], _Number], wanted: str
) -> _Number:
    """`env[name]` read by `read` (int, float), else `default` when unset or blank; a bad value is one clear error."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        return read(raw)
    except ValueError:
        raise LLMError(f"{name} must be {wanted}, got {raw!r}") from None


def seed_kwargs(seed: int | None) -> dict[str, int]:
    """`{"seed": seed}` when a seed is given, else nothing: a model without the argument still answers."""
    return {} if seed is None else {"seed": seed}


class ModelWrapper:
    """A `ChatModel` that adds one concern around an inner model's `complete` (pacing, stopping).

    What a caller may need of the model behind it (`model_id`, `seed`, `fingerprint`, `lane_group`)
    it says itself, from the inner model, one layer at a time.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.model_id = model.model_id

    @property
    def seed(self) -> int | None:
        """The inner model's sampling seed (None when it has none)."""
        return getattr(self.model, "seed", None)

    @property
    def fingerprint(self) -> str:
        """The inner model's fingerprint (the packaged model's llama.cpp build), "" when it has none."""
        return getattr(self.model, "fingerprint", "")

    @property
    def packaged(self) -> bool:
        """Whether a packaged (in-process) model answers."""
        return bool(getattr(self.model, "packaged", False))

    def lane_group(self) -> Any:
        """The lanes of the packaged model behind this one (None when it has none)."""
        inner = getattr(self.model, "lane_group", None)
        return inner() if callable(inner) else None

    def complete(
        self,
        messages: Sequence[Message],
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        return self._around(
            lambda: self.model.complete(
                messages, temperature=temperature, max_tokens=max_tokens, stop=stop, **seed_kwargs(seed)
            )
        )

    def _around(self, call: Callable[[], Completion]) -> Completion:
        """The inner model's call with this layer's concern around it (none here; pacing, stopping in `llm.stack`)."""
        return call()
