"""Schema linking: what of the schema, and which stored values, a question needs.

`SchemaRetriever` ranks labels, relationship types and properties against a question
(all-MiniLM-L6-v2 in numpy, BM25, or both) and keeps the top k closed under endpoints;
`ValueIndex` (`graph/value_index.py`) links the values a question names to the property that stores them and
suggests the closest stored values after an empty result. Imports flow graph -> linking.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from t2c_lib.graph.value_index import ValueIndex, ValueLink, store_loader
from t2c_lib.linking.retriever import LinkingSettings, Ranking, Retrieved, SchemaRetriever, hint_block
from t2c_lib.schema import GraphSchema, SchemaFormat

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.graph.base import GraphStore


def retriever_for(
    store: GraphStore, schema: GraphSchema, settings: LinkingSettings | None = None, timeout_s: float = 10.0
) -> SchemaRetriever:
    """A retriever over a store's schema, with a value index reading that store."""
    values = ValueIndex(schema, store_loader(store, timeout_s))
    return SchemaRetriever(schema, values=values, settings=settings)


def schema_text_source(
    store: Any,
    descriptions_spec: dict[str, str],
    fmt: SchemaFormat | str,
    language: str,
    *,
    descriptions: bool = False,
    settings: LinkingSettings | None = None,
    timeout_s: float = 10.0,
    value_hints: bool | None = None,
) -> str | Callable[[str], str]:
    """What a prompt builder takes: the schema text, or (for `retrieved`, or with value hints) a function of the question.

    `value_hints`: True adds, under a whole-schema format, where the question's values are stored (chat, issue 53);
    False takes them out of `retrieved`; None keeps each format's own (`retrieved`: `settings.value_hints`).
    """
    fmt = fmt if isinstance(fmt, SchemaFormat) else SchemaFormat.parse(fmt)
    schema = store.schema().described(descriptions_spec)
    if not fmt.per_question:
        text = schema.render(fmt, descriptions)
        if not value_hints:
            return text
        index = ValueIndex(schema, store_loader(store, timeout_s))
        return lambda question: text + hint_block(schema, index.link(question), language)
    if value_hints is False:
        settings = replace(settings or LinkingSettings(), value_hints=False)
    retriever = retriever_for(store, schema, settings, timeout_s)
    return lambda question: retriever.retrieve(question).render(descriptions, language)


def settings_from(params: Any) -> LinkingSettings:
    """The linking settings of a study's parameters (`linking_k`, `linking_rel_k`, ...)."""
    return LinkingSettings(
        k=params.linking_k,
        rel_k=params.linking_rel_k,
        ranking=Ranking(params.linking_ranking),
        value_hints=params.value_hints,
    )


__all__ = [
    "schema_text_source",
    "settings_from",
    "LinkingSettings",
    "Ranking",
    "Retrieved",
    "SchemaRetriever",
    "ValueIndex",
    "ValueLink",
    "retriever_for",
    "store_loader",
]
