"""Notebook 04 is stored thin and stripped, papermill can parametrise it, and `make conversations` runs it."""

from __future__ import annotations

import json
import subprocess

from tests.helpers import ROOT

NOTEBOOK = ROOT / "notebooks" / "04_conversations.ipynb"


def test_notebook_is_stripped_with_a_parameters_cell():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1 and code[0] is tagged[0]
    names = {
        line.split("=")[0].strip()
        for line in "".join(tagged[0]["source"]).splitlines()
        if "=" in line and not line.startswith("#")
    }
    assert {"dataset", "store", "model", "strategy", "max_iterations", "router", "limit", "scoring", "out_dir"} <= names
    logic = "".join("".join(c["source"]) for c in code[1:])
    assert "run_conversations" in logic and "def " not in logic  # thin: calls into t2c_lib only


def test_make_help_lists_conversations():
    done = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "conversations" in done.stdout
    dry = subprocess.run(
        ["make", "-n", "conversations", "PY=python", "STAMP="], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "notebooks/04_conversations.ipynb results/conversations/04_conversations.ipynb" in dry.stdout


def test_make_conversations_seeds_from_its_published_run_and_ends_with_the_reproduced_check():
    """A run under results/ is named by its folder; one elsewhere, or FRESH=1, is not seeded from published replies."""

    def dry(*extra: str) -> list[str]:
        done = subprocess.run(
            ["make", "-n", "conversations", "PY=python", "STAMP=", "T2C=t2c", *extra],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return [line for line in done.stdout.splitlines() if line.startswith("t2c ")]

    runs = ["conversations", "conversations-rewrite", "conversations-movies", "conversations-movies-rewrite"]
    assert dry() == [f"t2c study {step} --run-id {run}" for run in runs for step in ("seed", "reproduced")]
    assert dry("CONVERSATIONS_DIR=results/conversations-rules") == [
        "t2c study seed --run-id conversations-rules",
        "t2c study reproduced --run-id conversations-rules",
    ]
    assert dry("FRESH=1") == [f"t2c study reproduced --run-id {run}" for run in runs]
    assert dry("CONVERSATIONS_DIR=/tmp/elsewhere") == []
