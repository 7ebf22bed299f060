"""The committed published runs (`results/published/*/`) are what their `published.json` lists, under the cap.

A published run is checked by readers through its index: every file with its size and sha256. A file
changed, added or removed by hand after publishing would make the index lie; this catches it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from t2c_lib.publish.publish import INDEX_FILE, PUBLISHED_CAP_BYTES, tree_bytes
from t2c_lib.runs.layout import ATTEMPTS_FILE
from tests.helpers import ROOT

PUBLISHED = ROOT / "results" / "published"
RUNS = sorted(p for p in PUBLISHED.iterdir() if p.is_dir()) if PUBLISHED.is_dir() else []


def test_there_are_committed_published_runs():
    assert {"quick", "thesis"} <= {run.name for run in RUNS}


@pytest.mark.parametrize("run", RUNS, ids=[run.name for run in RUNS])
def test_every_file_of_a_published_run_is_listed_with_its_size_and_sha256(run: Path):
    index = json.loads((run / INDEX_FILE).read_text(encoding="utf-8"))
    on_disk = {p.relative_to(run).as_posix(): p for p in run.rglob("*") if p.is_file()}
    on_disk.pop(INDEX_FILE)
    assert set(index["files"]) == set(on_disk)
    for name, path in on_disk.items():
        data = path.read_bytes()
        assert index["files"][name] == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}, name
    assert not any(Path(name).name == ATTEMPTS_FILE for name in on_disk), "attempt logs are published gzipped"


def test_all_published_runs_stay_under_the_cap():
    assert 0 < tree_bytes(PUBLISHED) < PUBLISHED_CAP_BYTES
