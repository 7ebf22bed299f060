"""The query process's own word check, before LadybugDB prepares (binds) a text.

Binding alone already acts: binding `LOAD FROM '<file>'` opens and reads the file, and its
error message can quote the file's lines. The gate (`cypher/gate.py`) refuses such texts first;
this check runs again inside the query process, on the database's tokens (`cypher/lexer.py`, so
a word inside a string literal, a comment or a backticked name never counts), because a gate
that reads a text wrongly must not be the only thing between a query and the files. It knows
only the file and code words of LadybugDB's grammar, so it refuses no read (an alias named
`load` or `copy` passes); the operating-system wall (`graph/oswall.py`) holds behind it.

`withheld_reason` decides whether a failing text's compile message may be passed on: a binder
or catalog message is shown only for a text that holds no word of a write, file, extension or
administration statement.
"""

from __future__ import annotations

from collections.abc import Iterator

from t2c_lib.cypher.lexer import Kind, LexError, Token, tokenize

NOT_READ_WORDS = frozenset(
    {
        "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "INSERT", "UPDATE",
        "COPY", "LOAD", "INSTALL", "UNINSTALL", "EXPORT", "IMPORT", "ATTACH", "USE",
        "CHECKPOINT", "BEGIN", "COMMIT", "ROLLBACK", "ANALYZE", "FOREACH", "PROJECT",
    }
)  # fmt: skip
"""Words that start or make up a statement other than a read in LadybugDB's grammar (or in Cypher's)."""

_COMMAND_WORDS = frozenset({"INSTALL", "UNINSTALL", "EXPORT", "IMPORT", "ATTACH", "COPY"})
"""Words that are a command only where a statement starts (LOAD also starts a reading clause: always checked)."""

_QUERY_CLAUSE_WORDS = frozenset({"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "LOAD"})
"""Words that start a clause inside a query (not only a statement): `withheld_reason` reads them as a name only
right after `AS` (an alias being bound)."""

READ_CALLS = frozenset({"SHOW_TABLES", "TABLE_INFO", "SHOW_CONNECTION"})
"""Table functions whose compile messages may be shown (the schema calls the store itself makes)."""


def _word(tokens: list[Token], i: int) -> str:
    return tokens[i].upper if 0 <= i < len(tokens) else ""


def _is_name_position(tokens: list[Token], i: int) -> bool:
    """A word right after `:` or `.` is a label, type or property name, never a keyword."""
    return i > 0 and tokens[i - 1].is_punct(":", ".")


def _keyword_spots(tokens: list[Token]) -> Iterator[tuple[int, str]]:
    """Each word (upper-cased, with its index) that may be a keyword: not a label, type or property name."""
    for i, tok in enumerate(tokens):
        if tok.upper and not _is_name_position(tokens, i):
            yield i, tok.upper


_VALUE_AFTER_WORDS = frozenset(
    {"AS", "RETURN", "WITH", "BY", "WHERE", "AND", "OR", "XOR", "NOT", "IN", "IS", "CONTAINS", "STARTS", "ENDS"}
    | {"UNWIND", "WHEN", "THEN", "ELSE", "CASE", "DISTINCT", "SKIP", "LIMIT"}
)
_VALUE_AFTER_PUNCT = frozenset({",", "(", "[", "{", "=", "<>", "!=", "<", ">", "<=", ">=", "=~", "/", "%", "^", "|"})
"""Never `*` (`WITH *` is a complete value), `+` or `-` (a path quantifier, an arrow): a command could follow them."""


def _statement_start(tokens: list[Token], i: int) -> bool:
    """Where LadybugDB's grammar starts a statement: the first token, after `;`, or after a leading EXPLAIN/PROFILE."""
    while i > 0 and tokens[i - 1].upper in ("EXPLAIN", "PROFILE"):
        i -= 1
    return i == 0 or tokens[i - 1].is_punct(";")


def _name_or_value(tokens: list[Token], i: int) -> bool:
    """The word at i stands where no statement can start: a label, type or property (after `:` or `.`), an alias
    being bound (after `AS`), a variable named in a value (after `RETURN`, `,`, `=`, `BY`, ...). A command word
    (INSTALL, ATTACH, COPY, ...) is a command only at a statement's start, so there it is a name (`AS install`)."""
    if _statement_start(tokens, i):
        return False
    prev = tokens[i - 1]
    if prev.kind is Kind.PUNCT:
        return prev.text in (":", ".") or prev.text in _VALUE_AFTER_PUNCT
    return prev.kind is Kind.WORD and prev.upper in _VALUE_AFTER_WORDS


def file_or_code_word(text: str) -> str | None:
    """The file or extension statement `text` holds (e.g. "LOAD FROM"), or None.

    A text the lexer cannot read is refused too ("unreadable text"): the gate refuses it before
    this point, so only a gate that went wrong lets one through."""
    try:
        tokens = tokenize(text)
    except LexError:
        return "unreadable text"
    for i, word in _keyword_spots(tokens):
        after = _word(tokens, i + 1)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if word == "LOAD" and (
            after in ("FROM", "EXTENSION") or (after == "WITH" and _word(tokens, i + 2) == "HEADERS")
        ):
            return f"LOAD {after}"
        if word == "LOAD" and nxt is not None and nxt.kind in (Kind.STRING, Kind.PARAM):
            return "LOAD"
        if (
            word == "LOAD"
            and nxt is not None
            and nxt.kind in (Kind.WORD, Kind.QUOTED)
            and not _name_or_value(tokens, i)
        ):
            return "LOAD"  # `LOAD json`: LadybugDB loads an installed extension by its name
        if word in _COMMAND_WORDS and _name_or_value(tokens, i):
            continue  # `RETURN m.sks AS install ORDER BY install`: an alias, not the command
        if word in ("INSTALL", "UNINSTALL") and nxt is not None and nxt.kind in (Kind.WORD, Kind.QUOTED, Kind.STRING):
            return word
        if word in ("EXPORT", "IMPORT") and after == "DATABASE":
            return f"{word} DATABASE"
        if word == "ATTACH" and nxt is not None and nxt.kind in (Kind.STRING, Kind.PARAM):
            return "ATTACH"
        if word == "COPY" and any(
            t.upper in ("FROM", "TO") and not _is_name_position(tokens, j)
            for j, t in enumerate(tokens[i + 1 :], start=i + 1)
        ):
            return "COPY"
        if word in ("USE", "UPDATE", "DETACH", "CHECKPOINT") and _statement_start(tokens, i):
            return word
    return None


def withheld_reason(text: str) -> str | None:
    """Why a compile message for `text` must not be passed on (the text is not plainly a read), or None."""
    try:
        tokens = tokenize(text)
    except LexError:
        return "the store cannot split the text into the database's tokens, so it is not a read it can vouch for"
    for i, word in _keyword_spots(tokens):
        if (
            word in NOT_READ_WORDS
            and _name_or_value(tokens, i)
            and (word not in _QUERY_CLAUSE_WORDS or _word(tokens, i - 1) == "AS")
        ):
            continue  # an alias or variable named `set`, `copy`, `install`: a name, not a statement or clause
        if word in NOT_READ_WORDS:
            return f"the text holds {word}, which is not a read"
        if word == "CALL" and i + 1 < len(tokens) and tokens[i + 1].kind in (Kind.WORD, Kind.QUOTED):
            name = tokens[i + 1].text.upper()
            if name not in READ_CALLS:
                return f"the text calls {name[:40]}, which is not a read the store knows"
    return None
