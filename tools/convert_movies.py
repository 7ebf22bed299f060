#!/usr/bin/env python3
"""Convert the Neo4j movies script (`movies.cypher`) into the t2c dataset format (deterministic).

The script is one Cypher `CREATE` statement of node patterns `(Var:Label {props})` and
relationship patterns `(a)-[:TYPE {props}]->(b)`, preceded by Neo4j 5 constraint/index
statements. This tool parses exactly that subset itself (string, integer, float, boolean
and list literals) and writes:

    schema.yaml        property types inferred from the literals, endpoints from the patterns
    nodes/<Label>.csv  one row per node in script order; `id` = the node's Cypher variable
    rels/<TYPE>.csv    one row per relationship in script order
    ground_truth.csv   a byte-for-byte copy of the benchmark's questions.csv

    python tools/convert_movies.py                       # from data/movies/source into data/movies
    python tools/convert_movies.py --source DIR --out DIR

data/movies/source/ holds byte copies of the benchmark's movies.cypher, questions.csv and
SOURCE.md (from /work/shared/benchmarks/movies), so the conversion runs from the checkout.

dataset.yaml and examples.yaml are written by hand and left alone. The committed files
are the data; rerunning this tool must reproduce them byte for byte (tests check it).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "data" / "movies"
DEFAULT_SOURCE = DEFAULT_OUT / "source"  # byte copies of the benchmark files (see source/SOURCE.md)
SCRIPT_NAME = "movies.cypher"
QUESTIONS_NAME = "questions.csv"

# --- tokens ---------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
      (?P<ws>\s+|//[^\n]*)
    | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*|`[^`]+`)
    | (?P<arrow>->|<-)
    | (?P<punct>[()\[\]{}:,;\-.<>=])
    """,
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'", '"': '"'}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    line: int


class ScriptError(ValueError):
    """The script uses something outside the supported CREATE subset; names the line."""


def tokenize(text: str) -> list[Token]:
    """Split Cypher text into tokens (whitespace and // comments dropped)."""
    tokens, pos, line = [], 0, 1
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ScriptError(f"line {line}: unexpected character {text[pos]!r}")
        kind = match.lastgroup or ""
        if kind != "ws":
            tokens.append(Token(kind, match.group(), line))
        line += match.group().count("\n")
        pos = match.end()
    return tokens


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


# --- parse ----------------------------------------------------------------------------------


@dataclass
class Node:
    var: str
    label: str
    props: dict[str, Any]


@dataclass
class Rel:
    type: str
    src: str
    dst: str
    props: dict[str, Any]


@dataclass
class Graph:
    """Nodes and relationships in script order; property names in order of first appearance."""

    nodes: dict[str, Node] = field(default_factory=dict)
    rels: list[Rel] = field(default_factory=list)


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.graph = Graph()

    # token helpers
    def peek(self, offset: int = 0) -> Token | None:
        i = self.pos + offset
        return self.tokens[i] if i < len(self.tokens) else None

    def next(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise ScriptError("unexpected end of script")
        self.pos += 1
        return tok

    def expect(self, text: str) -> Token:
        tok = self.next()
        if tok.text != text:
            raise ScriptError(f"line {tok.line}: expected {text!r}, found {tok.text!r}")
        return tok

    def at_keyword(self, word: str, offset: int = 0) -> bool:
        tok = self.peek(offset)
        return tok is not None and tok.kind == "name" and tok.text.upper() == word

    # grammar
    def parse(self) -> Graph:
        while self.peek() is not None:
            if self.peek().text == ";":
                self.next()
            elif self.at_keyword("CREATE") and (self.at_keyword("CONSTRAINT", 1) or self.at_keyword("INDEX", 1)):
                self.skip_statement()
            elif self.at_keyword("CREATE"):
                self.next()
                self.pattern()
                while self.peek() is not None and self.peek().text == ",":
                    self.next()
                    self.pattern()
            else:
                tok = self.peek()
                raise ScriptError(f"line {tok.line}: expected CREATE, found {tok.text!r}")
        return self.graph

    def skip_statement(self) -> None:
        """Schema statements (constraints, indexes) have no data: skip to the next `;`."""
        while self.peek() is not None and self.next().text != ";":
            pass

    def pattern(self) -> None:
        left = self.node()
        while self.peek() is not None and self.peek().text in ("-", "<-"):
            start = self.next()
            self.expect("[")
            self.expect(":")
            rel_type = self.name()
            props = self.map() if self.peek() is not None and self.peek().text == "{" else {}
            self.expect("]")
            if start.text == "-":
                self.expect("->")
            else:
                self.expect("-")
            right = self.node()
            src, dst = (left, right) if start.text == "-" else (right, left)
            self.graph.rels.append(Rel(rel_type, src, dst, props))
            left = right

    def node(self) -> str:
        """A node pattern; creates the node if it has a label, else refers to a known variable."""
        open_tok = self.expect("(")
        var = self.name()
        label = None
        if self.peek().text == ":":
            self.next()
            label = self.name()
        props = self.map() if self.peek().text == "{" else {}
        self.expect(")")
        if label is None:
            if props:
                raise ScriptError(f"line {open_tok.line}: ({var} {{...}}) has properties but no label")
            if var not in self.graph.nodes:
                raise ScriptError(f"line {open_tok.line}: ({var}) refers to a node that was not created before")
        else:
            if var in self.graph.nodes:
                raise ScriptError(f"line {open_tok.line}: variable {var!r} is created twice")
            self.graph.nodes[var] = Node(var, label, props)
        return var

    def name(self) -> str:
        tok = self.next()
        if tok.kind != "name":
            raise ScriptError(f"line {tok.line}: expected a name, found {tok.text!r}")
        return tok.text.strip("`")

    def map(self) -> dict[str, Any]:
        self.expect("{")
        out: dict[str, Any] = {}
        while self.peek().text != "}":
            key_tok = self.peek()
            key = self.name()
            self.expect(":")
            if key in out:
                raise ScriptError(f"line {key_tok.line}: property {key!r} given twice")
            out[key] = self.value()
            if self.peek().text == ",":
                self.next()
            elif self.peek().text != "}":
                raise ScriptError(f"line {self.peek().line}: expected ',' or '}}', found {self.peek().text!r}")
        self.expect("}")
        return out

    def value(self) -> Any:
        tok = self.next()
        if tok.kind == "string":
            return _unquote(tok.text)
        if tok.kind == "number":
            return float(tok.text) if any(c in tok.text for c in ".eE") else int(tok.text)
        if tok.kind == "name" and tok.text.lower() in ("true", "false"):
            return tok.text.lower() == "true"
        if tok.text == "[":
            items = []
            while self.peek().text != "]":
                items.append(self.value())
                if self.peek().text == ",":
                    self.next()
            self.expect("]")
            return items
        raise ScriptError(f"line {tok.line}: unsupported literal {tok.text!r} (strings, numbers, booleans, lists only)")


def parse_script(text: str) -> Graph:
    """Parse the CREATE subset of a Cypher script into nodes and relationships."""
    return _Parser(tokenize(text)).parse()


# --- types and output -----------------------------------------------------------------------


def literal_type(value: Any) -> str:
    """The dataset property type of one literal (`data/README.md`)."""
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, list):
        inner = {literal_type(v) for v in value}
        if len(inner) > 1 and inner != {"INTEGER", "FLOAT"}:
            raise ScriptError(f"list {value!r} mixes types {sorted(inner)}")
        base = "FLOAT" if "FLOAT" in inner else (inner.pop() if inner else "STRING")
        if base not in ("STRING", "INTEGER", "FLOAT"):
            raise ScriptError(f"list {value!r}: lists of {base} are not supported")
        return f"LIST<{base}>"
    raise ScriptError(f"unsupported value {value!r}")


def _merge_types(owner: str, seen: dict[str, str], props: dict[str, Any]) -> None:
    """Record each property's type in first-appearance order; INTEGER widens to FLOAT, else conflicts fail."""
    for key, value in props.items():
        new = literal_type(value)
        old = seen.setdefault(key, new)
        if old == new:
            continue
        widened = {
            ("INTEGER", "FLOAT"): "FLOAT",
            ("FLOAT", "INTEGER"): "FLOAT",
            ("LIST<INTEGER>", "LIST<FLOAT>"): "LIST<FLOAT>",
            ("LIST<FLOAT>", "LIST<INTEGER>"): "LIST<FLOAT>",
        }
        if (old, new) not in widened:
            raise ScriptError(f"{owner}.{key} is {old} in one place and {new} in another")
        seen[key] = widened[(old, new)]


@dataclass
class Schema:
    node_props: dict[str, dict[str, str]]
    rel_props: dict[str, dict[str, str]]
    endpoints: dict[str, list[tuple[str, str]]]


def infer_schema(graph: Graph) -> Schema:
    node_props: dict[str, dict[str, str]] = {}
    for node in graph.nodes.values():
        _merge_types(node.label, node_props.setdefault(node.label, {}), node.props)
    rel_props: dict[str, dict[str, str]] = {}
    endpoints: dict[str, list[tuple[str, str]]] = {}
    for rel in graph.rels:
        _merge_types(rel.type, rel_props.setdefault(rel.type, {}), rel.props)
        pair = (graph.nodes[rel.src].label, graph.nodes[rel.dst].label)
        if pair not in endpoints.setdefault(rel.type, []):
            endpoints[rel.type].append(pair)
    return Schema(node_props, rel_props, endpoints)


def cell(value: Any, ptype: str) -> str:
    """One CSV cell: empty = absent; lists as compact JSON arrays; floats as Python repr."""
    if value is None:
        return ""
    if ptype.startswith("LIST<"):
        items = [float(v) for v in value] if ptype == "LIST<FLOAT>" else value
        return json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    if ptype == "BOOLEAN":
        return "true" if value else "false"
    if ptype == "FLOAT":
        return repr(float(value))
    return str(value)


def _write_csv(path: Path, header: list[str], rows: Iterator[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def _flow_map(props: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in props.items()) + "}"


DESCRIPTIONS = {
    "Movie": "A film.",
    "Movie.title": "The film's title, e.g. 'The Matrix'.",
    "Movie.released": "The year the film was released, e.g. 1999.",
    "Movie.tagline": "The film's advertising slogan; absent for some films.",
    "Person": "A person who acted in, directed, produced, wrote or reviewed films, or follows another person.",
    "Person.name": "The person's full name, e.g. 'Keanu Reeves'.",
    "Person.born": "The year the person was born, e.g. 1964; absent for some people.",
    "ACTED_IN": "The person acted in the film.",
    "ACTED_IN.roles": "The characters the actor played in the film, e.g. ['Neo'].",
    "DIRECTED": "The person directed the film.",
    "PRODUCED": "The person produced the film.",
    "WROTE": "The person wrote the film's screenplay.",
    "FOLLOWS": "The first person follows the second (a reviewer following another reviewer).",
    "REVIEWED": "The person reviewed the film.",
    "REVIEWED.summary": "A short summary of the review, e.g. 'An amazing journey'.",
    "REVIEWED.rating": "The review's rating, an integer from 0 to 100.",
}
"""Hand-written meanings of the schema elements (`Label`, `TYPE`, `Label.property`), kept in schema.yaml."""


def _description_lines(name: str, props: dict[str, str]) -> list[str]:
    lines = [f"    description: {DESCRIPTIONS[name]}"] if name in DESCRIPTIONS else []
    described = [p for p in props if f"{name}.{p}" in DESCRIPTIONS]
    if described:
        lines.append("    property_descriptions:")
        lines += [f"      {p}: {DESCRIPTIONS[f'{name}.{p}']}" for p in described]
    return lines


def render_schema_yaml(schema: Schema, source_note: str) -> str:
    lines = [f"# {source_note}", "# Generated by tools/convert_movies.py; do not edit by hand.", "nodes:"]
    for label, props in schema.node_props.items():
        lines += [f"  {label}:", f"    properties: {_flow_map(props)}", *_description_lines(label, props)]
    lines.append("relationships:")
    for rel_type, props in schema.rel_props.items():
        pairs = ", ".join(f"[{a}, {b}]" for a, b in schema.endpoints[rel_type])
        lines += [
            f"  {rel_type}:",
            f"    endpoints: [{pairs}]",
            f"    properties: {_flow_map(props)}",
            *_description_lines(rel_type, props),
        ]
    return "\n".join(lines) + "\n"


def write_dataset(graph: Graph, out: Path, questions: Path) -> dict[str, int]:
    """Write schema.yaml, nodes/, rels/ and ground_truth.csv under `out`; return counts."""
    schema = infer_schema(graph)
    for sub in ("nodes", "rels"):
        if (out / sub).is_dir():
            for old in (out / sub).glob("*.csv"):
                old.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / "schema.yaml").write_text(
        render_schema_yaml(
            schema, "The classic Neo4j movies graph (neo4j-graph-examples/movies, scripts/movies.cypher)."
        ),
        encoding="utf-8",
    )
    counts: dict[str, int] = {}
    for label, props in schema.node_props.items():
        members = [n for n in graph.nodes.values() if n.label == label]
        _write_csv(
            out / "nodes" / f"{label}.csv",
            ["id", *props],
            ([n.var, *(cell(n.props.get(p), t) for p, t in props.items())] for n in members),
        )
        counts[label] = len(members)
    for rel_type, props in schema.rel_props.items():
        members = [r for r in graph.rels if r.type == rel_type]
        _write_csv(
            out / "rels" / f"{rel_type}.csv",
            ["from_label", "from_id", "to_label", "to_id", *props],
            (
                [
                    graph.nodes[r.src].label,
                    r.src,
                    graph.nodes[r.dst].label,
                    r.dst,
                    *(cell(r.props.get(p), t) for p, t in props.items()),
                ]
                for r in members
            ),
        )
        counts[rel_type] = len(members)
    shutil.copyfile(questions, out / "ground_truth.csv")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--source", type=Path, default=DEFAULT_SOURCE, help=f"folder with {SCRIPT_NAME} and {QUESTIONS_NAME}"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="dataset folder to write into")
    args = parser.parse_args(argv)
    script = args.source / SCRIPT_NAME
    if not script.is_file():
        print(f"error: {script} not found (pass --source)", file=sys.stderr)
        return 2
    questions = args.source / QUESTIONS_NAME
    if not questions.is_file():
        print(f"error: {questions} not found", file=sys.stderr)
        return 2
    try:
        graph = parse_script(script.read_text(encoding="utf-8"))
        counts = write_dataset(graph, args.out, questions)
    except ScriptError as exc:
        print(f"error: {script}: {exc}", file=sys.stderr)
        return 1
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
