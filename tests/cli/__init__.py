"""Tests of the `t2c` command line (`t2c_lib/cli/`)."""
