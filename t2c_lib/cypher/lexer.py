"""A small Cypher tokenizer that reads text exactly as the store's database does, or refuses it.

The guard and the pattern extractor scan these tokens instead of raw text, so a keyword
inside a string literal, a comment or a backticked name is never mistaken for a clause.
Agreement with the database is the point (the guard is only a wall if both see the same
tokens), so the rules are the database's, per dialect: LadybugDB's (checked against it by a
differential fuzz test, tests/cypher/test_guard_fuzz.py) and Neo4j 5's (its `Cypher5Lexer.g4`):

- `//` comments end at a line feed in LadybugDB, at a carriage return or a line feed in
  Neo4j; a carriage return not followed by a line feed inside one is refused (LadybugDB then
  reads `//` as two operators, and what follows as code);
- `/* */` comments: LadybugDB ends one at the first `*/` whose `*` is not taken by a
  preceding `*` (its rule: `*` followed by anything but `/` swallows that character), so
  `/* **/` stays open; Neo4j ends one at the first `*/` (`'/*' .*? '*/'`), so `/* **/` is
  closed. A comment the two rules end in different places is refused for both dialects
  unless a caller asks for one dialect's reading alone (`agree=False`): a text must not
  mean two things to the two stores;
- numbers are `0`, `[1-9][0-9]*`, reals and `e`/`E` exponents with an optional `-`; a
  number glued to a letter, digit, `_` or `$` (`1LOAD`, `3e0DELETE`, `0x3`) is refused;
- names are ASCII letters, digits, `_` and `$`; strings take only the database's escapes;
- outside literals, anything but ASCII and the whitespace both lexers share is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Dialect(str, Enum):
    """Whose lexer and grammar a text is read by: the embedded store's (LadybugDB) or Neo4j's."""

    LADYBUG = "ladybug"
    NEO4J = "neo4j"


DEFAULT_DIALECT = Dialect.LADYBUG
"""The embedded store's dialect: what a caller that names no store gets."""


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
    end: int = -1  # index just past the token's raw text (quotes and backticks included)

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
    """The text cannot be split into tokens (an unterminated literal, comment or name).

    `ambiguous` marks text the database could read differently from this lexer (a number
    glued to a name, a lone carriage return in a comment, a character outside ASCII or the
    database's whitespace): such text is refused, never guessed at.
    """

    def __init__(self, message: str, pos: int, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.pos = pos
        self.ambiguous = ambiguous


_MULTI_PUNCT = ("<>", "<=", ">=", "=~", "..", "+=", "!=", "::")
_ASCII_PUNCT = frozenset("()[]{}<>=+-*/%^.,:;|&!?~@#")
_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_WORD_PART = _WORD_START | frozenset("0123456789$")  # `$` is a currency sign: the database's names may hold it
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = frozenset("\\'\"bBfFnNrRtT")
WHITESPACE = frozenset(" \t\n\r\x0b\x0c\x1c\xa0\u2028")
"""Characters both this lexer and LadybugDB read as whitespace (checked against the database)."""


def tokenize(text: str, dialect: Dialect = DEFAULT_DIALECT, agree: bool = True) -> list[Token]:
    """Split Cypher text into significant tokens as `dialect` reads it; raise LexError on an unterminated
    or ambiguous construct (with `agree`, also on a comment the two dialects end in different places)."""
    return [tok for tok in _scan(text, None, dialect, agree) if tok is not None]


def strip_comments(text: str, dialect: Dialect = DEFAULT_DIALECT, agree: bool = True) -> str:
    """The text with comments replaced by a space (literals untouched); raise LexError as tokenize."""
    out: list[str] = []
    last = 0
    for start, end in _comment_spans(text, dialect, agree):
        out.append(text[last:start])
        out.append("\n" if text[start:end].endswith("\n") else " ")
        last = end
    out.append(text[last:])
    return "".join(out)


def _comment_spans(text: str, dialect: Dialect, agree: bool) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    _scan(text, spans, dialect, agree)
    return spans


def _scan(
    text: str,
    comments: list[tuple[int, int]] | None = None,
    dialect: Dialect = DEFAULT_DIALECT,
    agree: bool = True,
) -> list[Token | None]:
    """The one scanner behind tokenize and strip_comments (comment spans go to `comments`)."""
    tokens: list[Token | None] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in WHITESPACE:
            i += 1
        elif text.startswith("//", i):
            j = _line_comment_end(text, i)
            if comments is not None:
                comments.append((i, j))
            i = j
        elif text.startswith("/*", i):
            j = _block_comment_end(text, i, dialect, agree)
            if comments is not None:
                comments.append((i, j))
            i = j
        elif ch in ("'", '"'):
            j = _string_end(text, i)
            tokens.append(Token(Kind.STRING, text[i:j], i, j))
            i = j
        elif ch == "`":
            j, name = _quoted_name(text, i)
            tokens.append(Token(Kind.QUOTED, name, i, j))
            i = j
        elif ch == "$":
            j = i + 1
            if j < n and text[j] == "`":
                j, name = _quoted_name(text, j)
                tokens.append(Token(Kind.PARAM, "$" + name, i, j))
            elif j < n and text[j] in _DIGITS:
                j = _number_end(text, j, integer_only=True)
                tokens.append(Token(Kind.PARAM, text[i:j], i, j))
            else:
                while j < n and text[j] in (_WORD_PART if j > i + 1 else _WORD_START):
                    j += 1
                tokens.append(Token(Kind.PARAM, text[i:j], i, j))
            i = j
        elif ch in _DIGITS or (ch == "." and i + 1 < n and text[i + 1] in _DIGITS):
            j = _number_end(text, i)
            tokens.append(Token(Kind.NUMBER, text[i:j], i, j))
            i = j
        elif ch in _WORD_START:
            j = i + 1
            while j < n and text[j] in _WORD_PART:
                j += 1
            tokens.append(Token(Kind.WORD, text[i:j], i, j))
            i = j
        elif ch in _ASCII_PUNCT:
            two = text[i : i + 2]
            if two in _MULTI_PUNCT:
                tokens.append(Token(Kind.PUNCT, two, i, i + 2))
                i += 2
            else:
                tokens.append(Token(Kind.PUNCT, ch, i, i + 1))
                i += 1
        else:
            raise LexError(
                f"character U+{ord(ch):04X} outside a string literal or backticked name (only ASCII names, "
                "operators and whitespace are accepted there)",
                i,
                ambiguous=True,
            )
    return tokens


def _line_comment_end(text: str, start: int) -> int:
    """Index past a `//` comment: it ends at a line feed (or `\r\n`), as in the database.

    A carriage return not followed by a line feed does not end the database's comment rule,
    which then reads `//` as two operators; such text is refused.
    """
    end = text.find("\n", start)
    stop = len(text) if end < 0 else end
    cr = text.find("\r", start, stop)
    while cr >= 0:
        if cr + 1 < len(text) and text[cr + 1] != "\n":
            raise LexError(
                "a carriage return inside a // comment that is not followed by a line feed", cr, ambiguous=True
            )
        cr = text.find("\r", cr + 1, stop)
    return stop if end < 0 else end + 1


def _block_comment_end(text: str, start: int, dialect: Dialect, agree: bool) -> int:
    """Index past the `/* */` comment at `start` as `dialect` ends it; with `agree`, both dialects must end it there."""
    ladybug, neo4j = _ladybug_comment_end(text, start), _neo4j_comment_end(text, start)
    if agree and ladybug != neo4j:
        raise LexError(
            "a /* comment that LadybugDB and Neo4j end in different places (a `*` before `*/`, as in /* **/): "
            "the two databases would read different code after it",
            start,
            ambiguous=True,
        )
    end = neo4j if dialect is Dialect.NEO4J else ladybug
    if end < 0:
        raise LexError("unterminated /* block comment", start)
    return end


def _ladybug_comment_end(text: str, start: int) -> int:
    """LadybugDB's rule: a `*` not followed by `/` also swallows the next character (-1: unterminated)."""
    i, n = start + 2, len(text)
    while i < n:
        if text[i] == "*":
            if i + 1 < n and text[i + 1] == "/":
                return i + 2
            i += 2
        else:
            i += 1
    return -1


def _neo4j_comment_end(text: str, start: int) -> int:
    """Neo4j's rule (`'/*' .*? '*/'`): the first `*/` after the opening `/*` (-1: unterminated)."""
    end = text.find("*/", start + 2)
    return -1 if end < 0 else end + 2


def _string_end(text: str, start: int) -> int:
    """Index just past the string literal opening at `start` (the database's escapes only)."""
    quote = text[start]
    i, n = start + 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt in ("u", "U"):
                digits = 8 if all(c in _HEX for c in text[i + 2 : i + 10]) and len(text[i + 2 : i + 10]) == 8 else 4
                if len(text[i + 2 : i + 2 + digits]) != digits or not all(
                    c in _HEX for c in text[i + 2 : i + 2 + digits]
                ):
                    raise LexError("invalid \\u escape in a string literal", i)
                i += 2 + digits
                continue
            if not nxt or nxt not in _ESCAPES:
                raise LexError(f"invalid escape \\{nxt} in a string literal", i)
            i += 2
            continue
        if ch == quote:
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


def _number_end(text: str, start: int, integer_only: bool = False) -> int:
    """Index past a numeric literal as the database reads it; refuse one glued to a name or a digit.

    Integers are `0` or `[1-9][0-9]*`; reals `[0-9]*.[0-9]+`; exponents `e`/`E`, an optional
    `-` and digits (no `+`). A literal directly followed by a letter, digit, `_` or `$`
    (`1LOAD`, `007`, `0x1F`, `1e+5`) is read differently by the database and refused.
    """
    n = len(text)
    i = start
    while i < n and text[i] in _DIGITS:
        i += 1
    if text[start] == "0" and i - start > 1:
        raise LexError("a number with a leading zero (the database reads 0 and another number)", start, ambiguous=True)
    if not integer_only:
        if i + 1 < n and text[i] == "." and text[i + 1] in _DIGITS:
            i += 1
            while i < n and text[i] in _DIGITS:
                i += 1
        if i < n and text[i] in "eE":
            k = i + 1
            if k < n and text[k] == "-":
                k += 1
            if k < n and text[k] in _DIGITS:
                while k < n and text[k] in _DIGITS:
                    k += 1
                i = k
    if i < n and text[i] in _WORD_PART:
        raise LexError(
            f"number {text[start:i]!r} glued to {text[i]!r}: the database would read it differently; put a space between",
            start,
            ambiguous=True,
        )
    return i
