"""Tests of a finished run's reports: analysis, comparison, figures, citations, failures (`t2c_lib/report/`)."""
