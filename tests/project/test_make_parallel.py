"""`make all` runs the per-configuration notebooks in parallel: JOBS at once, T2C_LOCAL_THREADS each.

The Makefile is run for real (GNU make) in a scratch project: the real `t2c study plan`
writes the rules, and a recording stand-in for papermill (named as such) logs when each
notebook run starts and ends and which thread count it was given.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT

T2C = Path(sys.executable).with_name("t2c")

pytestmark = [
    pytest.mark.slow,  # runs make
    pytest.mark.skipif(shutil.which("make") is None or not T2C.exists(), reason="needs GNU make and the t2c script"),
]

RECORDER = """#!/bin/sh
# papermill stand-in: record start, the thread setting, end
echo "start $$ $(date +%s.%N) ${T2C_LOCAL_THREADS:-unset}" >> "$LOG"
sleep 1
echo "end $$ $(date +%s.%N)" >> "$LOG"
"""


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "Makefile", project / "Makefile")
    (project / "pyproject.toml").write_text("", encoding="utf-8")
    time.sleep(0.01)
    (project / ".venv" / ".llama-portable").write_text("", encoding="utf-8")  # the llama.cpp build (make setup)
    (project / ".venv" / ".installed").write_text("", encoding="utf-8")
    (project / ".venv" / "bin" / "t2c").symlink_to(T2C)
    (project / ".venv" / "bin" / "python").symlink_to(sys.executable)
    # the stand-in venv is the real one seen through links: its python imports t2c_lib
    # (make's progress line runs `python -m t2c_lib.study.progress`)
    for name in ("pyvenv.cfg", "lib"):
        if (Path(sys.prefix) / name).exists():
            (project / ".venv" / name).symlink_to(Path(sys.prefix) / name)
    params = (
        (ROOT / "params" / "quick.yaml").read_text(encoding="utf-8").replace("run_id: quick", "run_id: make_parallel")
    )
    (project / "grid.yaml").write_text(params, encoding="utf-8")
    recorder = project / "record.sh"
    recorder.write_text(RECORDER, encoding="utf-8")
    recorder.chmod(0o755)
    return project


def _hermetic(project: Path) -> dict[str, str]:
    """The stand-in project's own results and response cache: `make all` seeds and checks published runs, and
    the checkout's (its published runs, its cache) must neither answer nor receive anything here."""
    return {"T2C_RESULTS_DIR": str(project / "results"), "T2C_RESPONSE_CACHE": str(project / "cache.sqlite")}


def _make(project: Path, *args: str, **env: str) -> list[list[str]]:
    log = project / "calls.log"
    log.unlink(missing_ok=True)
    shutil.rmtree(project / "results", ignore_errors=True)
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("JOBS", "T2C_LOCAL_THREADS", "MAKEFLAGS", "MAKELEVEL", "OMP_NUM_THREADS", "OMP_THREAD_LIMIT")
    }
    environ.update(env, LOG=str(log), **_hermetic(project))
    done = subprocess.run(
        ["make", "-C", str(project), "all", "PARAMS=grid.yaml", f"PAPERMILL={project / 'record.sh'}", *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    _make.output = done.stdout + done.stderr
    return [line.split() for line in log.read_text(encoding="utf-8").splitlines()]


def _most_at_once(events: list[list[str]]) -> int:
    timeline = sorted((float(e[2]), 1 if e[0] == "start" else -1) for e in events)
    running = most = 0
    for _, step in timeline:
        running += step
        most = max(most, running)
    return most


def test_jobs_and_threads_follow_the_settings(tmp_path: Path) -> None:
    project = _project(tmp_path)
    # quick.yaml: 2 configurations x 2 modes -> 4 inference + 4 evaluation runs + 1 analysis
    two = _make(project, JOBS="2")
    assert len([e for e in two if e[0] == "start"]) == 9
    assert _most_at_once(two) == 2
    progress = [line for line in _make.output.splitlines() if line.startswith("[grid make_parallel] ")]
    assert len(progress) == 9, _make.output  # after every notebook run: the whole grid, not one cell
    assert "4 of 4 cells (strategy x configuration) done (analysis done)" in progress[-1]
    cores = len(os.sched_getaffinity(0))
    assert {e[3] for e in two if e[0] == "start"} == {str(max(1, cores // 2))}

    one = _make(project, JOBS="1")
    assert _most_at_once(one) == 1
    assert {e[3] for e in one if e[0] == "start"} == {str(cores)}

    fixed = _make(project, JOBS="2", T2C_LOCAL_THREADS="3")
    assert {e[3] for e in fixed if e[0] == "start"} == {"3"}


def test_bad_jobs_value_is_named(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = subprocess.run(
        ["make", "-C", str(project), "parallel", "JOBS=many"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "JOBS must be a positive integer, got 'many'" in done.stderr


CHATTY = """#!/bin/sh
# papermill stand-in that talks like a notebook run: 50 lines of output; the analysis writes a headline;
# a notebook named in $FAIL ends with a one-line error, as the IPC engine ends a t2c error
for i in $(seq 50); do echo "cell output line $i"; done
case "$1" in *03_comparative_analysis*)
  mkdir -p results/make_parallel/analysis
  printf 'run make_parallel: the headline\\nconfiguration  Pass@1 (t2c) sp -> fb\\n' > results/make_parallel/analysis/headline.txt;;
esac
case "$2" in *"$FAIL"*) echo "$(basename "$1"): EvaluationSettingsDiffer: one line" >&2; exit 1;; esac
exit 0
"""


def _chatty_make(project: Path, fail: str = "never") -> subprocess.CompletedProcess:
    chatty = project / "chatty.sh"
    chatty.write_text(CHATTY, encoding="utf-8")
    chatty.chmod(0o755)
    shutil.rmtree(project / "results", ignore_errors=True)
    environ = {k: v for k, v in os.environ.items() if k not in ("JOBS", "MAKEFLAGS", "MAKELEVEL")}
    environ.update(_hermetic(project))
    return subprocess.run(
        ["make", "-C", str(project), "all", "PARAMS=grid.yaml", f"PAPERMILL={chatty}", "JOBS=1", f"FAIL={fail}"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_make_all_shows_progress_and_the_headline_and_logs_the_notebooks_output(tmp_path: Path) -> None:
    """Issue 39 (7): the notebooks' output goes to a log beside each executed copy, not to make's output."""
    project = _project(tmp_path)
    done = _chatty_make(project)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = [line for line in (done.stdout + done.stderr).splitlines() if not line.startswith("make")]
    assert not [line for line in shown if "cell output line" in line or "PAPERMILL" in line or "chatty" in line]
    assert len([line for line in shown if line.startswith("[grid make_parallel] ")]) == 9
    out = [line for line in done.stdout.splitlines() if not line.startswith("make")]
    assert out[-4:-2] == ["run make_parallel: the headline", "configuration  Pass@1 (t2c) sp -> fb"], out
    assert out[-2].startswith("done:")
    # issue 37: before the first notebook, the seeding line; at the end, the published replies and model calls
    assert (
        out[0]
        == "run make_parallel is not published (no results/published/make_parallel/): every reply comes from the model"
    )
    assert out[1].startswith(
        "[forecast make_parallel] 4 cells, none published under this run id: replies come from the model"
    )
    assert out[-1] == "run make_parallel: not published (no results/published/make_parallel/); 0 model calls"
    assert len(shown) <= 17, shown  # 9 progress lines, the headline, the done line, the three published-run lines
    log = project / "results" / "make_parallel" / "notebooks" / "01_inference__feedback__Few-Shot_Nodes+Paths.log"
    assert log.read_text(encoding="utf-8").count("cell output line") == 50

    failed = _chatty_make(project, fail="02_evaluation__feedback__Few-Shot")
    assert failed.returncode != 0
    assert "02_evaluation.ipynb: EvaluationSettingsDiffer: one line" in failed.stderr
    assert "the notebook's log: results/make_parallel/notebooks/02_evaluation__feedback__Few-Shot_Nodes+Paths.log" in (
        failed.stderr
    )
    assert "cell output line" not in failed.stdout + failed.stderr


def test_make_all_fresh_writes_the_fresh_run_with_a_private_cache_and_says_what_it_compared(tmp_path: Path) -> None:
    """Issue 37: FRESH=1 runs the grid as `<run_id>-fresh` (every notebook told so) behind a private response cache."""
    project = _project(tmp_path)
    stale = project / ".cache" / "fresh" / "make_parallel.sqlite"
    stale.parent.mkdir(parents=True)
    stale.write_text("a cache an earlier replication left", encoding="utf-8")
    _make(project, "JOBS=2", "FRESH=1")
    out = [line for line in _make.output.splitlines() if not line.startswith(("make", "[grid"))]
    assert out[0] == (
        f"FRESH=1: the model is asked again (response cache {stale}, run results/make_parallel-fresh/)"
    ), out
    assert out[1].startswith("[forecast make_parallel] 4 cells, none published")
    assert out[-1] == "run make_parallel is not published (results/published/make_parallel/): no replication report"
    assert not stale.exists()  # the fresh run's folder did not exist: no earlier reply may be served
    assert (project / "results" / "make_parallel-fresh" / ".analyzed").is_file()
    assert not (project / "results" / "make_parallel").exists()
    rules = (project / ".cache" / "make" / "grid.yaml.fresh.mk").read_text(encoding="utf-8")
    assert rules.count("-p run_id make_parallel-fresh") == 9  # 4 cells x (inference, evaluation) + the analysis
