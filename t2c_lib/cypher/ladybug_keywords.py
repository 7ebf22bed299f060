"""LadybugDB's reserved words: names that need backticks on the embedded store (GENERATED, do not edit).

Made by `tools/ladybug_keywords.py` from the parser of ladybug 0.22.0: each word is refused by
that parser as a bare label, relationship type, property or map key, which Neo4j accepts (`Order`,
`Group`, `End`); the Neo4j-dialect rewrite (`cypher/dialect.py`) backticks them in those positions.
Compared case-insensitively (the parser's keywords are). `tests/cypher/test_keyword_labels.py` checks
that this list is what the installed parser says.
"""

from __future__ import annotations

LADYBUG_VERSION = "0.22.0"
"""The ladybug version whose parser was probed."""

KEYWORDS = frozenset(
    {
        "ACYCLIC", "ALL", "AND", "ANY", "ASC", "ASCENDING", "CASE", "CAST",
        "COLUMN", "COMMIT_SKIP_CHECKPOINT", "CREATE", "CSR", "DBTYPE", "DEFAULT", "DESC", "DESCENDING",
        "DISTINCT", "ELSE", "END", "ENDS", "EXISTS", "FALSE", "FOR", "GLOB",
        "GROUP", "HEADERS", "HINT", "IN", "INDEX", "INSTALL", "JOIN", "MACRO",
        "MULTI_JOIN", "NONE", "NOT", "NULL", "ON", "ONLY", "OPTIONAL", "OPTIONS",
        "OR", "ORDER", "PRIMARY", "PROFILE", "ROLLBACK_SKIP_CHECKPOINT", "SHORTEST", "SINGLE", "SORTED",
        "STARTS", "TABLE", "THEN", "TRAIL", "TRUE", "UNION", "UNWIND", "WHEN",
        "WHERE", "WITH", "WSHORTEST", "XOR",
    }
)  # fmt: skip
"""Upper-case words LadybugDB's parser refuses as a bare name."""
