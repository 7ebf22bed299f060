"""Tests of the feedback texts a failed attempt gets (`t2c_lib/feedback/`)."""
