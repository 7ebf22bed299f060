"""The `t2c` command line: real subprocesses, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # subprocesses: the t2c command


def t2c(*args: str, cache_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "T2C_CACHE_DIR": str(cache_dir)}
    return subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cli-cache")


def test_load_schema_and_query(cache_dir):
    loaded = t2c("db", "load", "--dataset", "kurikulum", cache_dir=cache_dir)
    assert loaded.returncode == 0, loaded.stderr
    assert "loaded kurikulum into ladybug" in loaded.stdout
    schema = t2c("db", "schema", "--dataset", "kurikulum", "--format", "only_paths", cache_dir=cache_dir)
    assert schema.returncode == 0
    assert "- (:MK)-[:PREREQUISITE]->(:MK)" in schema.stdout
    assert "{" not in schema.stdout
    as_json = t2c(
        "db", "query", "--json", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.nama, m.sks", cache_dir=cache_dir
    )
    assert as_json.returncode == 0, as_json.stderr
    payload = json.loads(as_json.stdout)
    assert payload["columns"] == ["m.nama", "m.sks"] and payload["rows"][0][0] == "Basis Data"
    table = t2c("db", "query", "MATCH (m:MK) RETURN count(m) AS n", cache_dir=cache_dir)
    assert table.returncode == 0 and "(1 row)" in table.stdout


@pytest.mark.parametrize(
    "args, reason",
    [
        (["db", "schema", "--dataset", "nope"], "no such dataset"),
        (["db", "query", "MATCH (n:MK RETURN n"], "Parser exception"),
        (["db", "query", "CREATE (:MK {kode: 'X'})"], "refused by the read-only guard"),
    ],
)
def test_errors_are_one_line_and_non_zero(cache_dir, args, reason):
    done = t2c(*args, cache_dir=cache_dir)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("t2c: error:"), done.stderr
    assert reason.lower() in lines[0].lower()


def test_malformed_dataset_path_gives_file_and_row(cache_dir, tmp_path):
    broken = tmp_path / "tiny"
    shutil.copytree(ROOT / "tests" / "fixtures" / "tiny", broken)
    (broken / "nodes" / "Movie.csv").write_text("id,title,released\nm1,The Matrix,ninety-nine\n")
    done = t2c("db", "load", "--dataset", str(broken), cache_dir=cache_dir)
    assert done.returncode == 1
    assert "nodes/Movie.csv, row 1: column 'released' expects INTEGER" in done.stderr
