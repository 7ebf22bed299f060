"""Tests of Cypher text before any database: the lexer, the gate, the dialect rewrite, the limits (`t2c_lib/cypher/`)."""
