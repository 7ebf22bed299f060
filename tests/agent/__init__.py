"""Tests of the agent: the loop, its strategies, the corrector and the syntax fixes (`t2c_lib/agent/`)."""
