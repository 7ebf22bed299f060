"""`ChatEngine`: the heavy parts of conversations, built once: dataset, store, model, loop, router, answer writer.

Many sessions can share one engine (the conversation evaluation runs every dialogue on one).
With the packaged local model, routing and answer templates each run on their own instance
(the local model keeps one KV cache per instance, and an instance is chosen by its context
size), so each kind of prompt finds its long shared prefix (instructions, schema, examples)
still evaluated from the turn before; an endpoint's model serves all three.
The loop comes from `agent.build`, the same builder `t2c ask` and the study use, so every
query of a conversation meets the same validator chain, read-only guard and walls first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from t2c_lib.agent.build import LoopParts, build_loop, build_parts, loop_strategy
from t2c_lib.chat.answer import AnswerWriter
from t2c_lib.chat.intent import Router, RouterMode, domain_vocabulary, schema_words
from t2c_lib.chat.prompts import template_hashes
from t2c_lib.chat.settings import ChatSettings
from t2c_lib.prompts.config import Configuration, PromptType
from t2c_lib.schema import SchemaFormat

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.agent.loop import AgentLoop
    from t2c_lib.chat.edits import Edit
    from t2c_lib.datasets import Dataset
    from t2c_lib.graph.base import GraphStore
    from t2c_lib.graph.value_index import ValueIndex
    from t2c_lib.llm.base import ChatModel
    from t2c_lib.records import Attempt


@dataclass
class ChatEngine:
    """Everything a turn needs besides the conversation's own state."""

    settings: ChatSettings
    dataset: Dataset
    store: GraphStore
    model: ChatModel
    parts: LoopParts
    router: Router
    writer: AnswerWriter
    graph_size: int
    suggestions: tuple[str, ...]
    owns_store: bool = True

    @classmethod
    def open(
        cls,
        settings: ChatSettings,
        *,
        dataset: Dataset | None = None,
        store: GraphStore | None = None,
        model: ChatModel | None = None,
    ) -> ChatEngine:
        """Load the dataset, open the store and the model (behind the response cache) unless given."""
        from t2c_lib.datasets import load_dataset
        from t2c_lib.graph import open_store

        loop_strategy(
            settings.strategy, settings.max_iterations, settings.loop_options
        )  # options on single-pass: fail first
        dataset = dataset or load_dataset(settings.dataset)
        owns_store = store is None
        store = store or open_store(settings.store, dataset)
        try:
            model, route_model, answer_model = (model, model, model) if model is not None else _models(settings)
            configuration = Configuration(
                PromptType.parse(settings.prompt_type), SchemaFormat.parse(settings.schema_format)
            )
            parts = build_parts(
                store, dataset, configuration, timeout_s=settings.timeout_s, value_hints=settings.value_hints
            )
            vocabulary = domain_vocabulary(
                [
                    *parts.context.schema.labels,
                    *parts.context.schema.rel_types,
                    *dataset.schema_spec.descriptions.values(),
                    *(q.question for q in dataset.questions),
                    *(e.question for e in dataset.examples),
                ]
            )
            router = Router(
                route_model,
                dataset.language,
                vocabulary,
                mode=RouterMode(settings.router),
                max_tokens=settings.router_max_tokens,
                names=schema_words(parts.context.schema),
            )
            writer = AnswerWriter(answer_model, dataset.language, settings.answer_max_tokens)
            size = sum(store.counts().values())
        except BaseException:
            if owns_store:
                store.close()
            raise
        suggestions = tuple(e.question for e in dataset.examples) or tuple(q.question for q in dataset.questions)
        return cls(settings, dataset, store, model, parts, router, writer, size, suggestions, owns_store)

    @property
    def language(self) -> str:
        return self.dataset.language

    def with_models(self, wrap: Callable[[ChatModel], ChatModel]) -> ChatEngine:
        """The same engine with its query, routing and answer models each wrapped (the store stays this engine's)."""
        return replace(
            self,
            model=wrap(self.model),
            router=replace(self.router, model=None if self.router.model is None else wrap(self.router.model)),
            writer=replace(self.writer, model=None if self.writer.model is None else wrap(self.writer.model)),
            owns_store=False,
        )

    @cached_property
    def values(self) -> ValueIndex:
        """The stored values that identify things (for follow-up edits), read lazily from the store."""
        from t2c_lib.graph.value_index import ValueIndex, store_loader

        return ValueIndex(self.parts.context.schema, store_loader(self.store, self.settings.timeout_s))

    def edit(self, query: str, message: str) -> Edit | None:
        """`query` edited as the follow-up `message` asks, or None (`chat/edits.py`); nothing runs here."""
        from t2c_lib.chat.edits import edit_follow_up

        return edit_follow_up(
            query, message, self.language, self.parts.context.schema, self.values, self.store.facts.dialect
        )

    def loop(self, on_attempt: Callable[[Attempt], None] | None = None) -> AgentLoop:
        """A loop with the session's strategy, its loop options and budgets (cheap: the parts are shared).

        New questions and modifications both run through it, so the options apply to every query of the session.
        """
        s = self.settings
        return build_loop(
            self.model,
            self.parts,
            max_iterations=s.max_iterations,
            temperature=s.temperature,
            refine_temperature=s.refine_temperature,
            max_tokens=s.max_tokens,
            strategy=loop_strategy(s.strategy, s.max_iterations, s.loop_options),
            on_attempt=on_attempt,
        )

    def signature(self) -> dict[str, Any]:
        """Every setting behind a conversation's answers (for session files and evaluation reports)."""
        return {
            "loop": self.loop().signature(),
            "chat_settings": self.settings.to_dict(),
            "chat_templates": template_hashes(self.language),
            "dataset": self.dataset.name,
            "dataset_hash": self.dataset.hash,
            "store": self.store.name,
        }

    def close(self) -> None:
        """Close the store if this engine opened it."""
        if self.owns_store:
            self.store.close()


ROUTE_N_CTX = 2048
ANSWER_N_CTX = 1536
"""Contexts of the local instances for routing and for answer templates (short prompts; distinct sizes, distinct instances)."""


def _models(settings: ChatSettings) -> tuple[ChatModel, ChatModel, ChatModel]:
    """The models for queries, routing and answers, behind the response cache (see the module docstring)."""
    from t2c_lib.llm.factory import build_model

    main = build_model(settings.model, cache_mode=settings.cache)
    if not getattr(main, "packaged", False):
        return main, main, main

    def sibling(n_ctx: int) -> ChatModel:
        return build_model(settings.model, cache_mode=settings.cache, n_ctx=n_ctx)

    return main, sibling(ROUTE_N_CTX), sibling(ANSWER_N_CTX)
