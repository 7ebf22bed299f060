"""Value grounding: the stored string values that identify things, and what a text says about them.

One component serves both directions:
- before generation, `link(question)` finds the values a question names ('Basis Data',
  'KP.1', 'The Matrix'), quoted or not, and says which `Label.property` holds each;
- after an empty result, `closest(label, prop, op, value)` lists the stored values nearest
  to a filter literal that matched nothing (the feedback's "closest stored values").

Values are read from the store through a loader, lazily, one property at a time; the
property names come from the schema, never from a question or a query. It sits with the stores,
below its three users (schema linking, the validator chain's empty-result feedback and the
loop's corrector), so none of them imports another for it.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from t2c_lib.schema import GraphSchema, PropType

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.graph.base import GraphStore

MAX_IDENTIFYING_LENGTH = 60
"""A property whose values average longer than this is prose (a description), not a name."""
VALUE_SCAN_LIMIT = 5000
MIN_LINK_LENGTH = 3
_QUOTED = re.compile(r"'([^']{1,200})'|\"([^\"]{1,200})\"|‘([^’]{1,200})’|“([^”]{1,200})”")

Loader = Callable[[str, str], list[str]]
"""(label, property) -> the distinct stored string values of that property."""


@dataclass(frozen=True, order=True)
class ValueLink:
    """A value the question names and where it is stored; `exact` is False for a closest guess."""

    text: str
    label: str
    property: str
    value: str
    exact: bool


def fold(text: str) -> str:
    """Case- and accent-insensitive form used for matching."""
    plain = "".join(c for c in unicodedata.normalize("NFD", text.casefold()) if unicodedata.category(c) != "Mn")
    return " ".join(plain.split())


def matches(stored: str, op: str, value: str) -> bool:
    """Whether a stored value satisfies `stored <op> value` for the string operators filters use."""
    if op == "=":
        return stored == value
    if op == "CONTAINS":
        return value in stored
    if op == "STARTS WITH":
        return stored.startswith(value)
    return stored.endswith(value)


class ValueIndex:
    """The identifying string values of a graph, read lazily through a loader."""

    def __init__(self, schema: GraphSchema, loader: Loader) -> None:
        self.schema = schema
        self._loader = loader
        self._values: dict[tuple[str, str], list[str]] = {}

    def stored(self, label: str, prop: str) -> list[str]:
        """Distinct stored strings of `label.prop` (empty unless it is a STRING node property)."""
        if self.schema.node_props.get(label, {}).get(prop) is not PropType.STRING:
            return []
        if (label, prop) not in self._values:
            self._values[(label, prop)] = sorted({v for v in self._loader(label, prop) if isinstance(v, str)})
        return self._values[(label, prop)]

    def identifying(self) -> list[tuple[str, str]]:
        """The (label, property) pairs whose values are names, codes or titles rather than prose."""
        out = []
        for label in self.schema.labels:
            for prop, ptype in sorted(self.schema.node_props[label].items()):
                values = self.stored(label, prop) if ptype is PropType.STRING else []
                if values and sum(map(len, values)) / len(values) <= MAX_IDENTIFYING_LENGTH:
                    out.append((label, prop))
        return out

    def link(self, question: str) -> list[ValueLink]:
        """Values the question names (quoted literals, or stored values written out), each with its place."""
        folded_question = f" {fold(question)} "
        quoted = [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(question)]
        found: list[ValueLink] = []
        matched_quotes: set[str] = set()
        for label, prop in self.identifying():
            for value in self.stored(label, prop):
                folded = fold(value)
                if len(folded) < MIN_LINK_LENGTH or not _word_in(folded, folded_question):
                    continue
                found.append(ValueLink(value, label, prop, value, True))
                matched_quotes |= {q for q in quoted if fold(q) == folded}
        found = _drop_contained(found)
        for text in quoted:
            if text in matched_quotes or any(fold(text) == fold(link.value) for link in found):
                continue
            closest = self._closest_anywhere(text)
            for label, prop, value in closest:
                if value == closest[0][2]:
                    found.append(ValueLink(text, label, prop, value, False))
        return sorted(set(found))

    def closest(self, label: str, prop: str, op: str, value: str, n: int = 3) -> list[str] | None:
        """Stored values nearest to a filter literal; None when the literal does match a stored value."""
        stored = self.stored(label, prop)
        if not stored or any(matches(v, op, value) for v in stored):
            return None
        lowered = {v.lower(): v for v in stored}
        closest = [v for v in stored if matches(v.lower(), op, value.lower())][:n]
        for low in difflib.get_close_matches(value.lower(), list(lowered), n=n, cutoff=0.6):
            if lowered[low] not in closest:
                closest.append(lowered[low])
        return closest[:n]

    def _closest_anywhere(self, text: str) -> list[tuple[str, str, str]]:
        folded = fold(text)
        scored = []
        for label, prop in self.identifying():
            for value in self.stored(label, prop):
                ratio = difflib.SequenceMatcher(None, folded, fold(value)).ratio()
                if ratio >= 0.75:
                    scored.append((-ratio, label, prop, value))
        return [(label, prop, value) for _, label, prop, value in sorted(scored)]


def store_loader(store: GraphStore, timeout_s: float = 10.0) -> Loader:
    """A loader that reads a property's distinct strings from a graph store (read-only query)."""
    from t2c_lib.graph.base import QueryError, QueryTimeout

    def load(label: str, prop: str) -> list[str]:
        cypher = f"MATCH (n:`{label}`) WHERE n.`{prop}` IS NOT NULL RETURN DISTINCT n.`{prop}` LIMIT {VALUE_SCAN_LIMIT}"
        try:
            result = store.query(cypher, timeout_s=timeout_s)
        except (QueryError, QueryTimeout):
            return []
        return [row[0] for row in result.rows if isinstance(row[0], str)]

    return load


def _word_in(needle: str, haystack: str) -> bool:
    """`needle` occurs in `haystack` between non-alphanumeric characters."""
    start = haystack.find(needle)
    while start != -1:
        before, after = haystack[start - 1 : start], haystack[start + len(needle) : start + len(needle) + 1]
        if not (before.isalnum() or after.isalnum()):
            return True
        start = haystack.find(needle, start + 1)
    return False


def _drop_contained(links: Iterable[ValueLink]) -> list[ValueLink]:
    """Drop a link whose value lies inside a longer linked value ('Basis Data' inside 'Praktikum Basis Data')."""
    links = list(links)
    keep = []
    for link in links:
        folded = fold(link.value)
        if not any(len(fold(o.value)) > len(folded) and _word_in(folded, f" {fold(o.value)} ") for o in links):
            keep.append(link)
    return keep
