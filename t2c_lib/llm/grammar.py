"""A GBNF grammar of the read-only Cypher subset, its terminals taken from the live schema.

Used by `decoding: constrained`: the model's reply is held to `<cypher>QUERY</cypher>`
(the shape `t2c_lib.llm.parse` reads first), where QUERY is reading clauses (MATCH,
OPTIONAL MATCH, WHERE, WITH, UNWIND) ending in RETURN with ORDER BY / SKIP / LIMIT.
No clause that writes (CREATE, MERGE, SET, DELETE, REMOVE, FOREACH), no CALL and no
LOAD CSV can be produced. Labels, relationship types and property names are only the
schema's (back-quoted when they are not plain identifiers); a relationship points one
way or none (`<-->`, which LadybugDB refuses, cannot be written); variables, literals,
operators and a list of common functions are free. One line, single spaces: a blank
line would end the local model's answer. Every repetition is bounded (at most 4 clauses
before RETURN, 3 relationships per pattern, 6 projected items, expressions nested two
deep, 80-character strings), so a small model that loops on a clause is steered into
RETURN and `</cypher>` instead of running to `max_tokens`.
"""

from __future__ import annotations

import hashlib
import re

from t2c_lib.schema import GraphSchema

GRAMMAR_VERSION = "cypher-ro-v3"
FUNCTIONS = (
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "collect",
    "size",
    "toLower",
    "toUpper",
    "toString",
    "toInteger",
    "toFloat",
    "coalesce",
    "labels",
    "type",
    "length",
    "trim",
    "round",
    "abs",
    "id",
    "startNode",
    "endNode",
    "nodes",
    "relationships",
    "head",
    "last",
    "keys",
    "exists",
)

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_STATIC = r"""
root ::= " "? "<cypher>" query "</cypher>"
query ::= (reading " "){0,4} return
reading ::= match | with | unwind
match ::= ("OPTIONAL ")? "MATCH " pattern (", " pattern){0,2} (" " where)?
with ::= "WITH " ("DISTINCT ")? projection (" " order)? (" " where)?
unwind ::= "UNWIND " expr " AS " var
return ::= "RETURN " ("DISTINCT ")? projection (" " order)? (" SKIP " int)? (" LIMIT " int)?
where ::= "WHERE " expr
order ::= "ORDER BY " sortitem (", " sortitem){0,2}
sortitem ::= expr (" ASC" | " DESC")?
projection ::= "*" | item (", " item){0,5}
item ::= expr (" AS " var)?
pattern ::= node (rel node){0,3}
node ::= "(" var? (":" label)? (" "? props)? ")"
rel ::= "<-" relbody? "-" | "-" relbody? "->" | "-" relbody? "-"
relbody ::= "[" var? (":" reltype ("|" reltype){0,2})? ("*" int? (".." int?)?)? (" "? props)? "]"
props ::= "{" prop ": " simple (", " prop ": " simple){0,2} "}"
expr ::= unary (" " binop " " unary){0,3}
unary ::= ("NOT ")? ("-")? postfix
postfix ::= atom ("." prop)? (" IS NULL" | " IS NOT NULL")?
atom ::= simple | call | "(" inner ")" | "[" (inner (", " inner){0,5})? "]" | casex
casex ::= "CASE " ("WHEN " inner " THEN " inner " "){1,3} ("ELSE " inner " ")? "END"
call ::= func "(" ("DISTINCT ")? (inner (", " inner){0,2})? ")"
inner ::= innerterm (" " binop " " innerterm){0,2}
innerterm ::= ("NOT ")? ("-")? (simple | func "(" ("DISTINCT ")? (simple (", " simple){0,2})? ")") ("." prop)?
simple ::= literal | var ("." prop)? | "count(*)"
binop ::= "AND" | "OR" | "XOR" | "=" | "<>" | "<" | ">" | "<=" | ">=" | "+" | "-" | "*" | "/" | "%" | "CONTAINS" | "STARTS WITH" | "ENDS WITH" | "IN" | "=~"
literal ::= int ("." [0-9]{1,6})? | "'" sq{0,80} "'" | "\"" dq{0,80} "\"" | "true" | "false" | "null"
sq ::= [^'\\\n] | "\\" [^\n]
dq ::= [^"\\\n] | "\\" [^\n]
int ::= [0-9]{1,9}
var ::= [a-zA-Z] [a-zA-Z0-9_]{0,15}
"""


def _terminal(name: str) -> str:
    """A GBNF string literal for a schema name, back-quoted in Cypher when it is not a plain identifier."""
    text = name if _PLAIN.match(name) else "`" + name.replace("`", "``") + "`"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _alternatives(names: list[str]) -> str:
    return " | ".join(_terminal(n) for n in sorted(set(names))) if names else '"`__none__`"'


def cypher_grammar(schema: GraphSchema) -> str:
    """The GBNF text for this schema: the static rules plus label, type, property and function terminals."""
    props = {p for label in [*schema.labels, *schema.rel_types] for p in schema.properties_of(label)}
    rules = [
        _STATIC.strip(),
        f"label ::= {_alternatives(schema.labels)}",
        f"reltype ::= {_alternatives(schema.rel_types)}",
        f"prop ::= {_alternatives(sorted(props))}",
        f"func ::= {' | '.join(_terminal(f) for f in FUNCTIONS)}",
    ]
    return "\n".join(rules) + "\n"


def grammar_digest(grammar: str) -> str:
    """sha256 (16 hex digits) of a grammar: what the cache key and the manifest record."""
    return hashlib.sha256(f"{GRAMMAR_VERSION}\n{grammar}".encode()).hexdigest()[:16]
