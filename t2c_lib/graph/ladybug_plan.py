"""Wall 1 for the embedded store: what LadybugDB's own planner says a query does.

The guard reads text; this module reads the database's *physical plan* (the output of
`EXPLAIN`), so a query the guard misreads still cannot act. A plan is accepted only when
every operator is on `READ_OPERATORS` and every table function it calls is on
`READ_TABLE_FUNCTIONS`; anything else, including an operator this list does not know,
refuses the query. The lists were read off the plans of every gold query and few-shot
example of both datasets and the guard's read fixtures (LadybugDB 0.22), then checked
against the operators of the writes, file access, exports, extensions, attachments,
transactions and settings that the plan must refuse (tests/fixtures/guard/).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from t2c_lib.cypher.lexer import Kind, LexError, tokenize

READ_OPERATORS = frozenset(
    {
        # scans and lookups
        "SCAN_NODE_TABLE",
        "SCAN_REL_TABLE",
        "QUERY_PRIMARY_KEY_LOOKUP",
        "RECURSIVE_EXTEND",
        "PATH_PROPERTY_PROBE",
        "COUNT_EXTEND_CHAIN",
        "COUNT_REL_TABLE",
        "SEMI_MASKER",
        "TABLE_FUNCTION_CALL",
        # joins and combinations
        "HASH_JOIN_BUILD",
        "HASH_JOIN_PROBE",
        "INTERSECT_BUILD",
        "INTERSECT",
        "CROSS_PRODUCT",
        "UNION_ALL_SCAN",
        # row-wise
        "FILTER",
        "FLATTEN",
        "PROJECTION",
        "UNWIND",
        "LIMIT",
        "SKIP",
        "MULTIPLICITY_REDUCER",
        "EMPTY_RESULT",
        # aggregation and sorting
        "AGGREGATE",
        "AGGREGATE_FINALIZE",
        "AGGREGATE_SCAN",
        "ORDER_BY",
        "ORDER_BY_MERGE",
        "ORDER_BY_SCAN",
        "TOP_K",
        "TOP_K_SCAN",
        # sinks
        "RESULT_COLLECTOR",
        "DUMMY_SINK",
    }
)
"""Physical operators of read queries (scans, joins, projections, aggregation, sorting)."""

READ_TABLE_FUNCTIONS = frozenset({"SHOW_TABLES", "TABLE_INFO", "SHOW_CONNECTION", "READ_FTABLE"})
"""Table functions a plan may call: schema introspection, and READ_FTABLE (re-reading an intermediate result;
COPY TO also uses it, but COPY_TO is no read operator). LOAD FROM (READ_CSV_PARALLEL, ...),
current_setting and the other catalog functions are table functions too, so the operator alone
is not enough."""

_CELL = re.compile(r"(?:^|│)\s*([^│]*?)\s*(?=│|$)", re.MULTILINE)
_OPERATOR = re.compile(r"^([A-Z][A-Z0-9_]*)\[(\d+)\]$")
_FUNCTION = re.compile(r"^Function: ([A-Za-z0-9_]+)$")


@dataclass(frozen=True)
class PlanVerdict:
    """The operators and table functions of one plan, and the first that is not a read (or None)."""

    operators: tuple[str, ...]
    functions: tuple[str, ...]
    refused: str | None

    @property
    def ok(self) -> bool:
        return self.refused is None


def plan_cells(explain_text: str) -> list[str]:
    """Every text cell of LadybugDB's EXPLAIN drawing (branches are drawn side by side)."""
    return [m.group(1) for m in _CELL.finditer(explain_text) if m.group(1) and not set(m.group(1)) <= set("-─┌┐└┘┬┴")]


def read_plan(explain_text: str) -> PlanVerdict:
    """Judge one EXPLAIN drawing: refuse any operator or table function not on the read lists.

    Operators carry ids 0..n-1; a missing or repeated id means the drawing cannot be trusted
    (a branch not drawn, or a name forged through an alias), so the plan is refused.
    """
    ids: list[int] = []
    operators: list[str] = []
    functions: list[str] = []
    for cell in plan_cells(explain_text):
        op = _OPERATOR.match(cell)
        if op:
            operators.append(op.group(1))
            ids.append(int(op.group(2)))
            continue
        fn = _FUNCTION.match(cell)
        if fn:
            functions.append(fn.group(1).upper())
    verdict = PlanVerdict(tuple(operators), tuple(functions), None)
    if not operators:
        return _refuse(verdict, "an empty plan (the database did not describe what the query does)")
    if sorted(ids) != list(range(len(ids))):
        return _refuse(verdict, "a plan drawing whose operator ids are incomplete or repeated")
    for name in operators:
        if name not in READ_OPERATORS:
            return _refuse(verdict, f"plan operator {name}")
    if operators.count("TABLE_FUNCTION_CALL") > len(functions):
        return _refuse(verdict, "a table function the plan does not name")
    for name in functions:
        if name not in READ_TABLE_FUNCTIONS:
            return _refuse(verdict, f"table function {name}")
    return verdict


READ_CLAUSES = frozenset({"MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CALL"})
"""The words a query may start with: a read clause (CALL only as a call of a named table function)."""


def statement_kind_problem(text: str) -> str | None:
    """Why `text` is not a query that may be planned or run (it does not start with a read clause), or None.

    EXPLAIN is no pure look: `EXPLAIN EXPORT DATABASE '<dir>'` creates the folders before any plan is
    judged, and binding `LOAD FROM` reads its file; so a statement of any other kind (COPY, EXPORT,
    IMPORT, ATTACH, LOAD, INSTALL, CHECKPOINT, a transaction, DDL, CALL of a setting) is refused on its
    tokens before the database binds or plans it."""
    try:
        tokens = tokenize(text)
    except LexError:
        return "a text the store cannot split into the database's tokens"
    words = [t.upper for t in tokens[:2]] + ["", ""]
    if not tokens:
        return "an empty statement"
    if words[0] not in READ_CLAUSES or (words[0] == "OPTIONAL" and words[1] != "MATCH"):
        first = (tokens[0].upper or tokens[0].text)[:24]
        return f"a statement that starts with {first!r}, not a read clause (MATCH, UNWIND, WITH, RETURN, CALL)"
    if words[0] == "CALL" and not _calls_a_function(tokens):
        return "a CALL that is not a call of a named table function"
    return None


def _calls_a_function(tokens: list) -> bool:
    """`CALL name(` or `CALL a.b(`: a table function or procedure call, not `CALL setting = value`."""
    i = 1
    while i < len(tokens) and tokens[i].kind in (Kind.WORD, Kind.QUOTED):
        if i + 1 < len(tokens) and tokens[i + 1].is_punct("("):
            return True
        if not (i + 1 < len(tokens) and tokens[i + 1].is_punct(".")):
            return False
        i += 2
    return False


MAX_CROSS_PRODUCTS = 4
"""Disconnected patterns a plan may join (CROSS_PRODUCT operators): the row count of n parts grows as
size**n, and LadybugDB's count(*) over 11 parts of 63 nodes already wraps INT64 without an error.
Five parts of up to 6,000 nodes each stay below 2**63."""


def size_problem(verdict: PlanVerdict) -> str | None:
    """Why a read plan is refused for its size (too many cartesian products), or None."""
    crosses = verdict.operators.count("CROSS_PRODUCT")
    if crosses > MAX_CROSS_PRODUCTS:
        return (
            f"the query joins {crosses + 1} disconnected patterns (a cartesian product; at most {MAX_CROSS_PRODUCTS + 1}): "
            "its row count can overflow a 64-bit integer; connect the patterns with relationships or WITH"
        )
    return None


def _refuse(verdict: PlanVerdict, why: str) -> PlanVerdict:
    return PlanVerdict(verdict.operators, verdict.functions, why)


@dataclass(frozen=True)
class DatabaseReading:
    """What the database makes of a text without running it: how many statements, its error or its plan."""

    several_statements: bool
    error: str  # the parser's or binder's message; "" when the text planned
    plan: PlanVerdict | None

    @property
    def is_one_read(self) -> bool:
        """One statement whose plan holds read operators only (a text that fails to compile is no threat)."""
        return not self.several_statements and (self.plan is None or self.plan.ok)
