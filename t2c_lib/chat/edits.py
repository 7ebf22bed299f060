"""Deterministic follow-up edits: a follow-up that is an edit of the previous query's tokens, made without the model.

A message is read with the cue words of its language (`templates/<lang>/edits.yaml`) and the
schema's own property names: add or drop a returned column, keep only some, a filter on a stored
value or a number, another value in place of the one compared, a sort (the new key first, the
previous order kept as its tie-break), a limit, a group count, a count instead of a list (or the
reverse), a total. Only when every part of the message reads unambiguously is an edit made;
otherwise `edit_follow_up` returns None and the follow-up goes to the model as before. An edit is a
query like any other: the session runs it through the same validator chain (read-only guard first).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from t2c_lib.chat.prompts import load_cues
from t2c_lib.chat.query_parts import QueryParts, ReturnItem, split_query
from t2c_lib.cypher.lexer import Dialect, Kind, LexError, tokenize
from t2c_lib.graph.value_index import fold
from t2c_lib.schema import PropType

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.graph.value_index import ValueIndex
    from t2c_lib.schema import GraphSchema

NUMERIC = frozenset({PropType.INTEGER, PropType.FLOAT})
NAME_PROPS = ("name", "nama", "title", "judul")
"""Properties a list shows first when a count becomes a list again (else the label's first text property)."""
_QUOTED = re.compile(r"'([^']{1,200})'|\"([^\"]{1,200})\"")
_COMPARISON = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*(<=|>=|<>|<|>|=)\s*-?\d+")


@dataclass(frozen=True)
class Cues:
    """The cue words of one language (see `templates/<lang>/edits.yaml`)."""

    words: dict[str, tuple[str, ...]]
    numbers: dict[str, int]
    suffixes: tuple[str, ...]
    aliases: dict[str, str]
    count_alias: str

    def of(self, kind: str) -> tuple[str, ...]:
        return self.words.get(kind, ())


@cache
def cues(language: str) -> Cues:
    raw: dict[str, Any] = load_cues(language)
    words = {k: tuple(str(x).lower() for x in v) for k, v in raw.items() if isinstance(v, list)}
    return Cues(
        words,
        {str(k).lower(): int(v) for k, v in (raw.get("numbers") or {}).items()},
        tuple(words.get("suffixes", ())),
        {str(k).lower(): str(v) for k, v in (raw.get("aliases") or {}).items()},
        str(raw.get("count_alias") or "count"),
    )


@dataclass(frozen=True)
class Edit:
    """An edited query and the kinds of change it made (FOLLOW_UP_KINDS names)."""

    query: str
    kinds: tuple[str, ...]


@dataclass
class _Message:
    """A follow-up message read as words (folded), with its quoted values and numbers."""

    text: str
    words: list[str]
    quoted: list[str]
    numbers: list[tuple[int, int]]  # (word position, value)
    cues: Cues

    def find(self, phrases: Sequence[str]) -> int:
        """The word position of the first phrase found (-1: none)."""
        best = -1
        for phrase in phrases:
            parts = phrase.split()
            for i in range(len(self.words) - len(parts) + 1):
                if self.words[i : i + len(parts)] == parts:
                    best = i if best < 0 else min(best, i)
                    break
        return best

    def has(self, kind: str) -> bool:
        return self.find(self.cues.of(kind)) >= 0

    def position_of(self, name: str) -> int:
        """The position of the first word naming `name` (a property or alias part), -1 if none."""
        target = name.lower()
        for i, word in enumerate(self.words):
            if target in self._forms(word):
                return i
        return -1

    def _forms(self, word: str) -> set[str]:
        forms = {word}
        for suffix in self.cues.suffixes:
            if word.endswith(suffix) and len(word) > len(suffix) + 2:
                forms.add(word[: -len(suffix)].rstrip("-"))
        for form in list(forms):
            if form.endswith("es") and len(form) > 4:
                forms.add(form[:-2])
            if form.endswith("s") and len(form) > 3:
                forms.add(form[:-1])
        return forms | {self.cues.aliases[f] for f in list(forms) if f in self.cues.aliases}


def read_message(message: str, language: str) -> _Message:
    c = cues(language)
    quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(message)]
    bare = _QUOTED.sub(" ", message)
    words = re.findall(r"[a-z0-9]+", fold(bare).replace("-", " "))
    numbers = [(i, int(w)) for i, w in enumerate(words) if w.isdigit() and len(w) <= 9]
    numbers += [(i, c.numbers[w]) for i, w in enumerate(words) if w in c.numbers]
    return _Message(message, words, quoted, sorted(numbers), c)


def edit_follow_up(
    query: str,
    message: str,
    language: str,
    schema: GraphSchema,
    values: ValueIndex | None = None,
    dialect: Dialect = Dialect.LADYBUG,
) -> Edit | None:
    """The previous `query` edited as `message` asks, or None when the message is not read unambiguously."""
    parts = split_query(query, dialect)
    if parts is None:
        return None
    msg = read_message(message, language)
    try:
        edit = _Editor(parts, msg, schema, values, dialect).run()
    except _NotAnEdit:
        return None
    if edit is None or " ".join(edit.query.split()) == " ".join(query.split()):
        return None
    return edit


class _NotAnEdit(Exception):
    """A cue was found but the edit it names cannot be made unambiguously."""


class _Editor:
    def __init__(
        self, parts: QueryParts, msg: _Message, schema: GraphSchema, values: ValueIndex | None, dialect: Dialect
    ) -> None:
        self.parts = parts
        self.msg = msg
        self.schema = schema
        self.values = values
        self.dialect = dialect
        self.kinds: list[str] = []
        self.used_numbers: set[int] = set()

    # --- what the message names ------------------------------------------------------------------

    def main_variable(self) -> str:
        plain = [i.variable for i in self.parts.items if i.variable and not i.aggregate]
        agg = [i.variable for i in self.parts.items if i.variable]
        if plain:
            return plain[0]
        if agg:
            return agg[0]
        raise _NotAnEdit

    def variables(self) -> list[str]:
        """Bound variables, the main one first."""
        main = self.main_variable()
        rest = [v for v, _ in self.parts.bindings if v != main]
        return [main, *rest] if self.parts.bound(main) else rest

    def props_of(self, variable: str) -> dict[str, PropType]:
        return self.schema.properties_of(self.parts.bound(variable))

    def mentioned_props(self, numeric: bool = False) -> list[tuple[int, str, str]]:
        """(position, variable, property) the message names, in message order; a name goes to the first variable."""
        found: dict[str, tuple[int, str, str]] = {}
        for variable in self.variables():
            for prop, ptype in self.props_of(variable).items():
                if numeric and ptype not in NUMERIC:
                    continue
                at = self.msg.position_of(prop)
                if at >= 0 and prop.lower() not in found:
                    found[prop.lower()] = (at, variable, prop)
        return sorted(found.values())

    def mentioned_items(self, items: Sequence[ReturnItem]) -> list[tuple[int, ReturnItem]]:
        out = []
        for item in items:
            names = [item.prop] if item.prop else []
            if item.alias:
                names.append(item.alias)
            for name in names:
                pieces = [p for p in name.split("_") if len(p) >= 3] or [name]
                spots = [self.msg.position_of(p) for p in pieces]
                if all(s >= 0 for s in spots):
                    out.append((min(spots), item))
                    break
        return sorted(out, key=lambda x: x[0])

    def free_numbers(self) -> list[tuple[int, int]]:
        return [(at, n) for at, n in self.msg.numbers if at not in self.used_numbers]

    # --- the edit --------------------------------------------------------------------------------

    def run(self) -> Edit | None:
        if self.msg.has("value") and (self.msg.quoted or self.msg.numbers or self.new_values):
            return self.swap_value()
        parts = self.parts
        if self.msg.has("limit"):
            parts = self.limit(parts)
        parts = self.filter(parts)
        sorting = self.msg.has("sort")
        if not sorting:
            parts = self.group_or_count(parts)
        if not {"group", "count"} & set(self.kinds):
            parts = self.drop_or_keep(parts)
        parts = self.add(parts)
        if sorting:
            parts = self.sort(parts)
        if not self.kinds:
            return None
        return Edit(parts.render(), tuple(dict.fromkeys(self.kinds)))

    def limit(self, parts: QueryParts) -> QueryParts:
        numbers = self.free_numbers()
        if not numbers:
            return parts
        at, n = numbers[0]
        if n < 1:
            raise _NotAnEdit
        self.used_numbers.add(at)
        self.kinds.append("limit")
        return replace(parts, limit=str(n))

    @cached_property
    def new_values(self) -> list[Any]:
        """The stored values the message names that the previous query does not hold (read once per message)."""
        if self.values is None:
            return []
        try:
            links = self.values.link(self.msg.text)
        except Exception:
            return []
        query = self.parts.render()
        return [link for link in links if link.exact and f"'{link.value}'" not in query]

    def filter(self, parts: QueryParts) -> QueryParts:
        wants = self.msg.has("filter") or self.msg.has("only")
        conditions: list[str] = []
        if wants:
            for link in self.new_values:
                variable = next((v for v in self.variables() if self.parts.bound(v) == link.label), "")
                if not variable:
                    raise _NotAnEdit
                conditions.append(f"{variable}.{link.property} = {_string(link.value)}")
        numbers = self.free_numbers()
        compare = any(self.msg.has(k) for k in ("less", "more", "at_least"))
        if numbers and (wants or compare):
            for at, n in numbers:
                conditions.append(self.numeric_condition(at, n))
                self.used_numbers.add(at)
        if not conditions:
            return parts
        self.kinds.append("filter")
        return replace(parts, head=_add_conditions(parts.head, conditions, self.dialect))

    def numeric_condition(self, at: int, n: int) -> str:
        op = "="
        for kind, sign in (("at_least", ">="), ("less", "<"), ("more", ">")):
            spot = self.msg.find(self.msg.cues.of(kind))
            if 0 <= spot < at:
                op = sign
                break
        named = [(p, v, prop) for p, v, prop in self.mentioned_props(numeric=True) if p < at]
        if named:
            _, variable, prop = named[-1]
            return f"{variable}.{prop} {op} {n}"
        compared = {(m.group(1), m.group(2)) for m in _COMPARISON.finditer(self.parts.head)}
        if len(compared) == 1 and op != "=":
            variable, prop = compared.pop()
            return f"{variable}.{prop} {op} {n}"
        raise _NotAnEdit

    def group_or_count(self, parts: QueryParts) -> QueryParts:
        msg = self.msg
        grouping = msg.find(("kelompokkan", "group", "grouped")) >= 0 or (msg.has("group") and msg.has("count"))
        alias = msg.cues.count_alias
        counted = next((i for i in parts.items if i.aggregate and i.expr.lower().startswith("count")), None)
        if grouping:
            keys = [(p, v, prop) for p, v, prop in self.mentioned_props()]
            if not keys:
                raise _NotAnEdit
            _, variable, prop = keys[0]
            target = counted.expr if counted else f"count({self.main_variable()})"
            self.kinds.append("group")
            items = (ReturnItem(f"{variable}.{prop}", prop, variable, prop), ReturnItem(target, alias, aggregate=True))
            return replace(parts, items=items, distinct=False, order=(), limit="")
        if msg.has("list") and parts.items and all(i.aggregate for i in parts.items) and counted:
            variable = counted.variable
            prop = _name_prop(self.props_of(variable))
            if not prop:
                raise _NotAnEdit
            self.kinds.append("count")
            shown = f"{variable}.{prop}"
            return replace(
                parts,
                items=(ReturnItem(shown, "", variable, prop),),
                distinct="DISTINCT" in counted.expr.upper(),
                order=(shown,),
                limit="",
            )
        if not msg.has("count") and not msg.has("total"):
            return parts
        variable = self.main_variable()
        head = parts.head
        if msg.has("total"):
            numeric = self.mentioned_props(numeric=True)
            if not numeric:
                if not msg.has("count"):
                    return parts
                numeric = []
            if numeric:
                _, variable, prop = numeric[0]
                if parts.distinct:
                    head += f" WITH DISTINCT {variable}"
                self.kinds.append("count")
                item = ReturnItem(f"sum({variable}.{prop})", f"total_{prop}", variable, prop, True)
                return replace(parts, head=head, items=(item,), distinct=False, order=(), limit="")
        expr = f"count(DISTINCT {variable})" if parts.distinct else f"count({variable})"
        self.kinds.append("count")
        return replace(parts, items=(ReturnItem(expr, alias, variable, "", True),), distinct=False, order=(), limit="")

    def drop_or_keep(self, parts: QueryParts) -> QueryParts:
        named = self.mentioned_items(parts.items)
        if not named:
            return parts
        names = {id(i) for _, i in named}
        drop_at = self.msg.find(self.msg.cues.of("drop"))
        if drop_at >= 0:
            after = {id(i) for at, i in named if at > drop_at}
            kept = tuple(i for i in parts.items if id(i) not in (after or names))
        elif self.msg.has("only") and "filter" not in self.kinds and "limit" not in self.kinds:
            kept = tuple(i for i in parts.items if id(i) in names)
        else:
            return parts
        if not kept or len(kept) == len(parts.items):
            return parts
        dropped = [i for i in parts.items if id(i) not in {id(k) for k in kept}]
        gone = {i.key for i in dropped} | {i.expr for i in dropped}
        order = tuple(k for k in parts.order if _order_base(k) not in gone)
        self.kinds.append("drop_column")
        return replace(parts, items=kept, order=order)

    def add(self, parts: QueryParts) -> QueryParts:
        if not self.msg.has("add"):
            return parts
        shown = {(i.variable, i.prop) for i in parts.items}
        new = [
            ReturnItem(f"{v}.{prop}", "", v, prop)
            for _, v, prop in self.mentioned_props()
            if (v, prop) not in shown and not any(i.prop == prop for i in parts.items)
        ]
        if not new:
            return parts
        self.kinds.append("add_column")
        return replace(parts, items=parts.items + tuple(new))

    def sort(self, parts: QueryParts) -> QueryParts:
        key = self.sort_key(parts)
        desc = _descending(self.msg)
        if key is None:
            raise _NotAnEdit
        first = f"{key} DESC" if desc else key
        previous = [k for k in parts.order if _order_base(k) != key]
        if not parts.order:
            previous = [i.key for i in parts.items if not i.aggregate and i.key != key]
        self.kinds.append("sort")
        return replace(parts, order=(first, *previous))

    def sort_key(self, parts: QueryParts) -> str | None:
        named = self.mentioned_items(parts.items)
        props = self.mentioned_props()
        candidates: list[tuple[int, str]] = [(p, i.key) for p, i in named]
        shown = {(i.variable, i.prop) for i in parts.items}
        candidates += [(p, f"{v}.{prop}") for p, v, prop in props if (v, prop) not in shown]
        if candidates:
            key = min(candidates)[1]
            if parts.aggregated and not any(i.key == key for i in parts.items):
                return None
            return key
        aggregates = [i for i in parts.items if i.aggregate]
        if len(aggregates) == 1:
            return aggregates[0].key
        numeric = [
            i for i in parts.items if not i.aggregate and i.prop and self.props_of(i.variable).get(i.prop) in NUMERIC
        ]
        return numeric[0].key if len(numeric) == 1 else None

    def swap_value(self) -> Edit | None:
        head = self.parts.head
        try:
            tokens = tokenize(head, self.dialect)
        except LexError:
            raise _NotAnEdit from None
        if self.msg.quoted or (self.new_values and not self.msg.numbers):
            new = self.msg.quoted[0] if self.msg.quoted else self.new_values[0].value
            strings = [t for t in tokens if t.kind is Kind.STRING]
            target = self.matching_literal(strings, new)
            edited = head[: target.pos] + _string(new) + head[target.end :]
        else:
            literals = [(i, t) for i, t in enumerate(tokens) if t.kind is Kind.NUMBER and not _in_range(tokens, i)]
            if len(literals) != 1 or len(self.msg.numbers) != 1:
                raise _NotAnEdit
            i, target = literals[0]
            value = str(self.msg.numbers[0][1])
            start = target.pos
            op = ""
            for kind, sign in (("at_least", ">="), ("less", "<"), ("more", ">")):
                if self.msg.has(kind):
                    op = sign
                    break
            if op and i > 0 and tokens[i - 1].is_punct("<", ">", "<=", ">=", "="):
                start = tokens[i - 1].pos
                value = f"{op} {value}"
            edited = head[:start] + value + head[target.end :]
        self.kinds.append("value")
        return Edit(replace(self.parts, head=edited).render(), tuple(self.kinds))

    def matching_literal(self, strings: list[Any], new: str) -> Any:
        if len(strings) == 1:
            return strings[0]
        if self.values is None or not strings:
            raise _NotAnEdit
        homes = self.homes(new)
        same = [t for t in strings if self.homes(_unquote(t.text)) & homes]
        if len(same) != 1:
            raise _NotAnEdit
        return same[0]

    def homes(self, value: str) -> set[tuple[str, str]]:
        """The (label, property) pairs that store `value`."""
        assert self.values is not None
        out = set()
        for label, prop in self.values.identifying():
            if value in self.values.stored(label, prop):
                out.add((label, prop))
        return out


def _string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def _order_base(key: str) -> str:
    words = key.split()
    return " ".join(words[:-1]) if words and words[-1].upper() in ("ASC", "DESC", "ASCENDING", "DESCENDING") else key


def _name_prop(props: dict[str, PropType]) -> str:
    for name in NAME_PROPS:
        if name in props:
            return name
    return next((p for p, t in props.items() if t is PropType.STRING), "")


def _descending(msg: _Message) -> bool:
    desc = msg.find(msg.cues.of("desc"))
    asc = msg.find(msg.cues.of("asc"))
    return desc >= 0 and (asc < 0 or desc <= asc)


def _in_range(tokens: list[Any], i: int) -> bool:
    """A number inside a variable-length pattern (`*1..6`), not a compared value."""
    before = tokens[i - 1] if i > 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    return bool((before is not None and before.is_punct("*", "..")) or (after is not None and after.is_punct("..")))


def _add_conditions(head: str, conditions: list[str], dialect: Dialect) -> str:
    """`head` with `conditions` joined to its last WHERE, or a new WHERE (None-safe: a head with WITH is refused)."""
    try:
        tokens = tokenize(head, dialect)
    except LexError:
        raise _NotAnEdit from None
    depth = 0
    where = False
    for tok in tokens:
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        elif depth == 0 and tok.upper in ("WITH", "UNWIND", "CALL", "OPTIONAL"):
            raise _NotAnEdit
        elif depth == 0 and tok.upper == "WHERE":
            where = True
        elif depth == 0 and tok.upper == "MATCH":
            where = False
    joined = " AND ".join(conditions)
    if not where:
        return f"{head} WHERE {joined}"
    if re.search(r"\bOR\b", head.split("WHERE")[-1], re.IGNORECASE):
        raise _NotAnEdit
    return f"{head} AND {joined}"
