"""The `ChatModel` protocol: one interface for every LLM backend (remote or in process)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

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
    ) -> Completion:
        """Return the model's answer to `messages`; raise `LLMError` when it cannot."""
        ...


def model_attribute(model: object, name: str, default: object) -> Any:
    """An attribute of the model, looking through wrappers (cache, rate limiter, slots) that keep the inner one as `.model`."""
    for _ in range(8):
        if hasattr(model, name):
            return getattr(model, name)
        inner = getattr(model, "model", None)
        if inner is None or isinstance(inner, str):
            break
        model = inner
    return default


class ModelWrapper:
    """A `ChatModel` that adds one concern around an inner model's `complete` (pacing, slots, stopping).

    The inner model stays reachable as `.model`, which `model_attribute` looks through; a
    subclass overrides `complete` and calls `self.model.complete` inside its concern.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.model_id = model.model_id

    def complete(self, *args: Any, **kwargs: Any) -> Completion:
        return self.model.complete(*args, **kwargs)
