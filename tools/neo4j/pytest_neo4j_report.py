"""pytest plugin: count the tests marked `neo4j` that ran and that were skipped.

Loaded by tools/neo4j/run_tests.sh (`-p pytest_neo4j_report`); writes `{"ran": N, "skipped": M}`
to the file named by T2C_NEO4J_REPORT and prints one summary line, so a caller (make test,
CI) can tell whether the Neo4j tests really ran.
"""

from __future__ import annotations

import json
import os

_COUNTS = {"ran": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if "neo4j" not in report.keywords:
        return
    if report.skipped and report.when in ("setup", "call"):
        _COUNTS["skipped"] += 1
    elif report.when == "call":
        _COUNTS["ran"] += 1


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"neo4j-marked tests: {_COUNTS['ran']} ran, {_COUNTS['skipped']} skipped")


def pytest_sessionfinish(session):
    path = os.environ.get("T2C_NEO4J_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(_COUNTS, handle)
