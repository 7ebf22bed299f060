"""Chat messages -> the prompt a local model sees, split into a shared prefix and the question's part.

Two renderings (see `t2c_lib.llm.registry.Rendering`):

- **chat template** (instruct models): the Jinja chat template carried in the model's own
  GGUF, rendered in Jinja's immutable sandbox (the template is data from an untrusted
  upload: it can call no Python and change nothing). System, user and assistant turns
  stay turns; few-shot pairs are user/assistant turns; the prompt ends with the
  template's generation prompt (the assistant turn opening).
- **completion** (the base Gemma): system text first, then `Question: ...` / `Cypher: ...`
  blocks, ending in an open `Cypher:` for the model to continue.

A prompt is a sequence of `Segment`s: text the template wrote (its control tokens such as
`<|im_start|>` are parsed as special tokens) and message contents (never parsed as
special tokens, so a question that contains `<|im_end|>` cannot close its own turn).
Everything before the last user message's content is the shared prefix: instructions,
schema and examples, identical for every question of a configuration, whose evaluated
KV cache the local model keeps.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from t2c_lib.llm.base import LLMError, Message

ROLES = ("system", "user", "assistant")
QUESTION_PREFIX = "Question:"
ANSWER_PREFIX = "Cypher:"
COMPLETION_VERSION = "plain-v2"
CHAT_VERSION = "chat-template-v1"


@dataclass(frozen=True)
class Segment:
    """A piece of the prompt; `special`: written by the template, so control-token text is parsed as such."""

    text: str
    special: bool = False


@dataclass(frozen=True)
class RenderedPrompt:
    """The prompt as segments; the first `prefix_count` form the shared prefix."""

    segments: tuple[Segment, ...]
    prefix_count: int

    @property
    def prefix(self) -> tuple[Segment, ...]:
        return self.segments[: self.prefix_count]

    @property
    def suffix(self) -> tuple[Segment, ...]:
        return self.segments[self.prefix_count :]

    @property
    def prefix_text(self) -> str:
        return "".join(s.text for s in self.prefix)

    @property
    def suffix_text(self) -> str:
        return "".join(s.text for s in self.suffix)

    @property
    def text(self) -> str:
        return self.prefix_text + self.suffix_text

    def digest(self) -> str:
        """sha256 (16 hex digits) of what the model sees, segment kinds included."""
        h = hashlib.sha256()
        for segment in self.segments:
            h.update(b"S" if segment.special else b"T")
            h.update(segment.text.encode("utf-8") + b"\x00")
        return h.hexdigest()[:16]


def _check_roles(messages: Sequence[Message], who: str) -> None:
    unknown = sorted({m.role for m in messages if m.role not in ROLES})
    if unknown:
        raise LLMError(f"{who}: cannot render message role(s) {unknown}; use system/user/assistant")


class CompletionRenderer:
    """A base model's prompt: system text, `Question:`/`Cypher:` blocks, an open `Cypher:`."""

    version = COMPLETION_VERSION

    def __init__(self, who: str = "local model") -> None:
        self.who = who

    def render(self, messages: Sequence[Message]) -> RenderedPrompt:
        prefix, suffix = completion_parts(messages, self.who)
        return RenderedPrompt((Segment(prefix), Segment(suffix)), 1)


def completion_parts(messages: Sequence[Message], who: str = "local model") -> tuple[str, str]:
    """The completion prompt as (shared prefix, per-question suffix).

    system messages (instructions + schema) come first, joined by blank lines; then every
    user message becomes `Question: <content>` and every assistant message
    `Cypher: <content>`, one pair per block; the prompt ends with `Cypher:` after the last
    question so the model's continuation is the query. The prefix is everything before
    the last user message.
    """
    _check_roles(messages, who)
    system = [m.content.strip() for m in messages if m.role == "system" and m.content.strip()]
    dialogue = [m for m in messages if m.role != "system"]
    last_user = max((i for i, m in enumerate(dialogue) if m.role == "user"), default=len(dialogue))
    shared = ["\n\n".join(system)] if system else []
    shared += _pair_blocks(dialogue[:last_user])
    own = _pair_blocks(dialogue[last_user:])
    if not dialogue or dialogue[-1].role == "user":
        own[-1:] = [f"{own[-1]}\n{ANSWER_PREFIX}" if own else ANSWER_PREFIX]
    prefix = "".join(block + "\n\n" for block in shared)
    return prefix, "\n\n".join(own)


def _pair_blocks(dialogue: Sequence[Message]) -> list[str]:
    """`Question:` / `Cypher:` blocks, one per user turn and its answer."""
    blocks: list[list[str]] = []
    for message in dialogue:
        content = message.content.strip()
        if message.role == "user" or not blocks:
            prefix = QUESTION_PREFIX if message.role == "user" else ANSWER_PREFIX
            blocks.append([f"{prefix} {content}"])
        else:
            blocks[-1].append(f"{ANSWER_PREFIX} {content}")
    return ["\n".join(block) for block in blocks]


# Private-use characters: no template writes them, no message is allowed to contain them.
_OPEN, _CLOSE = "\ue000", "\ue001"


class ChatTemplateRenderer:
    """An instruct model's prompt through its own Jinja chat template, rendered in a sandbox."""

    version = CHAT_VERSION

    def __init__(self, template: str, bos_token: str = "", eos_token: str = "", who: str = "local model") -> None:
        if not template or not template.strip():
            raise LLMError(f"{who}: the GGUF carries no chat template (tokenizer.chat_template)")
        from jinja2 import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        def raise_exception(message: str) -> None:
            raise LLMError(f"{who}: chat template refused the messages: {message}")

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, autoescape=False)
        env.globals["raise_exception"] = raise_exception
        try:
            self._template = env.from_string(template)
        except TemplateError as exc:
            raise LLMError(f"{who}: the GGUF's chat template does not parse: {exc}") from None
        self.template_sha256 = hashlib.sha256(template.encode("utf-8")).hexdigest()
        self.bos_token, self.eos_token, self.who = bos_token, eos_token, who

    def render(self, messages: Sequence[Message]) -> RenderedPrompt:
        """Each message's content goes in as a marker; the template's text around the markers is its own.

        The template must place every content once, in order (Qwen's, like most, does);
        the markers are then replaced by the contents as plain-text segments.
        """
        _check_roles(messages, self.who)
        for m in messages:
            if _OPEN in m.content or _CLOSE in m.content:
                raise LLMError(f"{self.who}: a message contains the private-use characters U+E000/U+E001")
        marked = [{"role": m.role, "content": f"{_OPEN}{i}{_CLOSE}"} for i, m in enumerate(messages)]
        from jinja2 import TemplateError

        try:
            text = self._template.render(
                messages=marked, add_generation_prompt=True, bos_token=self.bos_token, eos_token=self.eos_token
            )
        except TemplateError as exc:
            raise LLMError(f"{self.who}: rendering the chat template failed: {exc}") from None
        segments: list[Segment] = []
        rest = text
        for i, message in enumerate(messages):
            marker = f"{_OPEN}{i}{_CLOSE}"
            before, found, after = rest.partition(marker)
            if not found or _OPEN in before or marker in after:
                raise LLMError(f"{self.who}: the chat template does not place each message once and in order")
            segments += [Segment(before, special=True), Segment(message.content.strip())]
            rest = after
        if _OPEN in rest:
            raise LLMError(f"{self.who}: the chat template does not place each message once and in order")
        segments.append(Segment(rest, special=True))
        last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=len(messages))
        return RenderedPrompt(tuple(segments), 2 * last_user + 1 if last_user < len(messages) else len(segments))


def renderer_for(rendering: Any, metadata: dict[str, Any] | None = None, who: str = "local model") -> Any:
    """The renderer of a `Rendering`; the chat template comes from the GGUF's metadata."""
    from t2c_lib.llm.registry import Rendering

    if Rendering(rendering) is Rendering.COMPLETION:
        return CompletionRenderer(who)
    meta = metadata or {}
    return ChatTemplateRenderer(str(meta.get("tokenizer.chat_template") or ""), who=who)
