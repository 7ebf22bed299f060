"""`make all` on a tiny grid with the default model (Qwen2.5-Coder-1.5B-Instruct), in two lanes.

One configuration, single-pass and feedback, two questions: every notebook runs, every
table and figure is written, the records name the default model by its weights, and a
rerun on the warm response cache makes no model call and gives the same records and the
same scored tables, byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from t2c_lib.llm.registry import QWEN_1_5B
from tests.helpers import ROOT

pytestmark = pytest.mark.slow

RUN_ID = "test-make-all-default-model"
PARAMS = {
    "run_id": RUN_ID,
    "dataset": "kurikulum",
    "store": "ladybug",
    "model": "local",
    "prompt_types": ["Few-Shot"],
    "schema_formats": ["nodes_paths"],
    "strategies": ["single-pass", "feedback"],
    "max_iterations": 2,
    "limit": 2,
    "sample_seed": 13,
    "max_tokens": 128,
    "workers": 2,
}


def make_all(params_file: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "all", f"PARAMS={params_file}", "JOBS=1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def records(run_dir: Path) -> dict[str, object]:
    """Every questions.jsonl and attempts.jsonl of the run without times taken, and every metrics.csv.

    Lanes append a record when its question or attempt finishes, so the line order of the
    logs follows completion; the rows are compared in question order. The scored tables
    are compared byte for byte.
    """
    out: dict[str, object] = {}
    for path in sorted(run_dir.rglob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for row in rows:
            for key in ("model_latency_s", "validation_s", "model_time_s", "validation_time_s", "cached"):
                row.pop(key, None)
            for step in row.get("validations", []):
                step.pop("elapsed_s", None)
                step["message"] = re.sub(r"ran in [0-9.]+ s", "ran in _ s", step.get("message", ""))
        rows.sort(key=lambda r: (r.get("question_id", ""), r.get("iteration", 0)))
        out[str(path.relative_to(run_dir))] = rows
    for path in sorted(run_dir.rglob("metrics.csv")):
        out[str(path.relative_to(run_dir))] = path.read_bytes()
    return out


@pytest.fixture()
def clean_run():
    dirs = [ROOT / "results" / RUN_ID, ROOT / "figures" / RUN_ID]
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    yield ROOT / "results" / RUN_ID
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


def test_make_all_with_the_default_model_on_a_tiny_grid(tmp_path: Path, clean_run: Path) -> None:
    params_file = tmp_path / f"{RUN_ID}.yaml"
    params_file.write_text(yaml.safe_dump(PARAMS))
    env = {**os.environ, "T2C_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("T2C_MODEL", None)
    env.pop("T2C_LLM_BASE_URL", None)

    first = make_all(params_file, env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    run_dir = clean_run
    for strategy in ("single-pass", "feedback"):
        rows = [json.loads(x) for x in (run_dir / strategy / "Few-Shot_Nodes+Paths" / "questions.jsonl").open()]
        assert len(rows) == 2 and all(r["status"] in ("SUCCESS", "FAILED") for r in rows), rows
    manifest = json.loads((run_dir / "feedback" / "Few-Shot_Nodes+Paths" / "manifest.json").read_text())
    assert QWEN_1_5B.model_id in json.dumps(manifest)
    assert "lanes=2" in json.dumps(manifest), "the lanes are part of the recorded settings"
    assert list((ROOT / "figures" / RUN_ID).glob("*.png")) or list((ROOT / "figures" / RUN_ID).glob("*.pdf"))
    before = records(run_dir)

    shutil.rmtree(run_dir)
    shutil.rmtree(ROOT / "figures" / RUN_ID, ignore_errors=True)
    again = make_all(params_file, env)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    # the notebooks' own output (the runner's "model calls N" line) goes to their logs, not to make's short log
    inference_logs = sorted((run_dir / "notebooks").glob("01_inference__*.log"))
    assert len(inference_logs) == 2, inference_logs
    for log in inference_logs:
        assert "model calls 0," in log.read_text(encoding="utf-8"), log
    assert records(run_dir) == before
