"""Tests of the validator chain (`t2c_lib/validation/`)."""
