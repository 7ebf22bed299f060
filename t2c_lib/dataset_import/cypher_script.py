"""A graph from a Cypher script of CREATE/MERGE statements, read on t2c's own lexer and never run.

The script is data (it may come from anyone): its text is split by `cypher/lexer.py` (the tokens the
guard reads) and only this subset is understood, everything else refused with its line:

- `CREATE pattern, pattern, ...` and `MERGE pattern`, statements separated by `;`;
- a pattern is `(var:Label {key: literal, ...})` joined by `-[:TYPE {...}]->` or `<-[:TYPE {...}]-`;
  a variable bound earlier in the same statement may stand alone: `(a)-[:KNOWS]->(b)`;
- literals: strings (Cypher's escapes), integers, floats, `true`/`false`/`null`, lists of them and
  `date('YYYY-MM-DD')`;
- `CREATE CONSTRAINT ...` and `CREATE INDEX ...` statements are skipped (a dataset declares none).

`MERGE` keeps Cypher's meaning for these patterns: a node pattern names the node with that label and
exactly those properties if one exists, and an identical relationship is not added twice.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2c_lib.cypher.lexer import Kind, LexError, Token, tokenize
from t2c_lib.dataset_import.graph import (
    ImportCaps,
    ImportedGraph,
    Rel,
    SourceError,
    check_name,
    read_source_text,
    shown,
)

MAX_SCRIPT_BYTES = 16 * 1024 * 1024
"""The largest script read (its tokens are held in memory at once)."""

_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ESCAPE = re.compile(r"\\(?:[uU]([0-9a-fA-F]{8})|[uU]([0-9a-fA-F]{4})|(.))", re.S)
_SKIPPED = ("CONSTRAINT", "INDEX")


def read_script(path: Path, caps: ImportCaps | None = None) -> ImportedGraph:
    """The graph `path`'s CREATE/MERGE statements describe (SourceError, with the line, on anything else)."""
    text = read_source_text(
        path, MAX_SCRIPT_BYTES, f"{MAX_SCRIPT_BYTES // 2**20} MiB; split the script or load it into Neo4j"
    )
    return parse_script(text, caps or ImportCaps())


def parse_script(text: str, caps: ImportCaps | None = None) -> ImportedGraph:
    """The graph the statements of `text` describe."""
    try:
        tokens = tokenize(text)
    except LexError as exc:
        raise SourceError(f"line {_line(text, exc.pos)}: {exc}") from None
    reader = _Reader(text, tokens, ImportedGraph(caps or ImportCaps()))
    reader.statements()
    return reader.graph


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


@dataclass
class _Reader:
    """Walks the tokens statement by statement, adding what each pattern creates to `graph`."""

    text: str
    tokens: list[Token]
    graph: ImportedGraph
    i: int = 0
    bound: dict[str, tuple[str, str]] = field(default_factory=dict)  # variable -> (label, key), per statement
    merged: set[tuple[Any, ...]] = field(default_factory=set)  # relationships MERGE must not add again
    bare: bool = False  # whether the node pattern just read was a bound variable alone: `(a)`

    # --- statements -------------------------------------------------------------------------

    def statements(self) -> None:
        while self.i < len(self.tokens):
            if self._punct(";"):
                self.i += 1
                continue
            self.bound = {}
            if self._word() == "CREATE" and self._upper(self.i + 1) in _SKIPPED:
                self._skip_statement()
                continue
            if self._word() not in ("CREATE", "MERGE"):
                self._fail("only CREATE and MERGE statements are read (CREATE CONSTRAINT/INDEX skipped)")
            while self._word() in ("CREATE", "MERGE"):  # clauses of one statement share its variables
                merge = self._word() == "MERGE"
                self.i += 1
                self._patterns(merge)
            if self.i < len(self.tokens) and not self._punct(";"):
                self._fail("expected `;`, a `,` and another pattern, or another CREATE/MERGE clause")

    def _skip_statement(self) -> None:
        while self.i < len(self.tokens) and not self._punct(";"):
            self.i += 1

    def _patterns(self, merge: bool) -> None:
        while True:
            self._pattern(merge)
            if merge or not self._punct(","):
                return
            self.i += 1

    def _pattern(self, merge: bool) -> None:
        left = self._node(merge)
        while self._punct("-", "<"):
            if merge and not self.bare:
                self._fail("MERGE of a relationship needs both ends bound first: MERGE (a:L {...}) MERGE (a)-[:R]->(b)")
            rel_type, props, backwards = self._relationship()
            right = self._node(merge)
            if merge and not self.bare:
                self._fail("MERGE of a relationship needs both ends bound first: MERGE (a:L {...}) MERGE (a)-[:R]->(b)")
            source, target = (right, left) if backwards else (left, right)
            self._add_rel(rel_type, source, target, props, merge)
            left = right

    # --- patterns ---------------------------------------------------------------------------

    def _node(self, merge: bool) -> tuple[str, str]:
        self._expect("(")
        var = self._name() if self._is_name() and not self._punct(":") else None
        labels = []
        while self._punct(":"):
            self.i += 1
            labels.append(check_name("label", self._name()))
        props = self._map() if self._punct("{") else {}
        self._expect(")")
        self.bare = var is not None and var in self.bound and not labels and not props
        if var is not None and self.bare:
            return self.bound[var]
        if var is not None and var in self.bound:
            self._fail(f"variable {var} is bound already; refer to it as ({var})")
        if len(labels) != 1:
            self._fail("a node needs exactly one label (a t2c dataset gives each node one)")
        node = self._merge_node(labels[0], props) if merge else None
        if node is None:
            node = (labels[0], self._new_key(labels[0], var))
            self.graph.add_node(node[0], node[1], props)
        if var is not None:
            self.bound[var] = node
        return node

    def _merge_node(self, label: str, props: dict[str, Any]) -> tuple[str, str] | None:
        """The node MERGE names: the existing `label` node with exactly `props`, or None."""
        wanted = {k: v for k, v in props.items() if v is not None}
        for key, have in self.graph.nodes.get(label, {}).items():
            if have == wanted:
                return label, key
        return None

    def _new_key(self, label: str, var: str | None) -> str:
        """The node's key: its variable when free for the label, else `<Label>_<n>`."""
        rows = self.graph.nodes.get(label, {})
        if var is not None and var not in rows:
            return var
        n = len(rows) + 1
        while f"{label}_{n}" in rows:
            n += 1
        return f"{label}_{n}"

    def _relationship(self) -> tuple[str, dict[str, Any], bool]:
        backwards = self._punct("<")
        if backwards:
            self.i += 1
        self._expect("-")
        self._expect("[")
        if self._is_name() and not self._punct(":"):
            self._name()  # a relationship variable: not needed here
        self._expect(":")
        rel_type = check_name("relationship type", self._name())
        props = self._map() if self._punct("{") else {}
        self._expect("]")
        self._expect("-")
        if not backwards:
            self._expect(">")
        elif self._punct(">"):
            self._fail("a relationship has one direction")
        return rel_type, props, backwards

    def _add_rel(
        self, rel_type: str, source: tuple[str, str], target: tuple[str, str], props: dict[str, Any], merge: bool
    ) -> None:
        identity = (rel_type, source, target, repr(sorted(props.items())))
        if merge and identity in self.merged:
            return
        self.merged.add(identity)
        self.graph.add_rel(rel_type, Rel(source[0], source[1], target[0], target[1], props))

    # --- literals ---------------------------------------------------------------------------

    def _map(self) -> dict[str, Any]:
        self._expect("{")
        out: dict[str, Any] = {}
        while not self._punct("}"):
            key = check_name("property", self._name(), reserved=True)
            self._expect(":")
            if key in out:
                self._fail(f"property {key} given twice")
            out[key] = self._literal()
            if not self._punct("}"):
                self._expect(",")
        self.i += 1
        return out

    def _literal(self) -> Any:
        tok = self._token()
        if tok.kind is Kind.STRING:
            self.i += 1
            return _decode(tok.text)
        if tok.kind is Kind.NUMBER or tok.is_punct("-"):
            return self._number()
        if tok.is_punct("["):
            return self._list()
        word = tok.upper
        if word in ("TRUE", "FALSE", "NULL"):
            self.i += 1
            return {"TRUE": True, "FALSE": False, "NULL": None}[word]
        if word == "DATE":
            return self._date()
        self._fail("a property value must be a literal (string, number, boolean, null, list or date('...'))")
        raise AssertionError  # unreachable: _fail raises

    def _number(self) -> int | float:
        sign = -1 if self._punct("-") else 1
        if sign < 0:
            self.i += 1
        tok = self._token()
        if tok.kind is not Kind.NUMBER:
            self._fail("expected a number after -")
        self.i += 1
        text = tok.text
        return sign * (float(text) if any(c in text for c in ".eE") else int(text))

    def _list(self) -> list[Any]:
        self._expect("[")
        items: list[Any] = []
        while not self._punct("]"):
            items.append(self._literal())
            if not self._punct("]"):
                self._expect(",")
        self.i += 1
        return items

    def _date(self) -> dt.date:
        self.i += 1
        self._expect("(")
        tok = self._token()
        if tok.kind is not Kind.STRING:
            self._fail("date(...) takes one 'YYYY-MM-DD' string")
        self.i += 1
        self._expect(")")
        try:
            return dt.date.fromisoformat(_decode(tok.text))
        except ValueError:
            self._fail(f"date {shown(_decode(tok.text))} is not YYYY-MM-DD")
            raise

    # --- token helpers ----------------------------------------------------------------------

    def _token(self) -> Token:
        if self.i >= len(self.tokens):
            self._fail("the script ends inside a statement")
        return self.tokens[self.i]

    def _punct(self, *chars: str) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].is_punct(*chars)

    def _word(self) -> str:
        return self._upper(self.i)

    def _upper(self, i: int) -> str:
        return self.tokens[i].upper if i < len(self.tokens) else ""

    def _is_name(self) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].kind in (Kind.WORD, Kind.QUOTED)

    def _name(self) -> str:
        if not self._is_name():
            self._fail("expected a name")
        self.i += 1
        return self.tokens[self.i - 1].name

    def _expect(self, punct: str) -> None:
        if not self._punct(punct):
            self._fail(f"expected `{punct}`")
        self.i += 1

    def _fail(self, problem: str) -> None:
        at = self.tokens[min(self.i, len(self.tokens) - 1)] if self.tokens else None
        where = f"line {_line(self.text, at.pos)}" if at is not None else "the script"
        near = f" (near {shown(self.text[at.pos : at.pos + 30])})" if at is not None else ""
        raise SourceError(f"{where}: {problem}{near}")


def _decode(literal: str) -> str:
    """The value of a string literal as the lexer returned it (quotes included; Cypher's escapes)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2)
        if code is None:
            return _ESCAPES[match.group(3)]
        point = int(code, 16)
        if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:
            raise SourceError(f"string escape \\u{code} is not a character")
        return chr(point)

    return _ESCAPE.sub(one, literal[1:-1])
