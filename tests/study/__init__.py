"""Tests of the study: runs, screening, scoring and the paper's tables (`t2c_lib/study/`, with `t2c_lib/runs/`)."""
