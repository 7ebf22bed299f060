"""Tests of `t2c dataset import` (`t2c_lib/dataset_import/`)."""
