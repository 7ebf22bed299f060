"""params/thesis-ollama.yaml end to end against a loopback OpenAI-compatible server.

llama.cpp's server (llama-cpp-python) stands in for Ollama: it serves the smallest packaged
model (Gemma 3 270M) under the name the parameter file asks for (`qwen2.5-coder:3b`), at the address
`T2C_LLM_BASE_URL` points to, exactly as `ollama serve` would. The run is cut down to two
questions of one configuration; inference, evaluation and analysis run through the CLI,
and the analysis must show both scoring presets and the thesis's published numbers.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest
import yaml

from tests.helpers import ROOT

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint():
    """`python -m llama_cpp.server` on 127.0.0.1 serving the local model as qwen2.5-coder:3b."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]")
    from t2c_lib.llm.local import model_path

    port = _free_port()
    cmd = [
        sys.executable,
        str(ROOT / "tests" / "helpers" / "llama_server.py"),
        "--model",
        str(model_path("local/gemma-3-270m")),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        "2",
        "--seed",
        "42",
        "--model_alias",
        "qwen2.5-coder:3b",
        "--verbose",
        "False",
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log.read()[-2000:]}")
        try:
            urllib.request.urlopen(f"{base}/models", timeout=1).read()
            break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start within 90 s")
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def t2c(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200
    )


def test_thesis_ollama_params_run_against_an_openai_compatible_server(endpoint, tmp_path):
    params = yaml.safe_load((ROOT / "params" / "thesis-ollama.yaml").read_text(encoding="utf-8"))
    assert params["model"] == "qwen2.5-coder:3b" and params["scoring"] == "kg-axel"
    params.update(
        run_id="ollama-e2e", prompt_types=["Zero-Shot"], schema_formats=["full_schema"], limit=2, max_tokens=64
    )
    params_file = tmp_path / "thesis-ollama-small.yaml"
    params_file.write_text(yaml.safe_dump(params), encoding="utf-8")
    env = {
        **os.environ,
        "T2C_LLM_BASE_URL": endpoint,
        "T2C_LLM_MAX_ATTEMPTS": "2",
        "T2C_CACHE_DIR": str(tmp_path / "cache"),
        "T2C_RESULTS_DIR": str(tmp_path / "results"),
        "T2C_FIGURES_DIR": str(tmp_path / "figures"),
    }
    for key in ("T2C_LLM_API_KEY", "T2C_MODEL", "GROQ_API_KEY", "OPENROUTER_API_KEY"):
        env.pop(key, None)

    for step in (["run"], ["evaluate"], ["analyze"]):
        done = t2c([*step, "--params", str(params_file)], env)
        assert done.returncode == 0, f"t2c {step[0]}: {done.stderr[-2000:]}"
        if step == ["evaluate"]:
            assert "[kg-axel] Pass@1 first" in done.stdout and "[t2c] Pass@1 first" in done.stdout

    run = tmp_path / "results" / "ollama-e2e"
    manifest = json.loads((run / "feedback" / "Zero-Shot_Full" / "manifest.json").read_text())
    assert "qwen2.5-coder:3b" in json.dumps(manifest)  # the endpoint's model, not the in-process one
    attempts = [
        json.loads(line) for line in (run / "feedback" / "Zero-Shot_Full" / "attempts.jsonl").read_text().splitlines()
    ]
    assert {a["question_id"] for a in attempts} and all(a["prompt_tokens"] > 0 for a in attempts)
    summary = json.loads((run / "feedback" / "Zero-Shot_Full" / "summary.json").read_text())
    assert summary["scoring"] == "kg-axel" and sorted(summary["by_scoring"]) == ["cypherbench", "kg-axel", "t2c"]
    assert "scoring:kg-axel" in summary["signature"] and "scoring:t2c" in summary["signature"]
    with (run / "analysis" / "reference.csv").open(encoding="utf-8") as handle:
        reference = list(csv.DictReader(handle))
    sources = [r["source"] for r in reference]
    assert sources[0].startswith("this run: ollama-e2e, qwen2.5-coder:3b")
    published = [r for r in reference if r["source"].startswith("published: ")]
    assert len(published) == 13 and {r["endpoint"] for r in published} == {"Groq", "Ollama"}
    by_scoring = (run / "analysis" / "by_scoring.csv").read_text(encoding="utf-8")
    assert "kg-axel,Zero-Shot_Full,feedback" in by_scoring and "t2c,Zero-Shot_Full,feedback" in by_scoring
