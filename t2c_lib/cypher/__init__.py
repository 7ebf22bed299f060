"""Reading Cypher text before any database does: the lexer, the read-only rules, the limits,
the Neo4j-dialect rewrite, and the gate that applies them all to every query a store runs."""

from t2c_lib.cypher.gate import Refusal, Verdict, admit, judge

__all__ = ["Refusal", "Verdict", "admit", "judge"]
