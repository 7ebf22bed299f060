"""Per-question schema retrieval: the top-k elements, closed under endpoints, rendered like `nodes_paths`.

Ranking: cosine similarity of all-MiniLM-L6-v2 embeddings of the question and of each
element's text, plus (in `hybrid` mode) `lexical_weight` times the element's BM25 score
scaled to the best one. The top `k` elements are kept; a property brings its owner, a
relationship type brings its patterns (those touching a kept label, else all) and their
end labels, a value the question names brings the label that stores it, and kept labels
left unconnected are joined by a shortest path of patterns (a query walks a connected
pattern; `induce` adds every pattern between kept labels). Kept labels are listed
with all their properties, so a query can filter on any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

import numpy as np

from t2c_lib.errors import InvalidValue
from t2c_lib.graph.value_index import ValueIndex, ValueLink
from t2c_lib.linking.bm25 import BM25
from t2c_lib.linking.elements import ElementKind, SchemaElement, schema_elements
from t2c_lib.schema import GraphSchema, RelPattern, SchemaFormat

DEFAULT_K = 6
DEFAULT_REL_K = 2
DEFAULT_LEXICAL_WEIGHT = 0.5


class Embedder(Protocol):
    """Texts -> unit vectors (one row each)."""

    def embed(self, texts: list[str]) -> np.ndarray: ...


class Ranking(str, Enum):
    """How elements are scored against a question."""

    EMBEDDING = "embedding"
    LEXICAL = "lexical"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class LinkingSettings:
    """Everything that decides what a question gets (recorded in a run's manifest)."""

    k: int = DEFAULT_K
    rel_k: int = DEFAULT_REL_K
    induce: bool = False
    ranking: Ranking = (
        Ranking.EMBEDDING
    )  # measured: beats hybrid on the Indonesian questions (benchmarks/linking_recall.py)
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    value_hints: bool = True

    def __post_init__(self) -> None:
        if self.k < 1 or self.rel_k < 0:
            raise InvalidValue(f"linking k must be at least 1 and rel_k at least 0, got k={self.k}, rel_k={self.rel_k}")
        if self.lexical_weight < 0:
            raise InvalidValue(f"lexical_weight must be >= 0, got {self.lexical_weight}")

    def signature(self) -> str:
        return f"k:{self.k}|rel_k:{self.rel_k}|induce:{'yes' if self.induce else 'no'}|rank:{self.ranking.value}|lex:{self.lexical_weight:g}|values:{'yes' if self.value_hints else 'no'}"


@dataclass
class Retrieved:
    """What one question gets: the kept elements, the sub-schema, the value links."""

    question: str
    ranked: list[tuple[str, float]]
    kept: list[str]
    schema: GraphSchema
    links: list[ValueLink] = field(default_factory=list)

    def render(self, descriptions: bool = False, language: str = "en") -> str:
        """The sub-schema like `nodes_paths` (descriptions of the kept elements), then the value hints."""
        return self.schema.render(SchemaFormat.NODES_PATHS, descriptions=descriptions) + hint_block(
            self.schema, self.links, language
        )

    def hint_lines(self, language: str = "en") -> list[str]:
        return hint_lines(self.schema, self.links, language)

    def names(self) -> set[str]:
        """Labels, relationship types and `Owner.property` names the sub-schema shows."""
        out = set(self.schema.labels) | set(self.schema.rel_types)
        return out | {f"{o}.{p}" for o in out for p in self.schema.properties_of(o)}


_PHRASES = {
    "en": {
        "heading": "Values named in the question:",
        "exact": "- '{value}' is stored in {where}",
        "closest": "- '{value}' is not stored; the closest stored value is '{stored}' ({where})",
    },
    "id": {
        "heading": "Nilai yang disebut dalam pertanyaan:",
        "exact": "- '{value}' tersimpan di {where}",
        "closest": "- '{value}' tidak tersimpan; nilai terdekat adalah '{stored}' ({where})",
    },
}


def hint_lines(schema: GraphSchema, links: list[ValueLink], language: str = "en") -> list[str]:
    """One line per value a question names: where `schema` stores it, or the closest stored value."""
    phrases = _PHRASES[language]
    shown = set(schema.labels)
    lines = []
    for text in sorted({link.text for link in links}):
        places = [link for link in links if link.text == text and link.label in shown]
        if not places:
            continue
        where = ", ".join(sorted({f"{p.label}.{p.property}" for p in places}))
        if places[0].exact:
            lines.append(phrases["exact"].format(value=text, where=where))
        else:
            lines.append(phrases["closest"].format(value=text, stored=places[0].value, where=where))
    return lines


def hint_block(schema: GraphSchema, links: list[ValueLink], language: str = "en") -> str:
    """The hint lines under their heading, to follow a schema text (empty when the question names no stored value)."""
    lines = hint_lines(schema, links, language)
    return "\n" + _PHRASES[language]["heading"] + "\n" + "\n".join(lines) + "\n" if lines else ""


class SchemaRetriever:
    """Ranks a schema's elements against questions; element embeddings are computed once."""

    def __init__(
        self,
        schema: GraphSchema,
        embedder: Embedder | None = None,
        values: ValueIndex | None = None,
        settings: LinkingSettings | None = None,
    ) -> None:
        self.schema = schema
        self.settings = settings or LinkingSettings()
        self.elements: list[SchemaElement] = schema_elements(schema)
        self.values = values if self.settings.value_hints else None
        needs_embedder = self.settings.ranking is not Ranking.LEXICAL
        if needs_embedder and embedder is None:
            from t2c_lib.linking.embedder import default_embedder

            embedder = default_embedder()
        self.embedder = embedder if needs_embedder else None
        self._vectors = self.embedder.embed([e.text for e in self.elements]) if self.embedder else None
        self._bm25 = BM25([e.text for e in self.elements])

    def scores(self, question: str) -> np.ndarray:
        """One score per element (higher = more related)."""
        total = np.zeros(len(self.elements), dtype=np.float64)
        if self._vectors is not None and self.embedder is not None:  # vectors only with an embedder
            total += (self._vectors @ self.embedder.embed([question])[0]).astype(np.float64)
        if self.settings.ranking is not Ranking.EMBEDDING:
            lexical = np.asarray(self._bm25.scores(question))
            if lexical.max() > 0:
                weight = 1.0 if self.settings.ranking is Ranking.LEXICAL else self.settings.lexical_weight
                total += weight * lexical / lexical.max()
        return total

    def retrieve(self, question: str) -> Retrieved:
        """The elements a question gets, closed under owners and endpoints."""
        scores = self.scores(question)
        order = sorted(range(len(self.elements)), key=lambda i: (-round(float(scores[i]), 6), self.elements[i].name))
        ranked = [(self.elements[i].name, round(float(scores[i]), 6)) for i in order]
        score_of = dict(ranked)
        kept = [self.elements[i] for i in order[: self.settings.k]]
        rels_ranked = [self.elements[i] for i in order if self.elements[i].kind is ElementKind.REL_TYPE]
        kept += [e for e in rels_ranked[: self.settings.rel_k] if e not in kept]
        links = self.values.link(question) if self.values else []
        labels: set[str] = set()
        rel_types: set[str] = set()
        for element in kept:
            owner = element.owner
            (labels if owner in self.schema.node_props else rel_types).add(owner)
        for value in {link.value for link in links}:
            places = [link for link in links if link.value == value]
            best = max(places, key=lambda p: (score_of.get(f"{p.label}.{p.property}", 0.0), -places.index(p)))
            labels.add(best.label)
        patterns = []
        for rel_type in sorted(rel_types):
            candidates = [p for p in self.schema.patterns if p.type == rel_type]
            touching = [p for p in candidates if p.source in labels or p.target in labels]
            patterns += touching or candidates
        labels |= {p.source for p in patterns} | {p.target for p in patterns}
        patterns += self._connecting(labels, patterns, score_of)
        labels |= {p.source for p in patterns} | {p.target for p in patterns}
        if self.settings.induce:
            patterns += [p for p in self.schema.patterns if p.source in labels and p.target in labels]
        rel_types |= {p.type for p in patterns}
        sub = GraphSchema(
            node_props={label: dict(self.schema.node_props[label]) for label in sorted(labels)},
            rel_props={t: dict(self.schema.rel_props[t]) for t in sorted(rel_types) if t in self.schema.rel_props},
            patterns=sorted(set(patterns)),
        )
        sub = sub.described(
            {
                k: v
                for k, v in self.schema.descriptions.items()
                if k in labels or k in rel_types or k in {e.name for e in kept}
            }
        )
        return Retrieved(question, ranked, [e.name for e in kept], sub, links)

    def _connecting(self, labels: set[str], patterns: list[RelPattern], score_of: dict[str, float]) -> list[RelPattern]:
        """Patterns of a shortest path joining each kept label to the others (a query walks a connected pattern)."""
        added: list[RelPattern] = []
        ordered = sorted(labels)
        for start in ordered:
            reached = _component(start, patterns + added)
            others = sorted((labels & set(self.schema.node_props)) - reached)
            if not others:
                continue
            path = self._shortest_path(reached, set(others), score_of)
            added += [p for p in path if p not in added and p not in patterns]
        return added

    def _shortest_path(self, sources: set[str], targets: set[str], score_of: dict[str, float]) -> list[RelPattern]:
        """Breadth-first over labels; among equally short paths, patterns of higher-scored types first."""
        edges = sorted(set(self.schema.patterns), key=lambda p: (-score_of.get(p.type, 0.0), p))
        previous: dict[str, tuple[str, RelPattern] | None] = {s: None for s in sorted(sources)}
        frontier = sorted(sources)
        while frontier:
            following = []
            for label in frontier:
                for p in edges:
                    if label not in (p.source, p.target):
                        continue
                    other = p.target if p.source == label else p.source
                    if other in previous:
                        continue
                    previous[other] = (label, p)
                    if other in targets:
                        path: list[RelPattern] = []
                        node = other
                        while (back := previous[node]) is not None:
                            node, step = back
                            path.append(step)
                        return path
                    following.append(other)
            frontier = following
        return []


def _component(start: str, patterns: list[RelPattern]) -> set[str]:
    """Labels reachable from `start` over the given patterns, ignoring direction."""
    seen, todo = {start}, [start]
    while todo:
        label = todo.pop()
        for p in patterns:
            for a, b in ((p.source, p.target), (p.target, p.source)):
                if a == label and b not in seen:
                    seen.add(b)
                    todo.append(b)
    return seen
