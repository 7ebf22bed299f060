"""Bounds on work built inside expressions: nested loops over ranges, and accumulators that double.

Neo4j Community checks neither its transaction timeout nor termination inside one expression,
and does not count the memory of a value built there: three nested comprehensions over
`range(1, 999)` filled its 1 GiB heap. So the gate estimates, from the text alone, how many
values the nested loops of a query produce and refuses past MAX_LOOP_VALUES:

- a loop is a list comprehension `[x IN src ...]`, a quantifier `any/all/none/single(x IN src
  ...)` or a `reduce(acc = init, x IN src | ...)`; `UNWIND src AS x` is costed by its source
  expression (`UNWIND [x IN range(1, 999) | [y IN range(1, 999) | y]] AS r` is built in one
  piece), but does not multiply what follows: it makes rows, and between rows the server
  checks its timeout and counts its memory;
- a loop's size is the size of the `range()` in its source (literal bounds: exact; computed
  bounds: COMPUTED_RANGE_VALUES), or of a name bound to one (`range(1, 999) AS r`); other
  sources (properties, stored lists) count as one: their size is the data's;
- every `range()` call and every loop costs its size times the sizes of the loops around it;
  the largest such product must stay within MAX_LOOP_VALUES.

A `reduce` whose step uses its accumulator twice with `+` (`s + s`, `l + [y IN l | y]`)
doubles the value on every step (`reduce(s = 'a', x IN range(1, 40) | s + s)`: 2^40
characters) and is refused whatever the range.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from t2c_lib.cypher.brackets import BRACKETS, CLOSERS, Stray, bracket_pairs
from t2c_lib.cypher.lexer import Kind, Token

MAX_RANGE_VALUES = 1_000_000
"""Values a `range()` with literal bounds may produce: a list that size is built in one expression, where
neither store's transaction memory accounting nor every timeout reaches (Neo4j filled its heap on 10**8)."""
MAX_LOOP_VALUES = 2_000_000
"""Values nested loops over ranges may produce together (`[x IN range(1, 999) | [y IN range(1, 999) | y]]`
is 998,001 and passes; a third level is ~10**9 and is refused)."""
COMPUTED_RANGE_VALUES = 1_000
"""The size counted for a `range()` whose bounds are computed (`range(0, size(xs) - 1)`)."""

_QUANTIFIERS = frozenset({"ANY", "ALL", "NONE", "SINGLE", "REDUCE"})


@dataclass(frozen=True)
class _Loop:
    """A loop found in the text: its size and the token span its body covers."""

    size: int
    body_start: int
    body_end: int  # exclusive
    at: int  # the loop's IN
    what: str


def loop_problem(tokens: list[Token]) -> str | None:
    """Why the nested loops and ranges of a query could build too many values in one expression, or None."""
    closers = matching_closers(tokens)
    aliases = _range_aliases(tokens, closers)
    loops = _loops(tokens, closers, aliases)
    costs: list[tuple[int, str]] = []
    for i, tok in enumerate(tokens):
        if _is_range_call(tokens, i):
            costs.append((_range_size(tokens, i) * _around(loops, i), f"range() at offset {tok.pos}"))
    for loop in loops:
        costs.append((loop.size * _around(loops, loop.at), loop.what))
    if not costs:
        return None
    worst, what = max(costs, key=lambda c: c[0])
    if worst > MAX_LOOP_VALUES:
        return (
            f"nested loops over ranges ({what}) would build about {worst:,} values inside expressions, over the "
            f"limit of {MAX_LOOP_VALUES:,}: nest fewer comprehensions or use smaller ranges"
        )
    return None


def reduce_problem(tokens: list[Token]) -> str | None:
    """Why a `reduce` could double its accumulator on every step, or None."""
    closers = matching_closers(tokens)
    for i, tok in enumerate(tokens):
        if tok.upper != "REDUCE" or i + 2 >= len(tokens) or not tokens[i + 1].is_punct("("):
            continue
        if i and tokens[i - 1].is_punct(".", ":"):
            continue
        acc = tokens[i + 2].name
        end = closers.get(i + 1, len(tokens))
        bar = _first_at_depth(tokens, i + 2, end, lambda t: t.is_punct("|"))
        if not acc or bar is None:
            continue
        body = tokens[bar + 1 : end]
        uses = sum(
            1
            for k, t in enumerate(body)
            if t.name == acc
            and not (k and body[k - 1].is_punct("."))
            and not (k + 1 < len(body) and body[k + 1].is_punct(":"))
        )
        if uses >= 2 and any(t.is_punct("+") or t.is_punct("|") for t in body):
            return (
                f"reduce() at offset {tok.pos} combines its accumulator {acc} with itself on every step, so the "
                "value can double each time (2^n for n steps); build it another way"
            )
    return None


def matching_closers(tokens: list[Token]) -> dict[int, int]:
    """For each opening bracket's index, the index of its closing bracket (unclosed ones are absent)."""
    return bracket_pairs(tokens, Stray.UNWIND)[0]


def _is_range_call(tokens: list[Token], i: int) -> bool:
    return (
        tokens[i].upper == "RANGE"
        and i + 1 < len(tokens)
        and tokens[i + 1].is_punct("(")
        and not (i and tokens[i - 1].is_punct(".", ":"))
    )


def call_arguments(tokens: list[Token], open_at: int) -> list[list[Token]]:
    """The argument token lists of the call whose `(` is at `open_at` (up to its closing bracket)."""
    args: list[list[Token]] = [[]]
    depth = 0
    for tok in tokens[open_at + 1 :]:
        if tok.kind is Kind.PUNCT and tok.text in BRACKETS:
            depth += 1
        elif tok.kind is Kind.PUNCT and tok.text in CLOSERS:
            if depth == 0:
                break
            depth -= 1
        elif tok.is_punct(",") and depth == 0:
            args.append([])
            continue
        args[-1].append(tok)
    return args


def integer_value(arg: list[Token]) -> int | None:
    """The value of an argument that is an integer literal (optionally negative), else None."""
    if len(arg) == 1 and arg[0].kind is Kind.NUMBER and arg[0].text.isdigit():
        return int(arg[0].text)
    if len(arg) == 2 and arg[0].is_punct("-") and arg[1].kind is Kind.NUMBER and arg[1].text.isdigit():
        return -int(arg[1].text)
    return None


def _range_size(tokens: list[Token], i: int) -> int:
    """How many values the `range(...)` call at `i` produces (COMPUTED_RANGE_VALUES when its bounds are computed)."""
    args = call_arguments(tokens, i + 1)
    values = [integer_value(arg) for arg in args[:3]]
    if len(args) < 2 or None in values[:2]:
        return COMPUTED_RANGE_VALUES
    low, high = values[0], values[1]
    assert low is not None and high is not None
    step = values[2] if len(args) >= 3 else 1
    if step is None:
        return max(abs(high - low) + 1, 1)
    if step == 0:
        return 1  # the database refuses a zero step
    return max((high - low) // step + 1, 0)


def _source_size(tokens: list[Token], start: int, end: int, aliases: dict[str, int]) -> int:
    """How many values a loop over tokens[start:end] runs: its largest range, a name bound to one, else 1."""
    sizes = [_range_size(tokens, k) for k in range(start, end) if _is_range_call(tokens, k)]
    if sizes:
        return max(sizes)
    if end - start == 1 and tokens[start].name in aliases:
        return aliases[tokens[start].name]
    return 1


def _range_aliases(tokens: list[Token], closers: dict[int, int]) -> dict[str, int]:
    """Names bound to a list of known size, left to right: `range(1, 999) AS r`, `[x IN range(..) | x] AS xs`,
    `r AS s`, and `collect(x) AS xs` where `UNWIND range(1, 999) AS x` made the rows."""
    aliases: dict[str, int] = {}
    rows: dict[str, int] = {}  # UNWIND variables: how many rows their range made
    ends = {close: opener for opener, close in closers.items()}
    for i, tok in enumerate(tokens):
        if tok.upper != "AS" or i < 1 or i + 1 >= len(tokens) or not tokens[i + 1].name:
            continue
        name = tokens[i + 1].name
        unwind = _unwind_before(tokens, i)
        if unwind is not None:
            size = _source_size(tokens, unwind + 1, i, aliases)
            if size > 1:
                rows[name] = size
            continue
        opener = ends.get(i - 1)
        if opener is None:
            if tokens[i - 1].name in aliases:
                aliases[name] = aliases[tokens[i - 1].name]
            continue
        start = opener - 1 if opener and _is_range_call(tokens, opener - 1) else opener
        size = _source_size(tokens, start, i, aliases)
        if opener and tokens[opener - 1].upper == "COLLECT":
            size = max([size] + [rows[t.name] for t in tokens[opener:i] if t.name in rows])
        if size > 1:
            aliases[name] = size
    return aliases


def _unwind_before(tokens: list[Token], as_at: int) -> int | None:
    """The index of the UNWIND whose `AS` is at `as_at`, or None (the AS of a projection)."""
    depth = 0
    for k in range(as_at - 1, -1, -1):
        tok = tokens[k]
        if tok.kind is Kind.PUNCT and tok.text in CLOSERS:
            depth += 1
        elif tok.kind is Kind.PUNCT and tok.text in BRACKETS:
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and (tok.is_punct(",") or tok.upper in ("WITH", "RETURN", "AS", "YIELD")):
            return None
        elif depth == 0 and tok.upper == "UNWIND":
            return k
    return None


def _first_at_depth(tokens: list[Token], start: int, end: int, match: Callable[[Token], bool]) -> int | None:
    """Index of the first token in [start, end) at bracket depth 0 (relative to start) that `match` accepts."""
    depth = 0
    for k in range(start, end):
        tok = tokens[k]
        if tok.kind is Kind.PUNCT and tok.text in BRACKETS:
            depth += 1
        elif tok.kind is Kind.PUNCT and tok.text in CLOSERS:
            depth -= 1
        elif depth == 0 and match(tok):
            return k
    return None


def _loops(tokens: list[Token], closers: dict[int, int], aliases: dict[str, int]) -> list[_Loop]:
    """Comprehensions, quantifiers and reduce, each with its size and body span."""
    openers = _enclosing_openers(tokens)
    loops: list[_Loop] = []
    for i, tok in enumerate(tokens):
        if tok.upper == "IN" and i >= 2 and tokens[i - 1].name:
            opener = openers[i]
            if opener is None or opener not in closers or not _loop_head(tokens, opener, i):
                continue
            end = closers[opener]
            split = _first_at_depth(tokens, i + 1, end, lambda t: t.upper == "WHERE" or t.is_punct("|"))
            source_end = end if split is None else split
            size = _source_size(tokens, i + 1, source_end, aliases)
            loops.append(_Loop(size, source_end, end, i, f"a loop over {tokens[i - 1].name} at offset {tok.pos}"))
    return loops


def _loop_head(tokens: list[Token], opener: int, at: int) -> bool:
    """Whether `name IN` at `at`, inside the bracket at `opener`, starts a loop: `[x IN`, `any(x IN`, `reduce(acc = 0, x IN`."""
    before = tokens[opener - 1].upper if opener else ""
    if at - 2 == opener:
        return tokens[opener].is_punct("[") or (tokens[opener].is_punct("(") and before in _QUANTIFIERS - {"REDUCE"})
    return tokens[at - 2].is_punct(",") and tokens[opener].is_punct("(") and before == "REDUCE"


def _enclosing_openers(tokens: list[Token]) -> list[int | None]:
    """For each token, the index of the innermost bracket still open there."""
    stack: list[int] = []
    out: list[int | None] = []
    for i, tok in enumerate(tokens):
        if tok.kind is Kind.PUNCT and tok.text in CLOSERS and stack:
            stack.pop()
        out.append(stack[-1] if stack else None)
        if tok.kind is Kind.PUNCT and tok.text in BRACKETS:
            stack.append(i)
    return out


def _around(loops: list[_Loop], i: int) -> int:
    """The product of the sizes of the loops whose body holds token `i`."""
    product = 1
    for loop in loops:
        if loop.body_start <= i < loop.body_end:
            product *= loop.size
    return product
