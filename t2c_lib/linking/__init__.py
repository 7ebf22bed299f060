"""Schema linking: what of the schema, and which stored values, a question needs.

`SchemaRetriever` ranks labels, relationship types and properties against a question
(all-MiniLM-L6-v2 in numpy, BM25, or both) and keeps the top k closed under endpoints;
`ValueIndex` links the values a question names to the property that stores them and
suggests the closest stored values after an empty result. Imports flow graph -> linking.
"""

from __future__ import annotations

from t2c_lib.graph.schema import GraphSchema
from t2c_lib.linking.retriever import LinkingSettings, Ranking, Retrieved, SchemaRetriever
from t2c_lib.linking.values import ValueIndex, ValueLink, store_loader


def retriever_for(store: object, schema: GraphSchema, settings: LinkingSettings | None = None,
                  timeout_s: float = 10.0) -> SchemaRetriever:
    """A retriever over a store's schema, with a value index reading that store."""
    values = ValueIndex(schema, store_loader(store, timeout_s))
    return SchemaRetriever(schema, values=values, settings=settings)


__all__ = ["LinkingSettings", "Ranking", "Retrieved", "SchemaRetriever", "ValueIndex", "ValueLink",
           "retriever_for", "store_loader"]
