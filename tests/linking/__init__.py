"""Tests of schema linking (`t2c_lib/linking/`)."""
