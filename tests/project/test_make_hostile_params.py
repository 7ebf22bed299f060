"""A parameter file is hostile input: nothing in it reaches make's shell (issue 55, item 1).

The Makefile once read `run_id` with `sed` and pasted it into recipes, so `run_id: x$(touch${IFS}FILE)`
ran `touch` in `make all FRESH=1`, `make seed-replies` and `make publish`, and a traversing run id made
`make fresh-cache FRESH=1` delete a `*.sqlite` outside the project. Now make asks t2c for the run id
(`t2c study run-id`, the same check every step makes) and stops on its one-line refusal before any
recipe runs. The Makefile is run for real in a scratch project (`test_make_parallel`'s stand-in).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.project.test_make_parallel import T2C, _hermetic, _project

pytestmark = [
    pytest.mark.slow,  # runs make and t2c
    pytest.mark.skipif(not T2C.exists(), reason="needs the t2c script"),
]

TARGETS = [("all", "FRESH=1"), ("seed-replies",), ("publish",), ("fresh-cache", "FRESH=1"), ("-n", "all")]


def _make(project: Path, *args: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "RUN", "CACHE")}
    environ.update(_hermetic(project))
    return subprocess.run(
        ["make", "-C", str(project), *args, f"PAPERMILL={project / 'record.sh'}"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,
    )


def _params(project: Path, run_id: str) -> str:
    text = (ROOT / "params" / "quick.yaml").read_text(encoding="utf-8").replace("run_id: quick", f"run_id: {run_id}")
    (project / "hostile.yaml").write_text(text, encoding="utf-8")
    return "PARAMS=hostile.yaml"


def _refused(done: subprocess.CompletedProcess) -> None:
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Traceback" not in output, output
    errors = [line for line in done.stderr.splitlines() if line.startswith("t2c: error:")]
    assert len(errors) == 1 and "run_id=" in errors[0], output


@pytest.mark.parametrize("target", TARGETS, ids=" ".join)
def test_a_run_id_that_is_shell_code_runs_nothing(tmp_path: Path, target: tuple[str, ...]) -> None:
    project = _project(tmp_path)
    mark = tmp_path / "ran"
    done = _make(project, *target, _params(project, f"x$(touch${{IFS}}{mark})"))
    _refused(done)
    assert not mark.exists()
    assert not (project / ".cache" / "fresh").exists()


@pytest.mark.parametrize("run_id", ["x`touch ran`", "x;touch${IFS}ran", "'x;touch ran'", "x|touch${IFS}ran"])
def test_other_shell_spellings_run_nothing(tmp_path: Path, run_id: str) -> None:
    project = _project(tmp_path)
    _refused(_make(project, "seed-replies", _params(project, run_id)))
    assert not (project / "ran").exists()


def test_a_traversing_run_id_deletes_nothing_outside(tmp_path: Path) -> None:
    project = _project(tmp_path)
    victim = tmp_path / "victim.sqlite"
    victim.write_text("the user's own file", encoding="utf-8")
    (project / ".cache" / "fresh").mkdir(parents=True)  # an earlier FRESH=1 run's: the path resolves through it
    for run_id in ("../../../victim", "../../victim", "/tmp/victim"):
        _refused(_make(project, "fresh-cache", "FRESH=1", _params(project, run_id)))
    assert victim.read_text(encoding="utf-8") == "the user's own file"


def test_a_params_path_or_conversations_folder_with_shell_code_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = _make(project, "-n", "all", "PARAMS=grid.yaml;touch${IFS}ran")
    assert done.returncode != 0 and "PARAMS must be one word" in done.stderr, done.stderr
    done = _make(project, "-n", "conversations", "CONVERSATIONS_DIR=results/x;touch${IFS}ran")
    assert done.returncode != 0 and "CONVERSATIONS_DIR must be one word" in done.stderr, done.stderr
    assert not (project / "ran").exists()


def test_the_targets_still_name_the_run_t2c_read(tmp_path: Path) -> None:
    """A valid run id (the stand-in's `make_parallel`) reaches every step, quoted."""
    project = _project(tmp_path)
    done = _make(project, "-n", "seed-replies", "PARAMS=grid.yaml")
    assert done.returncode == 0, done.stderr
    assert "study seed --run-id 'make_parallel'" in done.stdout
    assert "study forecast --params 'grid.yaml'" in done.stdout
    done = _make(project, "-n", "publish", "PARAMS=grid.yaml")
    assert done.returncode == 0 and "publish --run-id 'make_parallel'" in done.stdout, done.stderr
    done = _make(project, "-n", "publish", "RUN=conversations", "CACHE=my cache.sqlite")
    assert done.returncode == 0 and "publish --run-id 'conversations' --cache 'my cache.sqlite'" in done.stdout
    done = _make(project, "-n", "fresh-cache", "FRESH=1", "PARAMS=grid.yaml")
    assert done.returncode == 0, done.stderr
    assert f"'{project}/.cache/fresh/make_parallel.sqlite'" in done.stdout
    done = _make(project, "-n", "all", "FRESH=1", "PARAMS=grid.yaml")
    assert done.returncode == 0, done.stderr
    assert "study replicate --run-id 'make_parallel' --fresh-run-id 'make_parallel-fresh'" in done.stdout
    rules = (project / ".cache" / "make" / "grid.yaml.fresh.mk").read_text(encoding="utf-8")
    assert "RUN_DIR := results/make_parallel-fresh" in rules
