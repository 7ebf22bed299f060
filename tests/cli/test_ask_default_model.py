"""`t2c ask` with no model option answers with the default packaged model, Qwen2.5-Coder-1.5B-Instruct.

A real subprocess, the real model, a fresh response cache and store: the question is a
plain curriculum lookup (not one of the gold questions) and the answer must be right.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from t2c_lib.llm.registry import QWEN_1_5B
from tests.helpers import ROOT


@pytest.mark.slow
def test_ask_with_no_model_option_answers_with_the_1_5b(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("T2C_MODEL", "T2C_LLM_BASE_URL", "GROQ_API_KEY", "OPENROUTER_API_KEY")
    }
    env["T2C_CACHE_DIR"] = str(tmp_path / "cache")  # a fresh response cache: the model really runs
    done = subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", "ask", "--json", "Berapa SKS mata kuliah 'Sistem Operasi'?"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    state = json.loads(done.stdout)
    assert state["success"] and state["config"] == "Few-Shot_Only-Paths"
    assert state["result"]["rows"] == [[3]], state["final_query"]
    from t2c_lib.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache" / "llm_cache.sqlite")
    assert cache.stats().models == {QWEN_1_5B.model_id: state["llm_calls"]}  # what answered, and its weights' sha256
    assert QWEN_1_5B.model_id == "local/qwen2.5-coder-1.5b@cc324af070c2"
