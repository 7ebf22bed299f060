"""Tests of the datasets and their files (`t2c_lib/datasets.py`, `data/`)."""
