"""Tests of published runs (`t2c_lib/publish/`, `results/published/`)."""
