"""Tests of the evaluation metrics (`t2c_lib/metrics/`)."""
