"""Tests of the study: runs, scoring, analysis, figures and tables (`t2c_lib/study/`)."""
