"""Pull the reasoning and the Cypher query out of a model's raw text.

Order of preference: `<cypher>...</cypher>`, then a ```cypher fence, then any other
``` fence that holds a query, then the first statement that starts with a Cypher
clause keyword (MATCH / OPTIONAL MATCH / WITH / UNWIND / CALL / RETURN). `<think>...</think>`
is kept as reasoning. Trailing semicolons and trailing prose are cut. Nothing here
raises: garbage gives an empty query and a reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from t2c_lib.llm.base import Completion, Message


class QuerySource(str, Enum):
    """Where the query was found in the response."""

    CYPHER_TAG = "cypher_tag"
    CYPHER_FENCE = "cypher_fence"
    FENCE = "fence"
    STATEMENT = "statement"
    NONE = "none"


@dataclass(frozen=True)
class ParsedResponse:
    """The extracted query (empty when none), the reasoning, where the query came from, and why not."""

    query: str
    reasoning: str = ""
    source: QuerySource = QuerySource.NONE
    reason: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.query)


_THINK_RE = re.compile(r"<think>(.*?)(?:</think>|$)", re.IGNORECASE | re.DOTALL)
_STRAY_THINK_CLOSE_RE = re.compile(r"^(.*?)</think>", re.IGNORECASE | re.DOTALL)
_CYPHER_TAG_RE = re.compile(r"<cypher>(.*?)(?:</cypher>|$)", re.IGNORECASE | re.DOTALL)
_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|$)", re.DOTALL)
_CLAUSE_START = r"(?:OPTIONAL\s+MATCH|MATCH|WITH|UNWIND|CALL|RETURN)\b"
_LINE_START_RE = re.compile(rf"^[ \t]*(?:cypher\s*:\s*)?({_CLAUSE_START})", re.IGNORECASE | re.MULTILINE)
# Inside a line, only an upper-case MATCH followed by a pattern counts (prose says "match" too).
_INLINE_RE = re.compile(r"\b((?:OPTIONAL\s+)?MATCH\s*\()")
_CYPHER_SYNTAX_RE = re.compile(r"[(\[{]|\w\.\w")
_QUERY_START_RE = re.compile(rf"^\s*{_CLAUSE_START}", re.IGNORECASE)

_PROSE_PREFIXES = (
    "question:",
    "explanation",
    "note:",
    "note ",
    "notes:",
    "answer:",
    "output:",
    "result:",
    "this query",
    "the query",
    "this cypher",
    "the cypher",
    "here is",
    "here's",
    "in this",
    "where:",
    "assumption",
    "</cypher>",
    "<cypher>",
    "</think>",
    "<think>",
    "```",
)
_CYPHER_WORDS = {
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "WITH",
    "RETURN",
    "ORDER",
    "SKIP",
    "LIMIT",
    "UNWIND",
    "CALL",
    "YIELD",
    "UNION",
    "AND",
    "OR",
    "NOT",
    "XOR",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "AS",
    "DISTINCT",
    "CREATE",
    "MERGE",
    "SET",
    "DELETE",
    "DETACH",
    "REMOVE",
    "FOREACH",
    "ON",
    "IN",
    "CONTAINS",
    "STARTS",
    "ENDS",
    "IS",
    "NULL",
    "COUNT",
    "EXISTS",
    "ASC",
    "DESC",
    "ALL",
    "ANY",
    "NONE",
    "SINGLE",
    "TRUE",
    "FALSE",
    "BY",
    "COLLECT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "SIZE",
}
# A capitalised word followed by at least three lower-case words: an English sentence.
_SENTENCE_RE = re.compile(r"^([A-Z][a-z']+)(?:,)?(?:\s+[a-z][a-z',]*){3,}")


def parse_response(text: object) -> ParsedResponse:
    """Split a raw model response into query and reasoning; never raises."""
    if not isinstance(text, str):
        return ParsedResponse("", reason=f"response is {type(text).__name__}, not text")
    if not text.strip():
        return ParsedResponse("", reason="empty response")
    reasoning, rest = _split_reasoning(text)

    tag_was_empty = False
    for match in _CYPHER_TAG_RE.finditer(rest):
        inner = match.group(1)
        fenced = _first_fence(inner)
        body = fenced[1] if fenced else inner
        closed = match.group(0).lower().endswith("</cypher>")
        if not closed and not _QUERY_START_RE.match(body):
            continue  # prose that mentions "<cypher>" (an echoed instruction), not an answer
        query = _clean(body, cut_prose=not closed)
        if query:
            return ParsedResponse(query, reasoning, QuerySource.CYPHER_TAG)
        tag_was_empty = True
    rest = _CYPHER_TAG_RE.sub(" ", rest) if tag_was_empty else rest

    fences = [(lang.lower(), body) for lang, body in _FENCE_RE.findall(rest)]
    for lang, body in fences:
        if lang == "cypher":
            query = _clean(body, cut_prose=False)
            if query:
                return ParsedResponse(query, reasoning, QuerySource.CYPHER_FENCE)
    for lang, body in fences:
        if lang != "cypher" and _QUERY_START_RE.match(body):
            query = _clean(body, cut_prose=False)
            if query:
                return ParsedResponse(query, reasoning, QuerySource.FENCE)

    start = _statement_start(rest)
    if start is not None:
        query = _clean(rest[start:], cut_prose=True)
        if query:
            return ParsedResponse(query, reasoning, QuerySource.STATEMENT)

    if tag_was_empty:
        reason = "the <cypher> tag is empty and no query was found elsewhere"
    elif fences:
        reason = "code fences hold no Cypher query"
    else:
        reason = "no <cypher> tag, code fence or statement starting with a Cypher clause"
    return ParsedResponse("", reasoning, QuerySource.NONE, reason)


def _split_reasoning(text: str) -> tuple[str, str]:
    """Take `<think>` blocks out (an unclosed one runs to the end); also a bare `...</think>` prefix."""
    parts = [m.group(1).strip() for m in _THINK_RE.finditer(text)]
    rest = _THINK_RE.sub(" ", text)
    if not parts:
        # Some servers strip the opening tag and leave only `</think>`.
        stray = _STRAY_THINK_CLOSE_RE.match(text)
        if stray:
            parts = [stray.group(1).strip()]
            rest = text[stray.end() :]
    return "\n\n".join(p for p in parts if p), rest


def _first_fence(text: str) -> tuple[str, str] | None:
    match = _FENCE_RE.search(text)
    return (match.group(1), match.group(2)) if match else None


def _statement_start(text: str) -> int | None:
    """Offset of the first Cypher clause at a line start, else of an inline `MATCH (`."""
    for match in _LINE_START_RE.finditer(text):
        line_end = text.find("\n", match.start(1))
        line = text[match.start(1) : len(text) if line_end < 0 else line_end]
        keyword = match.group(1)
        # "With the schema given, ..." is prose; a Cypher line is upper case or has syntax.
        if keyword.isupper() or _CYPHER_SYNTAX_RE.search(line):
            return match.start(1)
    inline = _INLINE_RE.search(text)
    return inline.start(1) if inline else None


def _is_prose(line: str) -> bool:
    stripped = line.strip()
    lower = stripped.lower()
    if lower.startswith(_PROSE_PREFIXES):
        return True
    words = stripped.split()
    first = re.sub(r"[^A-Za-z]", "", words[0]) if words else ""
    if not first or first.upper() in _CYPHER_WORDS or not words[0][:1].isupper():
        return False
    if _SENTENCE_RE.match(stripped):
        return True
    # Three or more plain words and no Cypher syntax at all: a sentence, not a clause.
    return len(words) >= 3 and not _CYPHER_SYNTAX_RE.search(stripped) and not re.search(r"[=<>'\"]", stripped)


def _clean(body: str, cut_prose: bool) -> str:
    """Trim whitespace, a leading `Cypher:` label, trailing prose (optional) and semicolons."""
    text = body.strip()
    text = re.sub(r"^cypher\s*:\s*", "", text, flags=re.IGNORECASE)
    if cut_prose:
        kept: list[str] = []
        for line in text.splitlines():
            if not line.strip() or _is_prose(line):
                break
            kept.append(line.rstrip())
        text = "\n".join(kept)
    else:
        # Even inside tags or fences, a `Question:` line starts the next example.
        text = re.split(r"^\s*Question\s*:", text, maxsplit=1, flags=re.MULTILINE | re.IGNORECASE)[0]
    text = text.strip()
    # A statement ends at its first semicolon; what follows is a second statement or prose.
    if cut_prose and ";" in text:
        text = _before_top_level_semicolon(text)
    text = text.rstrip().rstrip(";").rstrip()
    # A sentence-final period ("... RETURN m.nama.") is never part of a query.
    if cut_prose and text.endswith(".") and not text[-2:-1].isdigit():
        text = text[:-1].rstrip()
    return text


def _before_top_level_semicolon(text: str) -> str:
    """Text up to the first `;` outside string literals."""
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif quote:
            if ch == quote:
                quote = None
        elif ch in ("'", '"', "`"):
            quote = ch
        elif ch == ";":
            return text[:i]
    return text


@dataclass(frozen=True)
class Exchange:
    """One request to the model and its parsed answer, with the sampling it was asked at: what an attempt records."""

    messages: Sequence[Message]
    completion: Completion
    parsed: ParsedResponse
    temperature: float
    seed: int | None = None
