"""The read-only rules over tokens: an allow-list of read clauses, walked clause by clause.

Pure functions over `lexer` tokens, shared by the gate every store runs (`cypher/gate.py`)
and the guard validator that explains a refusal to the model (`validation/guard.py`).
Case-, whitespace- and comment-insensitive, never fooled by keywords inside string literals
or backticked names.

The walk: a statement, and the body of every subquery (`CALL { }`, `EXISTS { }`, `COUNT { }`,
`COLLECT { }`), is a sequence of clauses. Between tokens the walk knows whether a value is still
owed (after `RETURN`, `,`, `=`, `AND`, ...: an *operand position*) or one is complete (after a
name, a literal, a closing bracket, `RETURN *`: a *clause position*). Every word at a clause
position must be a read clause the store's grammar knows (MATCH, OPTIONAL MATCH, WITH, WHERE,
UNWIND, RETURN, ORDER BY, SKIP, LIMIT, UNION [ALL], YIELD, CALL of a subquery or of an
allow-listed procedure) or an operator word that continues the value (AND, AS, DESC, ...);
anything else is refused with the word named, so a clause the gate has never heard of
(LadybugDB's `UPDATE`, `ANALYZE`; GQL's `INSERT`) is refused like a known write. `*` right
after RETURN, WITH or YIELD is "all columns", a complete value: the word after it stands at a
clause position (`UNWIND [1] AS LOAD WITH * LOAD FROM ...` is refused: LOAD FROM).

Write, admin and file words (DENY) are never exempted as aliases. Such a word is read as a
value only where no clause can start in either database: a property (`n.set`), label
(`:Create`), map key (`{load: 1}`), alias being bound (`AS load`), a variable followed by `.`
or `:` (`load.name`, `(set:MK)`), or right after a token that owes a value in both grammars
(`RETURN load`, `ORDER BY set`, `, call`, `= remove`, `WHERE load > 1`). Never after `*`,
`+`, `-`, NOT, CASE or DISTINCT (a star, a path quantifier, or in Neo4j a variable named
`not` could end the value there), and never followed by `(` or `{`.

Inside parentheses and square brackets no clause can start; DENY words there pass only in
the same plain spots (plus after IN, NOT, `|` and arithmetic), as defence in depth. Namespaced
functions that run arbitrary Cypher or write (apoc.cypher.*, apoc.create.*, dbms.*, ...) are
refused wherever they are called, with or without backticks. The database's own plan is the
wall behind this one (graph/ladybug_plan.py, graph/neo4j.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from t2c_lib.cypher.brackets import BRACKETS, Stray, bracket_pairs
from t2c_lib.cypher.lexer import DEFAULT_DIALECT, Dialect, Kind, Token

WRITE_CLAUSES = frozenset(
    {"CREATE", "MERGE", "SET", "DELETE", "DETACH", "NODETACH", "REMOVE", "DROP", "FOREACH", "INSERT", "UPSERT"}
)
"""Clauses that change the graph or its schema (INSERT: GQL's create, in Neo4j 2025)."""

FILE_WORDS = frozenset({"LOAD", "COPY", "IMPORT", "EXPORT", "ATTACH", "INSTALL", "UNINSTALL", "EXTENSION", "UPDATE"})
"""Commands that read or write files or load code (LadybugDB's `UPDATE <extension>` fetches and loads one)."""

ADMIN_WORDS = frozenset(
    {
        "USE",
        "ALTER",
        "GRANT",
        "REVOKE",
        "DENY",
        "TERMINATE",
        "RENAME",
        "CHECKPOINT",
        "COMMIT",
        "ROLLBACK",
        "BEGIN",
        "TRANSACTION",
        "TRANSACTIONS",
        "CONCURRENT",
        "SHOW",
        "START",
        "STOP",
        "ENABLE",
        "DISABLE",
        "EXPLAIN",
        "PROFILE",
        "REALLOCATE",
        "DEALLOCATE",
        "DRYRUN",
        "COMMENT",
        "ANALYZE",
        "CYPHER",
        "FINISH",
    }
)
"""Admin, transaction and session commands of either database (ANALYZE: LadybugDB's statistics)."""

DENY = WRITE_CLAUSES | FILE_WORDS | ADMIN_WORDS | {"CALL"}
"""Words never exempted as aliases: read as a value only in the plain spots the module notes list."""

KNOWN_NON_READ_WORDS = DENY | {"USING", "PERIODIC"}
"""Words a refusal names as unsafe; any other word at a clause position is unknown to both grammars (a typo)."""

NEVER_VALUE = frozenset({"TRANSACTIONS", "CONCURRENT"})
"""Words refused even in those spots (`CALL { } IN TRANSACTIONS`: IN owes a value there)."""

READ_CLAUSES = ("MATCH", "OPTIONAL MATCH", "WITH", "WHERE", "UNWIND", "RETURN", "ORDER BY", "SKIP", "LIMIT", "UNION")
_READ_WORDS = frozenset({"MATCH", "OPTIONAL", "WITH", "WHERE", "UNWIND", "RETURN", "ORDER", "SKIP", "LIMIT"})
_READ_WORDS |= {"UNION", "YIELD", "CALL"}

READ_ONLY_PROCEDURES: dict[Dialect, frozenset[str]] = {
    Dialect.LADYBUG: frozenset({"show_tables", "table_info", "show_connection"}),
    Dialect.NEO4J: frozenset(
        {
            "db.labels",
            "db.relationshiptypes",
            "db.propertykeys",
            "db.schema.visualization",
            "db.schema.nodetypeproperties",
            "db.schema.reltypeproperties",
        }
    ),
}
"""Procedures a query may CALL on each store (compared case-insensitively): schema introspection only."""

NEO4J_SCHEMA_CALLS: dict[str, str] = {
    "db.labels": "CALL show_tables() WHERE type = 'NODE' RETURN name AS label",
    "db.relationshiptypes": "CALL show_tables() WHERE type = 'REL' RETURN name AS relationshipType",
    "db.propertykeys": "CALL table_info('<Label or TYPE>') RETURN name AS propertyKey",
    "db.schema.visualization": "CALL show_tables() RETURN name, type, then CALL show_connection('<TYPE>') RETURN *",
    "db.schema.nodetypeproperties": "CALL table_info('<Label>') RETURN name, type",
    "db.schema.reltypeproperties": "CALL table_info('<TYPE>') RETURN name, type",
}
"""Neo4j's schema procedures, each with the query that answers it on the embedded store (the refusal says so)."""

DENIED_FUNCTION_PREFIXES = (
    "apoc.cypher.",
    "apoc.do.",
    "apoc.periodic.",
    "apoc.create.",
    "apoc.merge.",
    "apoc.refactor.",
    "apoc.nodes.",
    "apoc.trigger.",
    "apoc.schema.",
    "apoc.load.",
    "apoc.export.",
    "apoc.import.",
    "apoc.atomic.",
    "apoc.lock.",
    "apoc.systemdb.",
    "apoc.util.",
    "dbms.",
    "gds.",
)
"""Namespaced functions that run arbitrary Cypher, write, or reach outside the graph."""

_CONTINUE_OPERAND = frozenset({"AND", "OR", "XOR", "IN", "IS", "CONTAINS", "WHEN", "THEN", "ELSE", "AS"})
"""Words after a complete value that continue it and owe another value (`a AND b`, `x AS name`)."""
_CONTINUE_COMPLETE = frozenset({"ASC", "ASCENDING", "DESC", "DESCENDING", "END"})
"""Words after a complete value that end it (`ORDER BY x DESC`, `CASE ... END`)."""
_PREFIX = frozenset({"NOT", "CASE", "DISTINCT"})
"""Words that open a value and owe one after them (in Neo4j each could also be a variable)."""
_OWES_VALUE_WORDS = frozenset(
    {"RETURN", "WITH", "WHERE", "BY", "AND", "OR", "XOR", "UNWIND", "SKIP", "LIMIT", "WHEN", "THEN", "ELSE"}
    | {"IN", "IS", "CONTAINS", "YIELD", "MATCH"}
)
"""Keywords after which both grammars read a value, never a clause (when the walk read them as keywords)."""
_OWES_VALUE_PUNCT = frozenset({",", "(", "[", "=", "<>", "!=", "<", ">", "<=", ">=", "=~"})
_GROUP_VALUE_AFTER = _OWES_VALUE_PUNCT | {"|", "+", "-", "*", "/", "%", "^", ".."}
_GROUP_VALUE_WORDS = _OWES_VALUE_WORDS | _PREFIX | {"STARTS", "ENDS"}
PATH_SELECTORS = frozenset(
    {"ANY", "ALL", "SHORTEST", "PATH", "PATHS", "GROUP", "GROUPS", "REPEATABLE", "DIFFERENT", "ELEMENTS"}
    | {"ELEMENT", "RELATIONSHIP", "RELATIONSHIPS", "NODE", "NODES", "WALK", "TRAIL", "ACYCLIC"}
)
"""Neo4j's path selectors and match modes, read as part of a MATCH pattern (none is a clause of either grammar)."""
_VALUE_FOLLOWERS = frozenset(
    {"AND", "OR", "XOR", "IN", "IS", "CONTAINS", "STARTS", "ENDS", "AS", "ASC", "ASCENDING", "DESC", "DESCENDING"}
    | {"THEN", "ELSE", "WHEN", "END", "WHERE", "ORDER", "SKIP", "LIMIT", "RETURN", "UNION", "MATCH", "OPTIONAL"}
    | {"UNWIND"}
)
"""Words that may follow a value (an operator word, or a read clause starting after it); never WITH (LOAD WITH
HEADERS) or a word of a command."""
_SUBQUERY_OPENERS = frozenset({"CALL", "EXISTS", "COUNT", "COLLECT"})
_BOX_FIRST, _BOX_LAST = 0x2500, 0x257F  # the characters of LadybugDB's EXPLAIN drawing

_CLAUSE, _OPERAND, _COMPLETE = "clause", "operand", "complete"
"""Walk states: a statement's start (a read clause must follow), a value owed, a value complete."""


class _Refused(Exception):
    """Raised inside the walk with the clause to name and the message."""

    def __init__(self, clause: str, message: str, unknown_word: bool = False) -> None:
        super().__init__(message)
        self.clause = clause
        self.message = message
        self.unknown_word = unknown_word


@dataclass(frozen=True)
class Violation:
    """Why a text is not one read query: the clause to name, the message, and whether the word is
    simply unknown to both grammars (a typo such as `LIMT`: refused all the same, but a syntax
    error to the model, as the database's parser would have called it)."""

    clause: str
    message: str
    unknown_word: bool = False


def find_violation(tokens: list[Token], dialect: Dialect = DEFAULT_DIALECT) -> Violation | None:
    """The first offending clause and a message naming it, or None for a single read query."""
    try:
        _precheck(tokens)
        _Walk(tokens, dialect).statement()
    except _Refused as refused:
        return Violation(refused.clause, refused.message, refused.unknown_word)
    return None


def _precheck(tokens: list[Token]) -> None:
    """Plan-drawing characters, a second statement, and denied namespaced functions, wherever they stand."""
    for i, tok in enumerate(tokens):
        if tok.kind in (Kind.STRING, Kind.QUOTED) and any(_BOX_FIRST <= ord(c) <= _BOX_LAST for c in tok.text):
            raise _Refused(
                "box-drawing characters",
                "box-drawing characters (U+2500-U+257F) in a string or name: the database draws its plan with them, "
                "so the plan of such a query cannot be checked; remove them",
            )
        if tok.is_punct(";") and i + 1 < len(tokens):
            raise _Refused(";", "more than one statement (a `;` is followed by another statement); send one query")
        after_call = i > 0 and tokens[i - 1].upper == "CALL"  # a procedure: the walk checks its allow-list
        if tok.kind in (Kind.WORD, Kind.QUOTED) and not after_call and _is_namespaced_call(tokens, i):
            name = _dotted_name(tokens, i)[0]
            if name.lower().startswith(DENIED_FUNCTION_PREFIXES):
                raise _Refused(name, f"function {name}() can write or run arbitrary commands; it is not allowed")


class _Walk:
    """One pass over a statement's tokens, clause by clause; raises _Refused at the first word out of place."""

    def __init__(self, tokens: list[Token], dialect: Dialect) -> None:
        self.tokens = tokens
        self.dialect = dialect
        self.closer = _closers(tokens)
        self.opener = {c: o for o, c in self.closer.items()}
        self.keywords: set[int] = set()  # indexes of words the walk read as keywords

    def statement(self) -> None:
        end = len(self.tokens)
        while end and self.tokens[end - 1].is_punct(";"):
            end -= 1
        self.scope(0, end, pattern_first=False)

    # --- clauses ---------------------------------------------------------------------------

    def scope(self, lo: int, hi: int, pattern_first: bool) -> None:
        """A statement or subquery body in tokens[lo:hi]: read clauses only, separated by UNION."""
        toks = self.tokens
        state, pattern = _CLAUSE, False
        if pattern_first and lo < hi and toks[lo].is_punct("("):
            state, pattern = _OPERAND, True  # Neo4j's `EXISTS { (a)-->(b) }`: a MATCH pattern without MATCH
        i = lo
        while i < hi:
            tok = toks[i]
            if tok.kind is Kind.PUNCT and tok.text in BRACKETS:
                if state == _CLAUSE:
                    raise _Refused(tok.text, f"a query must start with a read clause ({_allowed()}), not {tok.text}")
                if tok.text == "(" and state == _COMPLETE and not _call_or_path(toks, i, pattern):
                    raise _Refused(
                        f"{toks[i - 1].text[:40]}(",
                        f"{toks[i - 1].text[:40]} followed by `(`: only a function name or a path pattern may be "
                        "followed by `(`",
                    )
                i = self.group(i, hi)
                state = _COMPLETE
            elif tok.kind is Kind.WORD:
                i, state, pattern = self.word(i, hi, state, pattern)
            elif tok.kind is Kind.PUNCT:
                state = self.punct(i, state, pattern)
                i += 1
            else:  # a literal, parameter or backticked name
                if state == _CLAUSE:
                    raise _Refused(
                        tok.text[:40], f"a query must start with a read clause ({_allowed()}), not {tok.text[:40]}"
                    )
                if state == _COMPLETE:
                    raise _Refused(tok.text[:40], f"{tok.text[:40]} stands where a clause must start: {_allowed()}")
                state = _COMPLETE
                i += 1

    def word(self, i: int, hi: int, state: str, pattern: bool) -> tuple[int, str, bool]:
        """Read the word at i; return the next index, state and pattern flag."""
        toks = self.tokens
        upper = toks[i].upper
        if state != _CLAUSE and _name_spot(toks, i):
            return i + 1, _COMPLETE, pattern
        if state == _OPERAND:
            if upper in DENY or upper in NEVER_VALUE:
                if upper in NEVER_VALUE or not self.plain_value(i):
                    raise _refusal(toks, i)
            if upper == "WHEN" and i > 0 and toks[i - 1].upper == "CASE":
                self.keywords.add(i)
                return i + 1, _OPERAND, pattern
            return i + 1, (_OPERAND if upper in _PREFIX else _COMPLETE), pattern
        if pattern and upper in PATH_SELECTORS:
            self.keywords.add(i)
            return i + 1, _OPERAND, pattern  # Neo4j: MATCH p = ANY SHORTEST (a)-->+(b), MATCH DIFFERENT NODES ...
        if state == _COMPLETE and upper in ("STARTS", "ENDS") and _next_upper(toks, i) == "WITH":
            self.keywords.update((i, i + 1))
            return i + 2, _OPERAND, pattern
        if state == _COMPLETE and upper in _CONTINUE_OPERAND:
            if upper == "IN" and self.after_call_subquery(i):
                raise _Refused(
                    "CALL { } IN TRANSACTIONS", "CALL { } IN TRANSACTIONS commits writes in batches; not allowed"
                )
            self.keywords.add(i)
            return i + 1, _OPERAND, pattern
        if state == _COMPLETE and upper in _CONTINUE_COMPLETE:
            self.keywords.add(i)
            return i + 1, _COMPLETE, pattern
        return self.clause(i, hi)

    def clause(self, i: int, hi: int) -> tuple[int, str, bool]:
        """A word at a clause position: an allowed read clause, or a refusal naming it."""
        toks = self.tokens
        upper = toks[i].upper
        nxt = _next_upper(toks, i)
        if upper not in _READ_WORDS:
            raise _refusal(toks, i)
        self.keywords.add(i)
        if upper == "OPTIONAL":
            if nxt == "MATCH":
                self.keywords.add(i + 1)
                return i + 2, _OPERAND, True
            if nxt == "CALL" and self.dialect is Dialect.NEO4J:
                self.keywords.add(i + 1)
                return self.call(i + 1, hi), _COMPLETE, False
            raise _Refused(f"OPTIONAL {nxt}".strip(), f"OPTIONAL {nxt} is not a read clause: {_allowed()}")
        if upper == "MATCH":
            return i + 1, _OPERAND, True
        if upper == "ORDER":
            if nxt != "BY":
                raise _Refused(f"ORDER {nxt}".strip(), "ORDER must be followed by BY")
            self.keywords.add(i + 1)
            return i + 2, _OPERAND, False
        if upper == "UNION":
            j = i + 1
            if nxt == "ALL" or (nxt == "DISTINCT" and self.dialect is Dialect.NEO4J):
                self.keywords.add(j)
                j += 1
            return j, _CLAUSE, False
        if upper == "CALL":
            return self.call(i, hi), _COMPLETE, False
        return i + 1, _OPERAND, False  # WITH, WHERE, UNWIND, RETURN, SKIP, LIMIT, YIELD

    def call(self, i: int, hi: int) -> int:
        """`CALL {`, `CALL (x) {` or an allow-listed procedure; the index after it."""
        toks = self.tokens
        j = i + 1
        if j >= hi:
            raise _Refused("CALL", "CALL without a procedure or subquery")
        if toks[j].is_punct("("):  # Neo4j's scoped subquery: CALL (x, y) { ... }
            j = self.group(j, hi)
            if j >= hi or not toks[j].is_punct("{"):
                raise _Refused("CALL", "CALL ( ) must be followed by a { } subquery")
        if toks[j].is_punct("{"):
            return self.group(j, hi)
        if not toks[j].name:
            raise _Refused("CALL", "CALL must name a procedure or open a subquery")
        name, k = _dotted_name(toks, j)
        allowed = READ_ONLY_PROCEDURES[self.dialect]
        if name.lower() not in allowed and self.dialect is Dialect.LADYBUG and name.lower() in NEO4J_SCHEMA_CALLS:
            raise _Refused(
                f"CALL {name}",
                f"CALL {name}: {name} is a Neo4j procedure; this store (LadybugDB) has none by that name: "
                f"use {NEO4J_SCHEMA_CALLS[name.lower()]}",
                unknown_word=True,  # a read the store cannot run, not an unsafe one: a semantic error to the model
            )
        if name.lower() not in allowed:
            listed = ", ".join(sorted(allowed))
            raise _Refused(
                f"CALL {name}",
                f"CALL {name}: procedure {name} is not allowed; only read-only schema procedures may be called "
                f"on this store ({listed})",
            )
        if k < hi and toks[k].is_punct("("):
            k = self.group(k, hi)
        return k

    def after_call_subquery(self, i: int) -> bool:
        """Whether the token before i closes a `CALL { }` or `CALL (x) { }` subquery."""
        toks = self.tokens
        brace = self.opener.get(i - 1) if i > 0 and toks[i - 1].is_punct("}") else None
        if brace is None or brace == 0:
            return False
        before = toks[brace - 1]
        if before.upper == "CALL":
            return True
        paren = self.opener.get(brace - 1) if before.is_punct(")") else None
        return paren is not None and paren > 0 and toks[paren - 1].upper == "CALL"

    def punct(self, i: int, state: str, pattern: bool) -> str:
        """The state after the punctuation at i."""
        toks = self.tokens
        tok = toks[i]
        prev = toks[i - 1] if i > 0 else None
        if state == _CLAUSE:
            raise _Refused(tok.text, f"a query must start with a read clause ({_allowed()}), not {tok.text}")
        if tok.text in ("*", "+"):
            if state == _OPERAND:
                return _COMPLETE if tok.text == "*" else _OPERAND  # `RETURN *`, `YIELD *`; unary plus
            if pattern and prev is not None and prev.is_punct(")"):
                return _COMPLETE  # a quantified path pattern, ((a)-->(b))+: Neo4j allows one only in MATCH patterns
            return _OPERAND
        if tok.text == "." and not _is_property_dot(toks, i):
            return state  # `1. CREATE`: no property access; what follows is judged where it stands
        if tok.is_punct(")", "]", "}"):
            return state  # an unmatched closer: the database refuses the text; nothing is read here
        return _OPERAND

    def plain_value(self, i: int) -> bool:
        """A DENY word in an operand position that neither grammar can read as a clause."""
        toks = self.tokens
        settled = _value_by_what_follows(toks, i)
        if settled is not None:
            return settled
        prev = toks[i - 1]
        if prev.kind is Kind.PUNCT:
            return prev.text in _OWES_VALUE_PUNCT
        return prev.upper in _OWES_VALUE_WORDS and (i - 1) in self.keywords

    # --- groups ------------------------------------------------------------------------------

    def group(self, i: int, hi: int) -> int:
        """Check the bracket group opening at i; return the index after its closer."""
        toks = self.tokens
        end = min(self.closer.get(i, hi), hi)
        if toks[i].is_punct("{"):
            kind = _brace_kind(toks, i, end, self.opener)
            if kind == "subquery":
                before = toks[i - 1].upper if i > 0 else ""
                self.scope(i + 1, end, pattern_first=before in ("EXISTS", "COUNT"))
            elif kind == "map":
                self.inside(i + 1, end)
            elif kind == "block":  # `size{(p)-->()}`: read as a subquery, so only read clauses pass inside
                self.scope(i + 1, end, pattern_first=True)
        else:
            self.inside(i + 1, end)
        return end + 1

    def inside(self, lo: int, hi: int) -> None:
        """Tokens inside brackets or a map: no clause starts there; DENY words only in plain spots."""
        toks = self.tokens
        i = lo
        while i < hi:
            tok = toks[i]
            if tok.kind is Kind.PUNCT and tok.text in BRACKETS:
                i = self.group(i, hi)
                continue
            upper = tok.upper
            if (upper in DENY or upper in NEVER_VALUE) and not _plain_in_group(toks, i):
                raise _refusal(toks, i)
            i += 1


def _call_or_path(tokens: list[Token], i: int, pattern: bool) -> bool:
    """Whether the `(` at i, after a complete value, opens a call's arguments or (in a MATCH pattern) a node."""
    prev = tokens[i - 1]
    if pattern:  # (a) ((b)-->(c))+, SHORTEST 2 (a)-->(b)
        return True
    if prev.kind is Kind.WORD:  # f(x), date.truncate(x); never an alias or a label (`AS x (`, `:MK (`)
        return not (i >= 2 and (tokens[i - 2].upper == "AS" or tokens[i - 2].is_punct(":", "::")))
    return prev.kind is Kind.QUOTED and i >= 2 and tokens[i - 2].is_punct(".")  # `ns`.`f`(x)


def _ends_value(tokens: list[Token], i: int) -> bool:
    """Whether what follows the word at i lets it be a value: a closer, an operator or an operator word.

    A word followed by another word or a literal (`LOAD FROM`, `COPY x`, `LOAD 'f'`, `INSTALL json`)
    has the shape of a command, whatever the walk expected there."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is None:
        return True
    if nxt.kind is Kind.PUNCT:
        return not nxt.is_punct("(", "{")
    if nxt.upper in ("WITH", "CALL"):  # a clause after the value, checked there; never LOAD WITH HEADERS
        return _next_upper(tokens, i + 1) != "HEADERS"
    return nxt.upper in _VALUE_FOLLOWERS


def _value_by_what_follows(tokens: list[Token], i: int) -> bool | None:
    """Whether the word at i is a value where what follows it settles that (None: the word before decides).

    Not a value when what follows gives it a command's shape, nor first in the text; a value before `.` or `:`."""
    if not _ends_value(tokens, i):
        return False
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is not None and nxt.is_punct(".", ":"):
        return True
    return False if i == 0 else None


def _plain_in_group(tokens: list[Token], i: int) -> bool:
    """A DENY word inside brackets standing as a name or a value (never followed by `(` or `{`)."""
    if tokens[i].upper in NEVER_VALUE:
        return False
    if _name_spot(tokens, i):
        return True
    settled = _value_by_what_follows(tokens, i)
    if settled is not None:
        return settled
    prev = tokens[i - 1]
    return prev.text in _GROUP_VALUE_AFTER if prev.kind is Kind.PUNCT else prev.upper in _GROUP_VALUE_WORDS


def _name_spot(tokens: list[Token], i: int) -> bool:
    """The word at i names a property, label, type or alias being bound: never a clause there."""
    if i == 0:
        return False
    prev = tokens[i - 1]
    if prev.is_punct(".") and _is_property_dot(tokens, i - 1):
        return True
    if prev.is_punct(":", "::") or prev.upper == "AS":
        return True
    if prev.is_punct("|", "&") and _inside_type_list(tokens, i - 1):
        return True
    return prev.is_punct("!") and i >= 2 and tokens[i - 2].is_punct(":", "|", "&")


def _brace_kind(tokens: list[Token], i: int, end: int, opener: dict[int, int]) -> str:
    """What the `{` at i (closed at `end`) opens: a subquery, a map (literal, properties, projection), a path
    quantifier, or a block that is none of these (walked as a subquery: only read clauses may stand in it)."""
    prev = tokens[i - 1] if i > 0 else None
    if prev is not None and prev.upper in _SUBQUERY_OPENERS and not (i >= 2 and tokens[i - 2].is_punct(".")):
        return "subquery"
    if prev is not None and prev.is_punct(")"):
        paren = opener.get(i - 1)
        if paren is not None and paren > 0 and tokens[paren - 1].upper == "CALL":
            return "subquery"  # CALL (x) { ... }
    content = tokens[i + 1 : end]
    if content and prev is not None and prev.is_punct(")"):
        if all(t.kind is Kind.NUMBER or t.is_punct(",") for t in content):
            return "quantifier"  # ((a)-->(b)){1,3}
    if not content or content[0].is_punct("."):
        return "map"
    if content[0].name and (len(content) == 1 or content[1].is_punct(":", ",")):
        return "map"
    return "block"


def _closers(tokens: list[Token]) -> dict[int, int]:
    """Each opening bracket's index -> its closer's index (an unclosed one runs to the end of the text; a stray
    closer is skipped, so nothing after it escapes the brackets open before it)."""
    pairs, unclosed = bracket_pairs(tokens, Stray.SKIP)
    pairs.update(dict.fromkeys(unclosed, len(tokens)))
    return pairs


def _refusal(tokens: list[Token], i: int) -> _Refused:
    """The refusal for the word at i, by what it is."""
    word = tokens[i].upper
    if word in WRITE_CLAUSES:
        clause = "DETACH DELETE" if word == "DETACH" and _next_upper(tokens, i) == "DELETE" else word
        return _Refused(clause, f"write clause {clause} is not allowed: the agent may only read the graph")
    clause = _admin_phrase(tokens, i)
    if word in FILE_WORDS:
        return _Refused(clause, f"{clause} reads or writes files or loads code, which a query may not do")
    if word in ADMIN_WORDS:
        return _Refused(clause, f"{clause} is an admin, transaction or data-loading command, not a read query")
    if word == "CALL":
        return _Refused("CALL", "CALL is only allowed as a clause: a subquery or an allowed procedure")
    unknown = tokens[i].kind is Kind.WORD and word not in KNOWN_NON_READ_WORDS
    return _Refused(clause, f"{clause} is not a read clause: {_allowed()}", unknown_word=unknown)


def _allowed() -> str:
    return "a query may only use " + ", ".join(READ_CLAUSES) + " [ALL] and CALL of a subquery or an allowed procedure"


def _is_property_dot(tokens: list[Token], dot: int) -> bool:
    """A `.` is property access when it follows a name, a parameter or a closing bracket (not a number)."""
    if dot == 0:
        return False
    before = tokens[dot - 1]
    return before.kind in (Kind.WORD, Kind.QUOTED, Kind.PARAM) or before.is_punct(")", "]", "}")


def _inside_type_list(tokens: list[Token], bar: int) -> bool:
    """True when the `|` or `&` at `bar` separates labels or relationship types (`:A|B`, `:A&B`)."""
    j = bar - 1
    while j >= 0 and (tokens[j].kind in (Kind.WORD, Kind.QUOTED) or tokens[j].is_punct("|", "&", "!")):
        j -= 1
    return j >= 0 and tokens[j].is_punct(":") and j < bar - 1


def _next_upper(tokens: list[Token], i: int) -> str:
    return tokens[i + 1].upper if i + 1 < len(tokens) else ""


def _admin_phrase(tokens: list[Token], i: int) -> str:
    """The keyword plus the next word when it is one too (`LOAD CSV`, `START DATABASE`)."""
    word = tokens[i].upper
    if word == "TRANSACTIONS" and any(t.upper == "IN" for t in tokens[max(0, i - 3) : i]):
        return "CALL { } IN TRANSACTIONS"
    nxt = _next_upper(tokens, i)
    return f"{word} {nxt}" if nxt and nxt.isalpha() and nxt not in ("MATCH", "RETURN", "WITH") else word


def _dotted_name(tokens: list[Token], i: int) -> tuple[str, int]:
    """The dotted name starting at token i (`db.schema.visualization`, `` `apoc`.cypher.run ``) and the index after it."""
    parts = [tokens[i].name]
    j = i + 1
    while j + 1 < len(tokens) and tokens[j].is_punct(".") and tokens[j + 1].name:
        parts.append(tokens[j + 1].name)
        j += 2
    return ".".join(parts), j


def _is_namespaced_call(tokens: list[Token], i: int) -> bool:
    """A name starting a dotted name directly followed by `(` (a namespaced function call)."""
    if i > 0 and tokens[i - 1].is_punct("."):
        return False
    name, j = _dotted_name(tokens, i)
    return "." in name and j < len(tokens) and tokens[j].is_punct("(")
