"""Tests of the graph stores and their walls (`t2c_lib/graph/`)."""
