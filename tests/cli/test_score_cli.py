"""`t2c score FILE`: real subprocesses on CSV files of (gold, predicted) pairs."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # subprocesses: the t2c command

VECTOR_GOLD = "MATCH (n:MK {nama: 'Aljabar Linear'}) RETURN n.sks"
VECTOR_PRED = "MATCH (m:MK) WHERE m.nama = 'Aljabar Linear' RETURN m.sks"


def t2c(*args: str, cache_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "T2C_CACHE_DIR": str(cache_dir)}
    return subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )


def write_pairs(path: Path, rows: list[dict[str, str]], bom: bool = False) -> Path:
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture()
def pairs(tmp_path) -> Path:
    return write_pairs(
        tmp_path / "pairs.csv",
        [
            {"id": "v1", "ref": VECTOR_GOLD, "sys": VECTOR_PRED},
            {
                "id": "same",
                "ref": "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks",
                "sys": "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks AS sks",
            },
            {"id": "write", "ref": "MATCH (m:MK) RETURN count(m)", "sys": "CREATE (n:MK {nama: 'x'}) RETURN n"},
            {"id": "none", "ref": "MATCH (m:MK) RETURN count(m)", "sys": ""},
        ],
        bom=True,
    )


def read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_text_only_needs_no_database(pairs, tmp_path):
    out = tmp_path / "scored.csv"
    cache = tmp_path / "empty-cache"
    run = t2c(
        "score",
        str(pairs),
        "--gold-column",
        "ref",
        "--pred-column",
        "sys",
        "--preset",
        "kg-axel",
        "--output",
        str(out),
        cache_dir=cache,
    )
    assert run.returncode == 0, run.stderr
    assert "4 pairs scored with preset kg-axel" in run.stdout and "jaccard_cypher" in run.stdout
    rows = read(out)
    assert list(rows[0]) == ["id", "ref", "sys", "bleu", "rouge_l_f1", "jaro_winkler", "jaccard_cypher"]
    first = rows[0]
    assert float(first["bleu"]) == pytest.approx(9.460044053305668e-155, rel=1e-12)  # the thesis's stored vector
    assert float(first["jaro_winkler"]) == pytest.approx(0.8899454343522141, rel=1e-12)
    assert float(first["jaccard_cypher"]) == pytest.approx(0.6363636363636364, rel=1e-12)
    assert rows[3]["bleu"] == "0.0"
    assert not cache.exists()  # no store was opened


def test_with_a_dataset_runs_both_queries(pairs, tmp_path):
    out = tmp_path / "scored.csv"
    run = t2c(
        "score",
        str(pairs),
        "--gold-column",
        "ref",
        "--pred-column",
        "sys",
        "--dataset",
        "kurikulum",
        "--output",
        str(out),
        cache_dir=tmp_path / "cache",
    )
    assert run.returncode == 0, run.stderr
    rows = {r["id"]: r for r in read(out)}
    assert [rows["v1"][c] for c in ("pass_at_1", "jaccard_output", "kg_valid")] == ["1.0", "1.0", "1.0"]
    assert rows["same"]["pass_at_1"] == "1.0"
    assert rows["write"]["pass_at_1"] == "0.0" and rows["write"]["kg_valid"] == "0.0"  # refused, never written
    assert rows["none"]["execution_error"] == "generated query failed: empty query"
    assert "pass_at_1            0.5000" in run.stdout


def test_presets_differ_on_text_metrics(pairs, tmp_path):
    outs = {}
    for preset in ("t2c", "kg-axel"):
        outs[preset] = tmp_path / f"{preset}.csv"
        run = t2c(
            "score",
            str(pairs),
            "--gold-column",
            "ref",
            "--pred-column",
            "sys",
            "--preset",
            preset,
            "-o",
            str(outs[preset]),
            cache_dir=tmp_path / "c",
        )
        assert run.returncode == 0, run.stderr
    assert read(outs["t2c"])[0]["bleu"] != read(outs["kg-axel"])[0]["bleu"]


def test_bad_input_is_named(pairs, tmp_path):
    missing = t2c("score", str(pairs), cache_dir=tmp_path)  # default columns gold / predicted are not there
    assert missing.returncode == 1
    assert "no column(s) 'gold', 'predicted'; columns are: id, ref, sys" in missing.stderr
    nofile = t2c("score", str(tmp_path / "nope.csv"), cache_dir=tmp_path)
    assert nofile.returncode == 1 and "file not found" in nofile.stderr
    preset = t2c("score", str(pairs), "--preset", "bleu", cache_dir=tmp_path)
    assert preset.returncode == 2 and "kg-axel" in preset.stderr
    clash = write_pairs(tmp_path / "clash.csv", [{"gold": "MATCH (n) RETURN n", "predicted": "x", "bleu": "1"}])
    run = t2c("score", str(clash), cache_dir=tmp_path)
    assert run.returncode == 1 and "already has score column(s) bleu" in run.stderr
