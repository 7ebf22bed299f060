"""Reading Cypher text before any database does: the lexer, the read-only rules, the limits,
the Neo4j-dialect rewrite, and the gate that applies them all to every query a store runs."""

from t2c_lib.cypher.gate import GateVerdict, Refusal, admit, gate_check

__all__ = ["Refusal", "GateVerdict", "admit", "gate_check"]
