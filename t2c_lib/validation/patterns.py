"""A light extractor of what a query uses: node labels, relationship types and directions, property keys.

Not a Cypher parser: it walks the guard's tokens and recognises node patterns
`(v:Label {key: ...})`, relationship patterns `-[r:TYPE]->`, chains of both, label
predicates `v:Label`, property accesses `v.key`, and `WITH v AS w` renames. The schema and
property steps compare what it finds against the introspected schema, so a model gets
"label `Mk` does not exist, did you mean `MK`?" instead of a bare binder error. When it
cannot make sense of a part of a query it records nothing for that part, so it only ever
reports definite problems.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from t2c_lib.cypher.lexer import Kind, Token, tokenize

_LABEL_OPS = (":", "|", "&", "!", "%")


@dataclass(frozen=True)
class NodeUse:
    """A node pattern: its variable (or ""), labels and the property keys of its map."""

    var: str
    labels: tuple[str, ...]
    keys: tuple[str, ...]
    pos: int


@dataclass(frozen=True)
class RelUse:
    """A relationship pattern between two node patterns; direction is "->", "<-" or "--"."""

    var: str
    types: tuple[str, ...]
    keys: tuple[str, ...]
    direction: str
    left: NodeUse
    right: NodeUse
    var_length: bool
    pos: int


@dataclass(frozen=True)
class PropertyUse:
    """`var.key` in an expression."""

    var: str
    key: str
    pos: int


@dataclass(frozen=True)
class LiteralFilter:
    """A string literal a property is compared with: `(v:L {key: 'x'})`, `v.key = 'x'`, `v.key CONTAINS 'x'`."""

    var: str
    labels: tuple[str, ...]  # labels written in the same node pattern (empty for `v.key = ...`)
    key: str
    op: str  # "=", "CONTAINS", "STARTS WITH", "ENDS WITH"
    value: str


def string_value(literal: str) -> str:
    """The value of a quoted string token (`'it\\'s'` -> `it's`)."""
    body = literal[1:-1]
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'", '"': '"'}
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in ("u", "U") and i + 6 <= len(body):
                try:
                    out.append(chr(int(body[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(escapes.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


@dataclass
class QueryShape:
    """Everything the extractor found in one query."""

    nodes: list[NodeUse] = field(default_factory=list)
    rels: list[RelUse] = field(default_factory=list)
    label_predicates: list[tuple[str, str]] = field(default_factory=list)  # (var, label) from `WHERE v:L`
    properties: list[PropertyUse] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # `WITH v AS w`: w -> v
    literal_filters: list[LiteralFilter] = field(default_factory=list)

    @property
    def labels(self) -> list[str]:
        """Every label the query names, in order of first appearance."""
        seen: dict[str, None] = {}
        for node in self.nodes:
            for label in node.labels:
                seen.setdefault(label)
        for _, label in self.label_predicates:
            seen.setdefault(label)
        return list(seen)

    @property
    def rel_types(self) -> list[str]:
        seen: dict[str, None] = {}
        for rel in self.rels:
            for rel_type in rel.types:
                seen.setdefault(rel_type)
        return list(seen)

    def node_labels(self, var: str) -> set[str]:
        """Labels a node variable is bound to anywhere in the query (through `WITH v AS w` too)."""
        names = self._names(var)
        labels = {label for node in self.nodes if node.var in names for label in node.labels}
        labels |= {label for v, label in self.label_predicates if v in names}
        return labels

    def rel_types_of(self, var: str) -> set[str]:
        names = self._names(var)
        return {t for rel in self.rels if rel.var in names for t in rel.types}

    def is_node_var(self, var: str) -> bool:
        names = self._names(var)
        return any(node.var in names for node in self.nodes) or any(v in names for v, _ in self.label_predicates)

    def is_rel_var(self, var: str) -> bool:
        names = self._names(var)
        return any(rel.var in names for rel in self.rels)

    def _names(self, var: str) -> set[str]:
        """The variable and every variable it was renamed from."""
        names = {var}
        while var in self.aliases and self.aliases[var] not in names:
            var = self.aliases[var]
            names.add(var)
        return names


def extract(query: str) -> QueryShape:
    """The shape of `query`; raises lexer.LexError when it cannot be tokenized."""
    return _Extractor(tokenize(query)).run()


class _Extractor:
    def __init__(self, tokens: list[Token]) -> None:
        self.t = tokens
        self.shape = QueryShape()
        self.brace_kinds: list[str] = []  # "map" or "block" for each open `{`

    def run(self) -> QueryShape:
        i = 0
        n = len(self.t)
        while i < n:
            tok = self.t[i]
            if tok.is_punct("{"):
                self.brace_kinds.append("map" if self._is_map_open(i) else "block")
                i += 1
            elif tok.is_punct("}"):
                if self.brace_kinds:
                    self.brace_kinds.pop()
                i += 1
            elif tok.is_punct("("):
                node, j = self._node(i)
                if node is None:
                    i += 1
                    continue
                i = self._chain(node, j)
            elif tok.name and not self._after_dot(i):
                i = self._word(i)
            else:
                i += 1
        return self.shape

    # -- helpers on the token list -------------------------------------------------
    def _tok(self, i: int) -> Token | None:
        return self.t[i] if 0 <= i < len(self.t) else None

    def _upper(self, i: int) -> str:
        """Keyword form of the token at i (empty past either end)."""
        tok = self._tok(i)
        return tok.upper if tok is not None else ""

    def _punct(self, i: int, *chars: str) -> bool:
        tok = self._tok(i)
        return tok is not None and tok.is_punct(*chars)

    def _after_dot(self, i: int) -> bool:
        return self._punct(i - 1, ".")

    def _is_map_open(self, i: int) -> bool:
        """`{` opens a map when it is empty or starts with `key:`; otherwise a subquery block."""
        nxt = self._tok(i + 1)
        if nxt is None or nxt.is_punct("}"):
            return True
        return bool(nxt.name) and self._punct(i + 2, ":")

    def _matching(self, i: int, open_: str, close: str) -> int:
        """Index of the bracket closing the one at i (len(tokens) if unbalanced)."""
        depth = 0
        for j in range(i, len(self.t)):
            if self.t[j].is_punct(open_):
                depth += 1
            elif self.t[j].is_punct(close):
                depth -= 1
                if depth == 0:
                    return j
        return len(self.t)

    def _map_keys(self, i: int) -> tuple[tuple[str, ...], int]:
        """Top-level keys of the map opening at i and the index after its `}`."""
        keys, _, after = self._map_entries(i)
        return keys, after

    def _map_entries(self, i: int) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], int]:
        """Keys, (key, string value) pairs whose value is one literal, and the index after `}`."""
        end = self._matching(i, "{", "}")
        keys: list[str] = []
        literals: list[tuple[str, str]] = []
        depth = 0
        for j in range(i, end):
            tok = self.t[j]
            if tok.is_punct("{", "[", "("):
                depth += 1
            elif tok.is_punct("}", "]", ")"):
                depth -= 1
            elif depth == 1 and tok.name and self._punct(j + 1, ":") and (self._punct(j - 1, "{", ",")):
                keys.append(tok.name)
                value = self._tok(j + 2)
                if value is not None and value.kind is Kind.STRING and self._punct(j + 3, ",", "}"):
                    literals.append((tok.name, string_value(value.text)))
        return tuple(keys), tuple(literals), end + 1

    def _labels(self, i: int) -> tuple[tuple[str, ...], int]:
        """Names in a label expression starting at the `:` at i (`:A|B`, `:A:B`, `:!A`)."""
        labels: list[str] = []
        j = i
        while j < len(self.t):
            tok = self.t[j]
            if tok.kind is Kind.PUNCT and tok.text in _LABEL_OPS:
                j += 1
            elif tok.name and (tok.kind is Kind.QUOTED or not self._is_keyword_after_labels(j)):
                labels.append(tok.name)
                j += 1
            else:
                break
            if tok.name and not self._punct(j, *_LABEL_OPS):
                break
        return tuple(labels), j

    def _is_keyword_after_labels(self, j: int) -> bool:
        return self.t[j].upper == "WHERE" and not self._punct(j - 1, ":", "|", "&", "!")

    # -- patterns ------------------------------------------------------------------------
    def _node(self, i: int) -> tuple[NodeUse | None, int]:
        """Parse `(var:Labels {map} WHERE ...)` at i; (None, i) when it is not a node pattern."""
        j = i + 1
        var = ""
        tok = self._tok(j)
        if tok is not None and tok.name and (self._punct(j + 1, ":", "{", ")") or self._upper(j + 1) == "WHERE"):
            if tok.kind is Kind.QUOTED or tok.upper not in ("WHERE",):
                var = tok.name
                j += 1
        labels: tuple[str, ...] = ()
        if self._punct(j, ":"):
            labels, j = self._labels(j)
        keys: tuple[str, ...] = ()
        if self._punct(j, "{"):
            keys, literals, j = self._map_entries(j)
            for key, value in literals:
                self.shape.literal_filters.append(LiteralFilter(var, labels, key, "=", value))
        if self._upper(j) == "WHERE" and (var or labels):
            j = self._matching(i, "(", ")")
        if not self._punct(j, ")"):
            return None, i
        if not var and not labels and not keys and not self._looks_like_pattern_context(i, j):
            return None, i
        node = NodeUse(var, labels, keys, i)
        self.shape.nodes.append(node)
        return node, j + 1

    def _looks_like_pattern_context(self, i: int, close: int) -> bool:
        """`()` is a node only next to a relationship (`()-->`), not an empty call `f()`."""
        before, after = self._tok(i - 1), self._tok(close + 1)
        return bool((before and before.is_punct("-", ">")) or (after and after.is_punct("-", "<")))

    def _chain(self, left: NodeUse, j: int) -> int:
        """Follow `-[..]->(...)` links after a node pattern; return the index after the chain."""
        while True:
            rel = self._rel(j)
            if rel is None:
                return j
            var, types, keys, direction, var_length, k = rel
            right, after = self._node(k)
            if right is None:
                return k
            self.shape.rels.append(RelUse(var, types, keys, direction, left, right, var_length, j))
            left, j = right, after

    def _rel(self, j: int) -> tuple[str, tuple[str, ...], tuple[str, ...], str, bool, int] | None:
        """Parse a relationship connector at j: `-[r:T*1..2 {k: v}]->`, `<--`, `--` ..."""
        k = j
        left_arrow = self._punct(k, "<")
        if left_arrow:
            k += 1
        if not self._punct(k, "-"):
            return None
        k += 1
        var, var_length = "", False
        types: tuple[str, ...] = ()
        keys: tuple[str, ...] = ()
        if self._punct(k, "["):
            end = self._matching(k, "[", "]")
            m = k + 1
            tok = self._tok(m)
            if tok is not None and tok.name and tok.upper != "WHERE" and not self._punct(m - 1, ":"):
                if self._punct(m + 1, ":", "*", "]", "{") or self._upper(m + 1) == "WHERE":
                    var = tok.name
                    m += 1
            if self._punct(m, ":"):
                types, m = self._labels(m)
            var_length = any(self.t[x].is_punct("*") for x in range(m, end))
            for x in range(m, end):
                if self.t[x].is_punct("{"):
                    keys, _ = self._map_keys(x)
                    break
            k = end + 1
            if not self._punct(k, "-"):
                return None
            k += 1
        elif self._punct(k, "-"):
            k += 1
        else:
            return None
        right_arrow = self._punct(k, ">")
        if right_arrow:
            k += 1
        if not self._punct(k, "("):
            return None
        direction = "--" if left_arrow == right_arrow else ("->" if right_arrow else "<-")
        return var, types, keys, direction, var_length, k

    def _literal_comparison(self, var: str, key: str, j: int) -> None:
        """Record `v.key = 'x'` / `CONTAINS` / `STARTS WITH` / `ENDS WITH` comparisons with a literal."""
        op_tok = self._tok(j)
        if op_tok is None:
            return
        if op_tok.is_punct("="):
            op, k = "=", j + 1
        elif op_tok.upper == "CONTAINS":
            op, k = "CONTAINS", j + 1
        elif op_tok.upper in ("STARTS", "ENDS") and self._upper(j + 1) == "WITH":
            op, k = f"{op_tok.upper} WITH", j + 2
        else:
            return
        value = self._tok(k)
        if value is not None and value.kind is Kind.STRING:
            self.shape.literal_filters.append(LiteralFilter(var, (), key, op, string_value(value.text)))

    # -- words outside patterns -------------------------------------------------------
    def _word(self, i: int) -> int:
        tok = self.t[i]
        in_map = bool(self.brace_kinds) and self.brace_kinds[-1] == "map"
        if self._punct(i + 1, ":") and not (in_map and self._punct(i - 1, "{", ",")) and not self._punct(i - 1, "["):
            labels, j = self._labels(i + 1)
            for label in labels:
                self.shape.label_predicates.append((tok.name, label))
            return j
        if self._punct(i + 1, ".") and (key := self._tok(i + 2)) is not None and key.name:
            if self._punct(i + 3, "(") or self._punct(i + 3, "."):
                # `ns.fn(` is a function; `a.b.c` reads a map inside a property: record the first key only
                if self._punct(i + 3, "("):
                    return i + 3
            self.shape.properties.append(PropertyUse(tok.name, self.t[i + 2].name, i))
            self._literal_comparison(tok.name, self.t[i + 2].name, i + 3)
            return i + 3
        if tok.upper == "AS" and i >= 1:
            before, after = self._tok(i - 1), self._tok(i + 1)
            if before is not None and before.name and not self._after_dot(i - 1) and after is not None and after.name:
                self.shape.aliases[after.name] = before.name
            return i + 1
        return i + 1
