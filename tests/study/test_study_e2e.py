"""The study end to end with a real packaged model (the smallest, Gemma 3 270M) and the embedded store.

A run is killed with SIGKILL in the middle of a configuration and started again; it must
finish with exactly the results of an uninterrupted run (no question lost or duplicated),
and a rerun on a warm response cache must make zero model calls and write the same bytes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

pytestmark = pytest.mark.slow

PARAMS = {
    "run_id": "e2e",
    "dataset": "kurikulum",
    "store": "ladybug",
    "model": "local/gemma-3-270m",
    "prompt_types": ["Zero-Shot"],
    "schema_formats": ["only_paths"],
    "modes": ["agentic", "single-pass"],  # the old key and name: agentic = feedback
    "max_iterations": 2,
    "limit": 3,
    "max_tokens": 48,
}


def t2c(args: list[str], env: dict[str, str], **kwargs) -> subprocess.Popen | subprocess.CompletedProcess:
    command = [sys.executable, "-m", "t2c_lib.cli", *args]
    if kwargs.pop("background", False):
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("study")
    params_file = base / "e2e.yaml"
    params_file.write_text(yaml.safe_dump(PARAMS))
    env = {
        **os.environ,
        "T2C_CACHE_DIR": str(base / "cache"),
        "T2C_RESULTS_DIR": str(base / "killed"),
        "T2C_FIGURES_DIR": str(base / "figures"),
    }
    return base, params_file, env


def test_killed_run_resumes_to_the_same_results(setup):
    base, params_file, env = setup
    cell = base / "killed" / "e2e" / "feedback" / "Zero-Shot_Only-Paths"
    # 1. cold cache: kill the agentic configuration as soon as its first attempt is on disk
    proc = t2c(["run", "--params", str(params_file), "--mode", "agentic"], env, background=True)
    deadline = time.monotonic() + 600
    while not lines(cell / "attempts.jsonl") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, f"the run ended before it could be killed: {proc.stdout.read().decode()[-2000:]}"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished_before = {r["question_id"] for r in lines(cell / "questions.jsonl")}
    assert len(finished_before) < 3, "killed mid-configuration"
    # 2. rerun: resumes, completes both modes, evaluates, analyzes
    for args in (["run"], ["evaluate"], ["analyze"]):
        done = t2c([*args, "--params", str(params_file)], env)
        assert done.returncode == 0, done.stdout + done.stderr
    resumed_q = lines(cell / "questions.jsonl")
    assert sorted(r["question_id"] for r in resumed_q) == sorted({r["question_id"] for r in resumed_q})
    assert len(resumed_q) == 3
    attempts = lines(cell / "attempts.jsonl")
    keys = [(a["question_id"], a["iteration"]) for a in attempts]
    assert len(keys) == len(set(keys)), "an attempt was duplicated"
    for record in resumed_q:
        mine = sorted(a["iteration"] for a in attempts if a["question_id"] == record["question_id"])
        assert mine == list(range(1, len(mine) + 1)) and 1 <= len(mine) <= 2
        assert record["iterations"] == len(mine)

    # 3. an uninterrupted run into a fresh results folder, on the now-warm cache
    fresh_env = {**env, "T2C_RESULTS_DIR": str(base / "fresh"), "T2C_FIGURES_DIR": str(base / "figures2")}
    run = t2c(["run", "--params", str(params_file)], fresh_env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("model calls 0,") == 2, run.stdout  # both modes served from the cache
    for args in (["evaluate"], ["analyze"]):
        assert t2c([*args, "--params", str(params_file)], fresh_env).returncode == 0
    for relative in (
        "feedback/Zero-Shot_Only-Paths/metrics.csv",
        "single-pass/Zero-Shot_Only-Paths/metrics.csv",
        "feedback/Zero-Shot_Only-Paths/summary.json",
        "feedback/Zero-Shot_Only-Paths/attempt_scores.csv",
        "gold_audit.csv",
        "analysis/comparison.csv",
        "analysis/strata.csv",
        "analysis/strategies.csv",
        "analysis/validator_audit.csv",
    ):
        killed = (base / "killed" / "e2e" / relative).read_bytes()
        fresh = (base / "fresh" / "e2e" / relative).read_bytes()
        assert killed == fresh, relative
    for figure in sorted((base / "figures" / "e2e").iterdir()):
        assert figure.read_bytes() == (base / "figures2" / "e2e" / figure.name).read_bytes(), figure.name


def test_single_pass_pairs_with_the_agentic_first_attempt(setup):
    base, _, _ = setup
    agentic = {
        a["question_id"]: a
        for a in lines(base / "fresh" / "e2e" / "feedback" / "Zero-Shot_Only-Paths" / "attempts.jsonl")
        if a["iteration"] == 1
    }
    single = lines(base / "fresh" / "e2e" / "single-pass" / "Zero-Shot_Only-Paths" / "attempts.jsonl")
    assert len(single) == 3
    for attempt in single:
        twin = agentic[attempt["question_id"]]
        assert (attempt["prompt_hash"], attempt["raw_response"], attempt["query"]) == (
            twin["prompt_hash"],
            twin["raw_response"],
            twin["query"],
        )
        assert attempt["cached"]
