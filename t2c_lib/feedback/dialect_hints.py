"""Feedback lines naming the LadybugDB form of a Neo4j form the embedded store refuses and no exact rewrite covers.

`cypher/dialect.py` rewrites what it can rewrite exactly; these forms it cannot (NOT_REWRITTEN there
says why), so the feedback names what to write instead, read off the store's own message:

- `toFloat(x)`: LadybugDB has no such function; `CAST(x AS DOUBLE)` is its form;
- `WITH ... ORDER BY` without `SKIP`/`LIMIT`: LadybugDB sorts in `WITH` only before one; sort in the
  final `RETURN`;
- a LadybugDB keyword as a name where the rewrite does not reach (an alias `AS end`, a name the
  parser stops at after `:`, `.` or `|`): the name in backticks.

`length(<string>)` (LadybugDB: `size(s)`) is not among them: published runs met that message, and a
new line in their feedback would change the requests their published replies answer.
"""

from __future__ import annotations

import re

from t2c_lib.cypher.ladybug_keywords import KEYWORDS

HINTS = {
    "en": {
        "to_float": "- LadybugDB has no toFloat(); write CAST(x AS DOUBLE).",
        "with_order": "- LadybugDB sorts in WITH only before SKIP or LIMIT: move the ORDER BY to the final RETURN, or add a LIMIT.",
        "keyword": "- `{word}` is a keyword of LadybugDB: write the name in backticks, {quoted}.",
    },
    "id": {
        "to_float": "- LadybugDB tidak punya toFloat(); tulis CAST(x AS DOUBLE).",
        "with_order": "- LadybugDB hanya mengurutkan di WITH sebelum SKIP atau LIMIT: pindahkan ORDER BY ke RETURN terakhir, atau tambahkan LIMIT.",
        "keyword": "- `{word}` adalah kata kunci LadybugDB: tulis nama itu dengan backtick, {quoted}.",
    },
}
"""The lines, per feedback language."""

_MISMATCHED = re.compile(r"mismatched input '(?P<word>[A-Za-z_][A-Za-z0-9_]*)'")
_KEYWORD_NAME = re.compile(r"Invalid input <[^>]*?(?:[:.|]|\b[Aa][Ss]\s)\s*(?P<word>[A-Za-z_][A-Za-z0-9_]*)\s*>")


def _keyword_name(message: str) -> str:
    """The LadybugDB keyword the parser stopped at where a name stands (after `:`, `.`, `|` or `AS`), or ""."""
    found = _KEYWORD_NAME.search(message)
    if found and found.group("word").upper() in KEYWORDS:
        return found.group("word")
    found = _MISMATCHED.search(message)
    if found and found.group("word").upper() in KEYWORDS:
        word = re.escape(found.group("word"))
        if re.search(rf"(?:[:.|]|\b[Aa][Ss]\s)\s*{word}\b", message):
            return found.group("word")
    return ""


def dialect_hints(message: str, language: str = "en") -> list[str]:
    """The lines for the Neo4j-only forms the store's `message` reports (none when it reports none of them)."""
    phrases = HINTS.get(language, HINTS["en"])
    lines = []
    if "function TOFLOAT does not exist" in message:
        lines.append(phrases["to_float"])
    if "In WITH clause, ORDER BY must be followed by SKIP or LIMIT" in message:
        lines.append(phrases["with_order"])
    word = _keyword_name(message)
    if word:
        lines.append(phrases["keyword"].format(word=word, quoted=f"`{word}`"))
    return lines
