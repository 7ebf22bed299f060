"""Build chat messages for a configuration: the first request and each refinement request.

The system message (instructions + schema text) comes first and is identical for every
question of a configuration, so a local model's KV cache reuses that prefix. A per-question
schema format (`retrieved`) passes a function of the question instead of a text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from t2c_lib.datasets import Example
from t2c_lib.errors import InvalidValue
from t2c_lib.llm.base import Message
from t2c_lib.prompts.config import Configuration, PromptType
from t2c_lib.prompts.templates import check_language, load_template


class PromptBuilder:
    """Messages for one configuration, schema text, language and example set."""

    def __init__(
        self,
        config: Configuration,
        schema_text: str | Callable[[str], str],
        language: str = "id",
        examples: Iterable[Any] = (),
    ) -> None:
        self.config = config
        self.language = check_language(language)
        self.schema_text = schema_text
        self.examples = tuple(Example.coerce(e) for e in examples) if config.prompt_type.uses_examples else ()
        if config.prompt_type.uses_examples and not self.examples:
            raise InvalidValue(f"{config.name} needs few-shot examples, but the dataset has none")
        self._system = None if callable(schema_text) else self._system_message(schema_text)
        self._per_question: dict[str, Message] = {}
        self._example_messages = tuple(self._render_examples())

    def _system_message(self, schema_text: str) -> Message:
        system = load_template(self.language, self.config.prompt_type.template_name).substitute(
            schema=schema_text.rstrip("\n") + "\n"
        )
        return Message("system", system.strip() + "\n")

    @property
    def system(self) -> Message:
        """The system message of a whole-schema configuration (per-question ones: `system_for`)."""
        if self._system is None:
            raise ValueError(f"{self.config.name}: the schema text depends on the question; use system_for(question)")
        return self._system

    def system_for(self, question: str) -> Message:
        """The system message for one question (the same for every question unless the schema is retrieved)."""
        if self._system is not None:
            return self._system
        key = question.strip()
        if key not in self._per_question:
            schema_of = self.schema_text
            if not callable(schema_of):  # unreachable: a whole-schema text made `_system`
                raise RuntimeError(f"{self.config.name}: no system message for a whole-schema text")
            self._per_question[key] = self._system_message(schema_of(key))
        return self._per_question[key]

    def answer_text(self, example: Example) -> str:
        """How an assistant turn looks in this configuration's examples."""
        if self.config.prompt_type is PromptType.COT:
            reasoning = example.reasoning or "-"
            return f"<think>{reasoning}</think>\n<cypher>{example.cypher}</cypher>"
        return f"<cypher>{example.cypher}</cypher>"

    def _render_examples(self) -> list[Message]:
        messages: list[Message] = []
        for example in self.examples:
            messages.append(Message("user", example.question))
            messages.append(Message("assistant", self.answer_text(example)))
        return messages

    def initial(self, question: str) -> list[Message]:
        """System, the examples as alternating user/assistant turns, then the question."""
        return [self.system_for(question), *self._example_messages, Message("user", question.strip())]

    def refinement(self, question: str, failed_query: str, feedback: str) -> list[Message]:
        """System, the same examples as the first attempt, then the question, failed query and feedback.

        The prompt type holds for every iteration: a few-shot or CoT refinement still shows
        the examples (a base model needs them to answer with a query at all).
        """
        template = load_template(self.language, self.config.prompt_type.refine_template_name)
        empty = "(kosong)" if self.language == "id" else "(empty)"
        text = template.substitute(
            question=question.strip(),
            query=failed_query.strip() or empty,
            feedback=feedback.strip(),
        )
        return [self.system_for(question), *self._example_messages, Message("user", text.strip())]


def prompt_hash(messages: Sequence[Message]) -> str:
    """sha256 (first 16 hex digits) of the messages, recorded with every attempt."""
    payload = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
