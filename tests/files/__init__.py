"""Tests of the file formats: bounded YAML, hostile values written as data, gzip (`t2c_lib/files/`)."""
