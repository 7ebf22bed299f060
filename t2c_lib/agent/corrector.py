"""The schema corrector: a deterministic repair of what is mechanical in a failed query, before a model is asked.

With `corrector: schema+syntax` the syntax rules of `syntax_fix.py` (clause-order slips) run first.

It reads the query as the store's lexer does (`cypher/lexer.tokenize` in the store's dialect)
and edits tokens only, never raw text; each rule changes a name or a literal only where the
schema (or the stored values) leaves one answer:

| rule | example | when |
| --- | --- | --- |
| unknown label / relationship type | `(m:Mk_)` -> `(m:MK)` | the nearest valid name, case-insensitively, within `MAX_DISTANCE` edits, and no other name as near |
| unknown property | `m.nma` -> `m.nama`, `{smester: 3}` -> `{semester: 3}` | the variable has one known label (or type); nearest of its properties, as above |
| relationship direction | `(m:MK)-[:PURSUED_IN]->(s:SO)` -> `(m:MK)<-[:PURSUED_IN]-(s:SO)` | both ends have one known label, the schema has only the other direction |
| string literal | `{nama: 'basis data'}` -> `{nama: 'Basis Data'}` | compared with `=` to a stored string property of one label; the one stored value equal when case and accents are ignored, else the one value with similarity >= `VALUE_SIMILARITY` |

Names are looked up as the validator chain looks them up (`validation/names.NameSet`, case per
store), node and relationship uses come from the chain's own extractor (`validation/patterns`),
and the stored values from the chain's value index (`graph/value_index.ValueIndex`), so the
corrector sees what the feedback sees. A near name or value with a rival as near is left alone.

Neo4j-only forms (`type(r)`, `exists(n.p)`, `size((a)-->(b))`, ...): the embedded store already
rewrites them (`cypher/dialect.normalise`) on every query just before planning, so the corrector
never rewrites them itself (a second rewrite would shift a `substring` start twice); the patterns
inside them are corrected like any other. The corrected text must pass the gate (`cypher/gate.gate_check`)
or no correction is offered, and the loop then validates it through the whole chain as an attempt.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from t2c_lib.agent.syntax_fix import Edit, apply_edits, fix_syntax, token_end
from t2c_lib.cypher.gate import gate_check
from t2c_lib.cypher.lexer import Dialect, Kind, LexError, Token, tokenize
from t2c_lib.graph.value_index import ValueIndex, fold, store_loader
from t2c_lib.validation.names import NameSet
from t2c_lib.validation.patterns import NodeUse, QueryShape, extract, string_value

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.validation.base import ValidationContext

VALUE_SIMILARITY = 0.85
"""difflib ratio (case and accents folded) at or above which a literal is mapped to a stored value."""
VALUE_MARGIN = 0.05
"""The best stored value must beat the second best by this much, or the literal is left alone."""


def max_distance(name: str) -> int:
    """Edits allowed between a wrong name and its correction: 0 for names of 1-2 characters, 1 up to 4, else 2."""
    return 0 if len(name) <= 2 else 1 if len(name) <= 4 else 2


@dataclass(frozen=True)
class Correction:
    """A corrected query and what the corrector changed, one human-readable line per change."""

    query: str
    changes: tuple[str, ...]


def correct(query: str, ctx: ValidationContext, syntax: bool = False) -> Correction | None:
    """The schema corrector on `query` (`syntax`: the syntax rules of `syntax_fix.py` first); None when nothing is
    mechanical to fix or the result would not pass the gate."""
    dialect = ctx.store.facts.dialect
    text, changes = query, []
    steps: tuple[Callable[[str, ValidationContext, Dialect], tuple[str, list[str]]], ...] = (
        *((_syntax,) if syntax else ()),
        _names,
        _properties,
        _directions,
        _literals,
    )
    for step in steps:
        try:
            text, made = step(text, ctx, dialect)
        except LexError:
            return None
        changes.extend(made)
    if not changes or text == query or not gate_check(text, dialect=dialect).ok:
        return None
    return Correction(text, tuple(changes))


def _syntax(text: str, ctx: ValidationContext, dialect: Dialect) -> tuple[str, list[str]]:
    return fix_syntax(text, dialect)


# --- edits over token spans -----------------------------------------------------------------------


def _span(tok: Token) -> tuple[int, int]:
    return tok.pos, token_end(tok)


def _name_text(name: str, like: Token) -> str:
    """`name` written as the token it replaces was (backticked if it was, or if it is no plain identifier)."""
    plain = name.replace("_", "a").isalnum() and name.isascii() and not name[0].isdigit()
    return name if like.kind is Kind.WORD and plain else "`" + name.replace("`", "``") + "`"


def _string_text(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def nearest_name(wrong: str, valid: NameSet) -> str | None:
    """The one valid name nearest to `wrong` (case first, then edit distance within `max_distance`), or None."""
    canon = valid.canonical(wrong)
    if canon is not None:
        return None  # valid already
    same_case = [n for n in valid.names if n.lower() == wrong.lower()]
    if len(same_case) == 1:
        return same_case[0]
    limit = max_distance(wrong)
    if limit == 0:
        return None
    scored = sorted((_distance(wrong.lower(), n.lower()), n) for n in valid.names)
    near = [n for d, n in scored if d <= limit]
    if not near or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return near[0]


def _distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i]
        for j, cb in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


# --- the rules ------------------------------------------------------------------------------------


def _names(text: str, ctx: ValidationContext, dialect: Dialect) -> tuple[str, list[str]]:
    """Unknown labels and relationship types after `:` (or `|` in a list of them) mapped to the nearest valid one."""
    tokens = tokenize(text, dialect)
    labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
    types = NameSet(ctx.schema.rel_types, ctx.names_case_sensitive)
    stack: list[tuple[str, int]] = []
    edits: list[Edit] = []
    changes: list[str] = []
    last_name = -10
    for i, tok in enumerate(tokens):
        if tok.is_punct("(", "[", "{"):
            stack.append((tok.text, i))
            continue
        if tok.is_punct(")", "]", "}"):
            if stack:
                stack.pop()
            continue
        if not tok.name or i == 0:
            continue
        prev = tokens[i - 1]
        if not (prev.is_punct(":") or (prev.is_punct("|") and last_name == i - 2)):
            continue
        inner, at = stack[-1] if stack else ("", -1)
        if inner == "{":
            continue  # a map value (`{nama: x}`), not a label
        if inner == "[" and not (at > 0 and tokens[at - 1].is_punct("-")):
            continue  # a list, not a relationship
        last_name = i
        rel = inner == "["
        fixed = nearest_name(tok.name, types if rel else labels)
        if fixed is None:
            continue
        edits.append((*_span(tok), _name_text(fixed, tok)))
        changes.append(f"{'relationship type' if rel else 'label'} `{tok.name}` -> `{fixed}`")
    return apply_edits(text, edits), changes


def _owners(var: str, shape: QueryShape, ctx: ValidationContext) -> tuple[str, bool] | None:
    """The one label (or relationship type, then True) a variable is bound to, or None."""
    labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
    types = NameSet(ctx.schema.rel_types, ctx.names_case_sensitive)
    if shape.is_node_var(var):
        canon = {c for c in (labels.canonical(x) for x in shape.node_labels(var)) if c is not None}
        return (canon.pop(), False) if len(canon) == 1 else None
    if shape.is_rel_var(var):
        canon = {c for c in (types.canonical(x) for x in shape.rel_types_of(var)) if c is not None}
        return (canon.pop(), True) if len(canon) == 1 else None
    return None


def _map_owner(tokens: list[Token], brace: int, shape: QueryShape, ctx: ValidationContext) -> str | None:
    """The one label of the node pattern whose property map opens at `brace` (`(v:L {`), or None."""
    j = brace - 1
    while j >= 0 and (tokens[j].name or tokens[j].is_punct(":", "|")):
        j -= 1
    if j < 0 or not tokens[j].is_punct("(") or j == brace - 1:
        return None
    words = [t for t in tokens[j + 1 : brace] if t.name]
    var = words[0].name if words and not tokens[j + 1].is_punct(":") else ""
    named = [t.name for k, t in enumerate(tokens[j + 1 : brace], start=j + 1) if t.name and tokens[k - 1].is_punct(":")]
    labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
    canon = {labels.canonical(x) for x in named} - {None}
    if not canon and var:
        owner = _owners(var, shape, ctx)
        return owner[0] if owner and not owner[1] else None
    return canon.pop() if len(canon) == 1 else None


def _property_uses(tokens: list[Token], shape: QueryShape, ctx: ValidationContext) -> list[tuple[int, str, bool]]:
    """(token index of a property key, its owner, owner is a relationship type) for `v.key` and node-map keys."""
    uses: list[tuple[int, str, bool]] = []
    stack: list[tuple[int, str | None]] = []
    for i, tok in enumerate(tokens):
        if tok.is_punct("{"):
            stack.append((i, _map_owner(tokens, i, shape, ctx)))
            continue
        if tok.is_punct("}") and stack:
            stack.pop()
            continue
        if not tok.name:
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = tokens[i - 1] if i else None
        if (
            prev is not None
            and prev.is_punct(".")
            and i >= 2
            and tokens[i - 2].name
            and not (i >= 3 and tokens[i - 3].is_punct("."))
            and not (nxt is not None and nxt.is_punct("(", "."))
        ):
            owner = _owners(tokens[i - 2].name, shape, ctx)
            if owner is not None:
                uses.append((i, owner[0], owner[1]))
        elif stack and stack[-1][1] and prev is not None and prev.is_punct("{", ",") and nxt is not None:
            if nxt.is_punct(":"):
                uses.append((i, stack[-1][1] or "", False))
    return uses


def _properties(text: str, ctx: ValidationContext, dialect: Dialect) -> tuple[str, list[str]]:
    """Unknown property keys of a variable (or node map) with one known label or type, mapped to its nearest property."""
    tokens = tokenize(text, dialect)
    shape = extract(text)
    edits: list[Edit] = []
    changes: list[str] = []
    for i, owner, _ in _property_uses(tokens, shape, ctx):
        valid = NameSet(ctx.schema.properties_of(owner), ctx.names_case_sensitive)
        if not valid.names:
            continue
        tok = tokens[i]
        fixed = nearest_name(tok.name, valid)
        if fixed is None:
            continue
        edits.append((*_span(tok), _name_text(fixed, tok)))
        changes.append(f"property `{owner}.{tok.name}` -> `{owner}.{fixed}`")
    return apply_edits(text, edits), changes


def _directions(text: str, ctx: ValidationContext, dialect: Dialect) -> tuple[str, list[str]]:
    """A relationship written against the schema's only direction between its two labels, turned around."""
    tokens = tokenize(text, dialect)
    shape = extract(text)
    if [t.text for t in tokenize(text)] != [t.text for t in tokens]:
        return text, []  # the extractor's (default dialect) tokens differ: leave directions alone
    labels = NameSet(ctx.schema.labels, ctx.names_case_sensitive)
    types = NameSet(ctx.schema.rel_types, ctx.names_case_sensitive)
    allowed = {(p.source, p.type, p.target) for p in ctx.schema.patterns}
    edits: list[Edit] = []
    changes: list[str] = []

    def one_label(node: NodeUse) -> str | None:
        names = set(node.labels) or (shape.node_labels(node.var) if node.var else set())
        canon = {labels.canonical(x) for x in names} - {None}
        return canon.pop() if len(canon) == 1 else None

    for rel in shape.rels:
        if rel.direction == "--" or rel.var_length or len(rel.types) != 1:
            continue
        rtype, left, right = types.canonical(rel.types[0]), one_label(rel.left), one_label(rel.right)
        if rtype is None or left is None or right is None:
            continue
        source, target = (left, right) if rel.direction == "->" else (right, left)
        if (source, rtype, target) in allowed or (target, rtype, source) not in allowed:
            continue
        start, before_right = rel.pos, rel.right.pos - 1
        if rel.direction == "->" and tokens[start].is_punct("-") and tokens[before_right].is_punct(">"):
            edits += [(*_span(tokens[start]), "<-"), (*_span(tokens[before_right]), "")]
            turned = "<-"
        elif rel.direction == "<-" and tokens[start].is_punct("<") and tokens[before_right].is_punct("-"):
            edits += [(*_span(tokens[start]), ""), (*_span(tokens[before_right]), "->")]
            turned = "->"
        else:
            continue
        was = f"(:{left}){'-' if rel.direction == '->' else '<-'}[:{rtype}]{'->' if rel.direction == '->' else '-'}(:{right})"
        now = f"(:{left}){'<-' if turned == '<-' else '-'}[:{rtype}]{'-' if turned == '<-' else '->'}(:{right})"
        changes.append(f"direction {was} -> {now} (the schema has only (:{target})-[:{rtype}]->(:{source}))")
    return apply_edits(text, edits), changes


def _literals(text: str, ctx: ValidationContext, dialect: Dialect) -> tuple[str, list[str]]:
    """`{key: 'x'}` and `v.key = 'x'` with a value no node holds, mapped to the one stored value nearest to it."""
    tokens = tokenize(text, dialect)
    shape = extract(text)
    if ctx.values is None:
        ctx.values = ValueIndex(ctx.schema, store_loader(ctx.store, ctx.timeout_s))
    edits: list[Edit] = []
    changes: list[str] = []
    for i, owner, is_rel in _property_uses(tokens, shape, ctx):
        if is_rel or i + 2 >= len(tokens):
            continue
        op, lit = tokens[i + 1], tokens[i + 2]
        in_map = tokens[i - 1].is_punct("{", ",")
        if lit.kind is not Kind.STRING or not (op.is_punct(":") if in_map else op.is_punct("=")):
            continue
        key = NameSet(ctx.schema.properties_of(owner), ctx.names_case_sensitive).canonical(tokens[i].name)
        if key is None:
            continue
        value = string_value(lit.text)
        fixed = nearest_value(value, ctx.values.stored(owner, key))
        if fixed is None:
            continue
        edits.append((*_span(lit), _string_text(fixed)))
        changes.append(f"value {value!r} -> {fixed!r} (the stored {owner}.{key} nearest to it)")
    return apply_edits(text, edits), changes


def nearest_value(value: str, stored: list[str]) -> str | None:
    """The one stored value `value` most likely meant, or None (stored already, none near, or two as near)."""
    if not stored or value in stored:
        return None
    folded = [v for v in stored if fold(v) == fold(value)]
    if folded:
        return folded[0] if len(folded) == 1 else None
    scored = sorted(
        ((difflib.SequenceMatcher(None, fold(value), fold(v), autojunk=False).ratio(), v) for v in stored),
        reverse=True,
    )
    best, second = scored[0][0], (scored[1][0] if len(scored) > 1 else 0.0)
    if best < VALUE_SIMILARITY or best - second < VALUE_MARGIN:
        return None
    return scored[0][1]
