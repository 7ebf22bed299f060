"""A small Cypher tokenizer: comments dropped, literals and quoted names kept as single tokens.

The guard and the pattern extractor scan these tokens instead of raw text, so a keyword
inside a string literal, a comment or a backticked name is never mistaken for a clause.
It follows the openCypher lexical rules that Neo4j and LadybugDB (Kuzu) share: `//` line
and `/* */` block comments, single- or double-quoted strings with backslash escapes,
backticked names with doubled backticks.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    """What a token is."""

    WORD = "word"  # identifier or keyword (case kept; compare with `.upper`)
    QUOTED = "quoted"  # `backticked name` (text holds the name without backticks)
    STRING = "string"  # 'literal' or "literal" (text holds the raw literal with quotes)
    NUMBER = "number"
    PARAM = "param"  # $name or $0
    PUNCT = "punct"  # one operator or bracket


@dataclass(frozen=True)
class Token:
    """One significant token and where it starts in the query text."""

    kind: Kind
    text: str
    pos: int

    @property
    def upper(self) -> str:
        """Keyword form of a word (empty for other kinds, so they never match a keyword)."""
        return self.text.upper() if self.kind is Kind.WORD else ""

    def is_punct(self, *chars: str) -> bool:
        return self.kind is Kind.PUNCT and self.text in chars

    @property
    def name(self) -> str:
        """The identifier a WORD or QUOTED token names (empty otherwise)."""
        return self.text if self.kind in (Kind.WORD, Kind.QUOTED) else ""


class LexError(ValueError):
    """The text cannot be split into tokens (an unterminated literal, comment or name)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


_MULTI_PUNCT = ("<>", "<=", ">=", "=~", "..", "+=", "!=", "::")


def tokenize(text: str) -> list[Token]:
    """Split Cypher text into significant tokens; raise LexError on an unterminated construct."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise LexError("unterminated /* block comment", i)
            i = end + 2
        elif ch in ("'", '"'):
            j = _string_end(text, i)
            tokens.append(Token(Kind.STRING, text[i:j], i))
            i = j
        elif ch == "`":
            j, name = _quoted_name(text, i)
            tokens.append(Token(Kind.QUOTED, name, i))
            i = j
        elif ch == "$":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if j < n and text[j] == "`" and j == i + 1:
                j, name = _quoted_name(text, j)
                tokens.append(Token(Kind.PARAM, "$" + name, i))
            else:
                tokens.append(Token(Kind.PARAM, text[i:j], i))
            i = j
        elif ch.isdigit():
            j = _number_end(text, i)
            tokens.append(Token(Kind.NUMBER, text[i:j], i))
            i = j
        elif ch.isalpha() or ch == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(Token(Kind.WORD, text[i:j], i))
            i = j
        else:
            two = text[i:i + 2]
            if two in _MULTI_PUNCT:
                tokens.append(Token(Kind.PUNCT, two, i))
                i += 2
            else:
                tokens.append(Token(Kind.PUNCT, ch, i))
                i += 1
    return tokens


def _string_end(text: str, start: int) -> int:
    """Index just past the string literal opening at `start` (backslash escapes)."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    raise LexError(f"unterminated string literal starting with {quote}", start)


def _quoted_name(text: str, start: int) -> tuple[int, str]:
    """End index and name of the backticked name at `start` (`` `` `` is an escaped backtick)."""
    i = start + 1
    parts: list[str] = []
    while i < len(text):
        if text[i] == "`":
            if text.startswith("``", i):
                parts.append("`")
                i += 2
                continue
            return i + 1, "".join(parts)
        parts.append(text[i])
        i += 1
    raise LexError("unterminated `backticked` name", start)


def _number_end(text: str, start: int) -> int:
    """Index past a numeric literal: digits/hex/letters, one fraction, an exponent."""
    n = len(text)
    i = start
    while i < n and (text[i].isalnum() or text[i] == "_"):
        i += 1
    # A fraction needs a digit after the dot (`1..3` is a range, `1.` is not a float here).
    if i + 1 < n and text[i] == "." and text[i + 1].isdigit():
        i += 1
        while i < n and (text[i].isalnum() or text[i] == "_"):
            i += 1
        if i < n and text[i] in "+-" and text[i - 1] in "eE" and i + 1 < n and text[i + 1].isdigit():
            i += 1
            while i < n and text[i].isdigit():
                i += 1
    elif i < n and text[i] in "+-" and text[i - 1] in "eE" and i + 1 < n and text[i + 1].isdigit():
        i += 1
        while i < n and text[i].isdigit():
            i += 1
    return i


def strip_comments(text: str) -> str:
    """The text with comments replaced by a space (literals untouched); raise LexError as tokenize."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            out.append(" " if end < 0 else "\n")
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise LexError("unterminated /* block comment", i)
            out.append(" ")
            i = end + 2
        elif text[i] in ("'", '"'):
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        elif text[i] == "`":
            j, _ = _quoted_name(text, i)
            out.append(text[i:j])
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
