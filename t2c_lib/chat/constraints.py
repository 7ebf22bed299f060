"""The filters a query sets on properties, and those a follow-up's query lost without being asked to.

A follow-up ("only those with 3 credits") narrows the previous question ("courses of semester
3"): its query must keep the previous query's filters (`m.semester = 3`) unless the message
meant one to go. A filter is lost when the new query sets no filter at all on that property,
and the message names neither the property nor, for a text value, the value, and says nothing
that drops filters ("all", "any", "semua", "tanpa", ...). Read from the query text (string
literals masked first, so a quoted `=` is no comparison); a shape this reading does not know
is no filter, so a warning is never made up from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LITERAL = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?|\[[^\]]*\]|true|false|null|\$\w+"
_OPERATOR = r"=~|<>|!=|<=|>=|=|<|>|\bIN\b|\bCONTAINS\b|\bSTARTS\s+WITH\b|\bENDS\s+WITH\b"
_COMPARISON = re.compile(rf"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*({_OPERATOR})\s*({LITERAL})", re.I)
_MAP = re.compile(r"\(\s*\w*\s*(?::\s*\w+\s*)*\{([^{}]*)\}\s*\)")
_MAP_ENTRY = re.compile(rf"([A-Za-z_]\w*)\s*:\s*({LITERAL})", re.I)
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
DROP_WORDS = (
    "all",
    "any",
    "every",
    "regardless",
    "without",
    "drop",
    "remove",
    "ignore",
    "instead of",
    "semua",
    "seluruh",
    "tanpa",
    "hapus",
    "abaikan",
    "lepas",
    "bukan hanya",
)
"""Words of a follow-up that let a filter go (English and Indonesian, the chat's languages)."""


@dataclass(frozen=True)
class Filter:
    """One property filter of a query: `semester = 3`."""

    prop: str
    op: str
    value: str

    def __str__(self) -> str:
        return f"{self.prop} {self.op} {self.value}"


def filters(query: str) -> list[Filter]:
    """The property filters of `query` (WHERE comparisons and `{prop: value}` pattern maps), in order, once each."""
    strings: list[str] = []

    def mask(match: re.Match[str]) -> str:
        strings.append(match.group())
        return f"'\0{len(strings) - 1}\0'"

    masked = _STRING.sub(mask, query or "")

    def unmask(text: str) -> str:
        return re.sub(r"'\0(\d+)\0'", lambda m: strings[int(m.group(1))], text)

    found: dict[Filter, None] = {}
    for match in _COMPARISON.finditer(masked):
        op = re.sub(r"\s+", " ", match.group(3).upper())
        found[Filter(match.group(2), op, unmask(match.group(4)))] = None
    for pattern in _MAP.finditer(masked):
        for entry in _MAP_ENTRY.finditer(pattern.group(1)):
            found[Filter(entry.group(1), "=", unmask(entry.group(2)))] = None
    return list(found)


def lost_filters(previous_query: str, query: str, message: str) -> list[Filter]:
    """The previous query's filters the follow-up's query lost, which its message did not ask to lose."""
    kept = {f.prop.lower() for f in filters(query)}
    said = f" {(message or '').lower()} "
    if any(re.search(rf"\b{re.escape(word)}\b", said) for word in DROP_WORDS):
        return []
    lost = []
    for old in filters(previous_query):
        if old.prop.lower() in kept or re.search(rf"\b{re.escape(old.prop.lower())}\b", said):
            continue
        text = old.value.strip("'\"").lower()
        if old.value[:1] in "'\"" and text and text in said:
            continue
        lost.append(old)
    return lost
