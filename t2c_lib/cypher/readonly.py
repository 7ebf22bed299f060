"""The read-only rules over tokens: which clause, call or command makes a text more than one read.

Pure functions over `lexer` tokens, shared by the gate every store runs (`cypher/gate.py`)
and the guard validator that explains a refusal to the model (`validation/guard.py`).
Case-, whitespace- and comment-insensitive, never fooled by keywords inside string literals
or backticked names. A word counts as a clause keyword only in clause position: not a property
(`n.set`), label or type (`:Create`), parameter (`$delete`), map key (`{create: 1}`), alias
(`AS remove`), a variable followed by a label (`(set:MK)`), or an alias used as a value where
no clause can start (`... AS delete ORDER BY delete`).

Decisions: SHOW (and START/STOP, EXPLAIN/PROFILE, BEGIN, ...) is refused at the start of a
statement as an admin command rather than a query, since those words also make ordinary
variable names elsewhere. Commands that touch files or load code (LOAD, COPY, IMPORT,
EXPORT, ATTACH, INSTALL, EXTENSION) are refused wherever they can start a clause. CALL is
allowed for subqueries (`CALL {`, `CALL (x) {`) and for a short allow-list of schema
procedures; namespaced *functions* that can run arbitrary Cypher or write (apoc.cypher.*,
apoc.create.*, dbms.*, ...) are refused. The database's own plan is the wall behind this one
(graph/ladybug_plan.py, graph/neo4j.py).
"""

from __future__ import annotations

from t2c_lib.cypher.lexer import Kind, Token

WRITE_CLAUSES = frozenset({"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH"})
"""Clauses that change the graph or its schema, rejected wherever they stand."""

ADMIN_ANYWHERE = frozenset(
    {
        "LOAD",  # LOAD CSV (Neo4j), LOAD FROM / LOAD EXTENSION (LadybugDB): reads files
        "USE",  # switch database
        "ALTER",
        "GRANT",
        "REVOKE",
        "DENY",
        "TERMINATE",
        "RENAME",
        "INSTALL",
        "UNINSTALL",
        "ATTACH",
        "EXTENSION",
        "CHECKPOINT",
        "COMMIT",
        "ROLLBACK",
        "TRANSACTIONS",  # CALL { } IN TRANSACTIONS, SHOW/TERMINATE TRANSACTIONS
    }
)
"""Admin words that are never part of a read query, rejected wherever they stand."""

ADMIN_LEADING = frozenset(
    {
        "SHOW",
        "START",
        "STOP",
        "ENABLE",
        "DISABLE",
        "BEGIN",
        "COMMENT",
        "EXPLAIN",
        "PROFILE",
        "DENY",
        "REALLOCATE",
        "DEALLOCATE",
        "DRYRUN",
    }
)
"""Admin words that also make ordinary variable names (`start`, `comment`): rejected only
where a statement begins (first token, after `{` or after UNION)."""

READ_ONLY_PROCEDURES = frozenset(
    {
        "db.labels",
        "db.relationshiptypes",
        "db.propertykeys",
        "db.schema.visualization",
        "db.schema.nodetypeproperties",
        "db.schema.reltypeproperties",
        "show_tables",
        "table_info",
        "show_connection",
    }
)
"""Procedures a query may CALL (compared case-insensitively): schema introspection only."""

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

FILE_COMMANDS = frozenset({"COPY", "IMPORT", "EXPORT"})
"""File commands that also make ordinary variable names: refused wherever they take their command shape
(`COPY x FROM`, `COPY (...) TO`, `IMPORT DATABASE`, `EXPORT DATABASE`), and at a statement's start always."""

_NOT_CLAUSE_BEFORE = (".", ":", "::")
_BOX_FIRST, _BOX_LAST = 0x2500, 0x257F  # the characters of LadybugDB's EXPLAIN drawing
_VALUE_AFTER = frozenset({",", "=", "<>", "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "^", "=~", "!="})
"""Tokens after which no clause can start: an alias standing there is a value (`ORDER BY a, delete`)."""


def find_violation(tokens: list[Token]) -> tuple[str, str] | None:
    """The first offending clause and a message naming it, or None for a single read query."""
    aliases = _aliases(tokens)
    for i, tok in enumerate(tokens):
        if tok.kind in (Kind.STRING, Kind.QUOTED) and any(_BOX_FIRST <= ord(c) <= _BOX_LAST for c in tok.text):
            return "box-drawing characters", (
                "box-drawing characters (U+2500-U+257F) in a string or name: the database draws its plan with them, "
                "so the plan of such a query cannot be checked; remove them"
            )
        if tok.is_punct(";"):
            if i + 1 < len(tokens):
                return ";", "more than one statement (a `;` is followed by another statement); send one query"
            continue
        if tok.kind is Kind.WORD and _is_namespaced_call(tokens, i):
            name = _dotted_name(tokens, i)[0]
            if name.lower().startswith(DENIED_FUNCTION_PREFIXES):
                return name, f"function {name}() can write or run arbitrary commands; it is not allowed"
        word = tok.upper
        if not word or not _in_clause_position(tokens, i) or _alias_used_as_value(tokens, i, aliases):
            continue
        if word in WRITE_CLAUSES:
            clause = "DETACH DELETE" if word == "DETACH" and _next_upper(tokens, i) == "DELETE" else word
            return clause, f"write clause {clause} is not allowed: the agent may only read the graph"
        if word in ADMIN_ANYWHERE:
            clause = _admin_phrase(tokens, i)
            return clause, f"{clause} is an admin, transaction or data-loading command, not a read query"
        if word in FILE_COMMANDS and _starts_file_command(tokens, i):
            clause = _admin_phrase(tokens, i)
            return clause, f"{clause} reads or writes files, which a query may not do"
        if word in ADMIN_LEADING and _at_statement_start(tokens, i):
            clause = _admin_phrase(tokens, i)
            return clause, f"{clause} is an admin command, not a read query"
        if word == "CALL":
            problem = _check_call(tokens, i)
            if problem:
                return problem
    return None


def _in_clause_position(tokens: list[Token], i: int) -> bool:
    """False when the word at i is a property, label, type, parameter, map key, alias or labelled variable."""
    prev = tokens[i - 1] if i > 0 else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if prev is not None and prev.kind is Kind.PUNCT and prev.text in _NOT_CLAUSE_BEFORE:
        if prev.text != "." or _is_property_dot(tokens, i - 1):
            return False
    if prev is not None and prev.upper == "AS":
        return False
    if prev is not None and prev.is_punct("|") and _inside_type_list(tokens, i - 1):
        return False
    if nxt is not None and nxt.is_punct(":", "."):
        return False  # map key `{set: 1}`, labelled variable `(delete:MK)`, `set.nama`: no clause is followed by `:` or `.`
    return True


def _aliases(tokens: list[Token]) -> frozenset[str]:
    """Names the query binds with `AS` (compared as written: variables are case-sensitive)."""
    return frozenset(
        tokens[i + 1].text
        for i in range(len(tokens) - 1)
        if tokens[i].upper == "AS" and tokens[i + 1].kind is Kind.WORD
    )


def _alias_used_as_value(tokens: list[Token], i: int, aliases: frozenset[str]) -> bool:
    """A word the query bound with `AS`, standing where only a value can (after BY, a comma or an operator)."""
    if tokens[i].text not in aliases or i == 0:
        return False
    prev = tokens[i - 1]
    return prev.upper == "BY" or (prev.kind is Kind.PUNCT and prev.text in _VALUE_AFTER)


def _starts_file_command(tokens: list[Token], i: int) -> bool:
    """COPY / IMPORT / EXPORT at a statement's start, or followed by the shape of the command."""
    if _at_statement_start(tokens, i):
        return True
    nxt = _next_upper(tokens, i)
    if nxt in ("DATABASE", "FROM", "TO") or (i + 1 < len(tokens) and tokens[i + 1].is_punct("(")):
        return True
    return i + 2 < len(tokens) and bool(tokens[i + 1].name) and tokens[i + 2].upper in ("FROM", "TO")


def _is_property_dot(tokens: list[Token], dot: int) -> bool:
    """A `.` is property access when it follows a name, a parameter or a closing bracket (not a number)."""
    if dot == 0:
        return False
    before = tokens[dot - 1]
    return before.kind in (Kind.WORD, Kind.QUOTED, Kind.PARAM) or before.is_punct(")", "]", "}")


def _inside_type_list(tokens: list[Token], bar: int) -> bool:
    """True when the `|` at `bar` separates labels or relationship types (`:A|B`)."""
    j = bar - 1
    while j >= 0 and (tokens[j].kind in (Kind.WORD, Kind.QUOTED) or tokens[j].is_punct("|", "&", "!")):
        j -= 1
    return j >= 0 and tokens[j].is_punct(":") and j < bar - 1


def _at_statement_start(tokens: list[Token], i: int) -> bool:
    if i == 0:
        return True
    prev = tokens[i - 1]
    return prev.is_punct("{", ";") or prev.upper in ("UNION", "ALL") and _union_before(tokens, i)


def _union_before(tokens: list[Token], i: int) -> bool:
    prev = tokens[i - 1].upper
    return prev == "UNION" or (prev == "ALL" and i >= 2 and tokens[i - 2].upper == "UNION")


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
    """The dotted name starting at token i (`db.schema.visualization`) and the index after it."""
    parts = [tokens[i].name]
    j = i + 1
    while j + 1 < len(tokens) and tokens[j].is_punct(".") and tokens[j + 1].name:
        parts.append(tokens[j + 1].name)
        j += 2
    return ".".join(parts), j


def _is_namespaced_call(tokens: list[Token], i: int) -> bool:
    """A word starting a dotted name directly followed by `(` (a namespaced function call)."""
    if i > 0 and tokens[i - 1].is_punct("."):
        return False
    name, j = _dotted_name(tokens, i)
    return "." in name and j < len(tokens) and tokens[j].is_punct("(")


def _check_call(tokens: list[Token], i: int) -> tuple[str, str] | None:
    """Allow `CALL {` / `CALL (` subqueries and allow-listed read-only procedures only."""
    j = i + 1
    if j >= len(tokens):
        return "CALL", "CALL without a procedure or subquery"
    if tokens[j].is_punct("{", "("):
        return None  # subquery: its clauses are scanned like the rest; IN TRANSACTIONS is caught there
    if not tokens[j].name:
        return "CALL", "CALL must name a procedure or open a subquery"
    name, _ = _dotted_name(tokens, j)
    if name.lower() in READ_ONLY_PROCEDURES:
        return None
    allowed = ", ".join(sorted(READ_ONLY_PROCEDURES))
    return (
        f"CALL {name}",
        f"CALL {name}: procedure {name} is not allowed; only read-only schema procedures may be called ({allowed})",
    )
