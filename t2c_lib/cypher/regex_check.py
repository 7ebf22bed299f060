"""Judging a `=~` pattern as the database's regex engine will see it: decoded, then parsed.

Neo4j hands the pattern to Java's backtracking engine, whose work inside one expression no
transaction timeout or termination reaches (a match ran 10-17 s past the client deadline).
Reading the raw literal missed what the engine sees: `'\\u0028a+\\u0029+$'` is `(a+)+$`
once the string is decoded. So the literal is decoded with the database's string escapes,
and the pattern is parsed by a real regex parser (Python's `re._parser`, whose syntax covers
the Java shapes that matter here; the few Java-only escapes are mapped onto equivalents
first). A pattern is refused when

- a quantified part that repeats (`*`, `+`, `{n,}`, `{n,m}` with m > 1, exact `{8}` too)
  contains a quantifier with a variable count or a multi-character alternation (`(a+)+`,
  `(.*a){8}`, `(ab|a)*`): exponential backtracking (`(,\\d{3})*` passes);
- it holds more than MAX_UNBOUNDED_QUANTIFIERS unbounded (or wide) quantifiers
  (`.*.*.*x`): polynomial backtracking of that degree;
- it uses a backreference (matching with one is NP-hard);
- the parser cannot read it (never guessed at).
"""

from __future__ import annotations

import re
import re._constants as _sre  # Python 3.11 (requires-python); no stubs, Any to mypy (pyproject.toml)
import re._parser as _parser
from typing import Any

MAX_UNBOUNDED_QUANTIFIERS = 2
"""Unbounded quantifiers one pattern may hold: `(?i).*matrix.*` passes, `.*.*.*x` does not. Backtracking
over a text of n characters can cost n to the power of this count: on a 7,800-character literal (the
longest a query may hold) Neo4j matched `.*.*x` in 0.2 s, `.*.{0,9}.*x` in 1.8 s, and `.*.*.*x` would
take minutes (0.33 s at 800 characters, growing with the cube)."""
WIDE_REPEAT = 8
"""A bounded quantifier whose range (max - min) reaches this counts as unbounded (`.{0,9}`, `.{0,1000}`);
narrower ones (`\\d{4}`, `\\d{1,3}`) do not."""

_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", _sre.MAX_REPEAT)}
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_JAVA_CLASS = re.compile(r"\{[A-Za-z0-9_=]+\}|[A-Za-z]")
"""What follows `\\p` / `\\P` in a Java pattern: `{IsAlphabetic}`, `{L}` or one letter."""


class RegexUnreadable(ValueError):
    """A string literal or pattern this module cannot read as the database would."""


def decode_literal(literal: str) -> str:
    """The value of a Cypher string literal (quotes included in `literal`), with the database's escapes decoded."""
    if len(literal) < 2 or literal[0] not in "'\"" or literal[-1] != literal[0]:
        raise RegexUnreadable("not a string literal")
    body = literal[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt.lower() in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt.lower()])
            i += 2
        elif nxt in ("u", "U"):
            width = 8 if nxt == "U" else 4
            digits = body[i + 2 : i + 2 + width]
            if not _is_hex(digits, width):
                raise RegexUnreadable("an invalid \\u escape")
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise RegexUnreadable("a \\U escape beyond Unicode")
            out.append(chr(code))
            i += 2 + width
        else:
            raise RegexUnreadable(f"an unknown escape \\{nxt}")
    return "".join(out)


def _is_hex(text: str, width: int) -> bool:
    return len(text) == width and all(c in "0123456789abcdefABCDEF" for c in text)


def pattern_problem(pattern: str) -> str | None:
    """Why the decoded pattern could backtrack for minutes (or cannot be read), or None."""
    try:
        tree = _parser.parse(_java_to_python(pattern))
    except (re.error, RegexUnreadable, RecursionError, OverflowError, ValueError) as exc:
        return f"cannot be read as a regular expression ({_short(exc)}), so it cannot be checked before it runs"
    walk = _Walk()
    problem = walk.visit(list(tree))
    if problem:
        return problem
    if walk.unbounded > MAX_UNBOUNDED_QUANTIFIERS:
        return (
            f"holds {walk.unbounded} unbounded or wide quantifiers (*, +, {{n,}}, {{0,9}}), over the limit of "
            f"{MAX_UNBOUNDED_QUANTIFIERS}: matching can backtrack for minutes"
        )
    return None


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:80]


def _java_to_python(pattern: str) -> str:
    """Java-only escapes onto Python equivalents of the same shape; refuse what has none.

    `\\p{L}` / `\\P{L}` (Unicode classes) become one character class; `\\h`, `\\v`, `\\R`
    whitespace and line breaks likewise; `\\Q...\\E` quoting becomes escaped literals; the
    comments flag `(?x)` is refused (Java and Python ignore whitespace in different places). Each
    `|` outside a class gets an empty lookahead after it, so Python keeps every alternation as
    Java runs it (it would fold `(a|[a-z])` into one character class, which cannot backtrack)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch != "\\":
            if in_class:
                in_class = ch != "]"
            elif ch == "[":
                in_class = True
                if pattern.startswith("^]", i + 1) or pattern.startswith("]", i + 1):  # a leading ] is literal
                    step = 3 if pattern[i + 1] == "^" else 2
                    out.append(pattern[i : i + step])
                    i += step
                    continue
            elif ch == "|":
                out.append("|(?=)")  # keeps Java's alternation: Python would fold `a|b` into one class
                i += 1
                continue
            elif pattern.startswith("(?", i) and re.match(r"\(\?[a-zA-Z-]*x", pattern[i:]):
                raise RegexUnreadable("the comments flag (?x)")
            out.append(ch)
            i += 1
            continue
        nxt = pattern[i + 1 : i + 2]
        if nxt in ("p", "P"):
            found = _JAVA_CLASS.match(pattern, i + 2)
            if not found:
                raise RegexUnreadable("an incomplete \\p class")
            out.append("\\w")
            i = found.end()
        elif nxt in ("h", "v", "R"):
            out.append("\\s")
            i += 2
        elif nxt in ("H", "V"):
            out.append("\\S")
            i += 2
        elif nxt == "Q":
            end = pattern.find("\\E", i + 2)
            stop = n if end < 0 else end
            out.append(re.escape(pattern[i + 2 : stop]))
            i = n if end < 0 else end + 2
        else:
            out.append(pattern[i : i + 2])
            i += 2
    return "".join(out)


class _Walk:
    """One pass over a parsed pattern: counts unbounded quantifiers, finds nested ones."""

    def __init__(self) -> None:
        self.unbounded = 0

    def visit(self, items: list[tuple[Any, Any]]) -> str | None:
        for op, av in items:
            problem = self._visit_one(op, av)
            if problem:
                return problem
        return None

    def _visit_one(self, op: Any, av: Any) -> str | None:
        if op in (_sre.GROUPREF, getattr(_sre, "GROUPREF_EXISTS", None)):
            return "uses a backreference, whose matching can take exponential time"
        if op in _REPEATS:
            low, high, body = av
            if high == _sre.MAXREPEAT or high - low >= WIDE_REPEAT:
                self.unbounded += 1
            if high > 1 and _repeats_inside(list(body)):
                shown = "unbounded" if high == _sre.MAXREPEAT else f"{low}..{high}"
                return (
                    f"repeats ({shown}) a part that itself repeats or alternates: matching can backtrack exponentially"
                )
            return self.visit(list(body))
        return self.visit_children(op, av)

    def visit_children(self, op: Any, av: Any) -> str | None:
        for child in _children(op, av):
            problem = self.visit(child)
            if problem:
                return problem
        return None


def _children(op: Any, av: Any) -> list[list[tuple[Any, Any]]]:
    """The sub-patterns under one parsed item."""
    if op is _sre.SUBPATTERN:
        return [list(av[-1])]
    if op is _sre.BRANCH:
        return [list(alt) for alt in av[1]]
    if op in (_sre.ASSERT, _sre.ASSERT_NOT):
        return [list(av[1])]
    if op is getattr(_sre, "ATOMIC_GROUP", None):
        return [list(av)]
    if op is getattr(_sre, "GROUPREF_EXISTS", None):
        return [list(part) for part in av[1:] if part is not None]
    return []


def _repeats_inside(items: list[tuple[Any, Any]]) -> bool:
    """Whether a sub-pattern can match in more than one way: a quantifier with a variable count (`a+`, `a{2,3}`;
    an exact count like `\\d{3}` only through its body) or an alternation of more than single characters."""
    for op, av in items:
        if op in _REPEATS:
            if av[1] > av[0]:
                return True
            if _repeats_inside(list(av[2])):
                return True
        elif op is _sre.BRANCH:
            return True
        elif any(_repeats_inside(child) for child in _children(op, av)):
            return True
    return False
