"""t2c: agentic Text2Cypher research package (validate, feed back, repair)."""

__version__ = "0.1.0"
