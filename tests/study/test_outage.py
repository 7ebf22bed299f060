"""An outage is never an answer (issue 28, item 1).

A model call that gets no reply after every retry (connection refused, timeouts, 429 and
5xx) says nothing about the question. The run must stop with a non-zero exit and a clear
line, keep the questions that finished, record nothing for the failed one, and the resumed
run must ask it again. Real subprocesses of `t2c` against a loopback endpoint that first
refuses (nothing listens on its port) and then answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from t2c_lib.llm.base import LLMConfigError, LLMUnavailableError, Message
from t2c_lib.llm.openai_compat import Endpoint, OpenAICompatModel, RetryPolicy
from tests.helpers import ROOT
from tests.helpers.fault_server import FaultServer, free_port, hang, ok, status

pytestmark = pytest.mark.slow  # subprocesses: the t2c command against a loopback endpoint

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.05, max_delay_s=0.1, max_total_wait_s=5, timeout_s=0.5)
MESSAGES = [Message("user", "List all courses.")]
PARAMS = {
    "run_id": "outage",
    "dataset": "kurikulum",
    "store": "ladybug",
    "model": "fault-model",
    "prompt_types": ["Few-Shot"],
    "schema_formats": ["nodes_paths"],
    "strategies": ["single-pass", "feedback"],
    "max_iterations": 2,
    "limit": 2,
    "max_tokens": 64,
    "test_suite_copies": 0,
}


def t2c(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=ROOT,
        timeout=600,
    )


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


# --- the client names an outage as such ------------------------------------------------------


def test_a_refused_connection_is_an_outage_that_asks_whether_the_server_runs() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    model = OpenAICompatModel("m", Endpoint(url, "", "custom"), FAST)
    with pytest.raises(LLMUnavailableError) as caught:
        model.complete(MESSAGES)
    assert "is the server running at " + url in str(caught.value)
    assert "failed after 2 attempt(s)" in str(caught.value)


@pytest.mark.parametrize("fault", [status(503), status(429), hang(3.0)], ids=["503", "429", "timeout"])
def test_5xx_429_and_timeouts_after_the_retries_are_outages(fault) -> None:
    with FaultServer() as server:
        server.queue(fault, fault)
        model = OpenAICompatModel("m", Endpoint(server.base_url, "", "custom"), FAST)
        with pytest.raises(LLMUnavailableError):
            model.complete(MESSAGES)


def test_a_401_stays_a_configuration_error_not_an_outage() -> None:
    with FaultServer() as server:
        server.queue(status(401))
        model = OpenAICompatModel("m", Endpoint(server.base_url, "", "custom"), FAST)
        with pytest.raises(LLMConfigError) as caught:
            model.complete(MESSAGES)
    assert not isinstance(caught.value, LLMUnavailableError)


# --- the study stops, keeps what it has, and the resumed run asks again ------------------------


@pytest.fixture()
def study(tmp_path: Path) -> tuple[Path, dict[str, str], int]:
    params = tmp_path / "outage.yaml"
    params.write_text(yaml.safe_dump(PARAMS))
    port = free_port()
    env = {
        "T2C_CACHE_DIR": str(tmp_path / "cache"),
        "T2C_RESULTS_DIR": str(tmp_path / "results"),
        "T2C_FIGURES_DIR": str(tmp_path / "figures"),
        "T2C_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "T2C_MODEL": "",
        "T2C_LLM_MAX_ATTEMPTS": "2",
        "T2C_LLM_MAX_WAIT": "5",
        "T2C_LLM_TIMEOUT": "5",
    }
    return params, env, port


def test_a_refused_endpoint_stops_the_run_and_the_resumed_run_asks_every_question(study) -> None:
    params, env, port = study
    cell = Path(env["T2C_RESULTS_DIR"]) / "outage" / "feedback" / "Few-Shot_Nodes+Paths"
    refused = t2c("run", "--params", str(params), "--strategy", "feedback", "--no-cache", env=env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    errors = [line for line in refused.stderr.splitlines() if line.startswith("t2c: error:")]
    assert len(errors) == 1, refused.stderr
    assert "is the server running" in errors[0] and "0 of 2 questions finished and kept" in errors[0], errors[0]
    assert "run the same command again" in errors[0]
    assert records(cell / "questions.jsonl") == [], "an outage is not an answer"

    with FaultServer(port=port) as server:  # the endpoint is back
        resumed = t2c("run", "--params", str(params), "--strategy", "feedback", "--no-cache", env=env)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "2 run, 0 already done, 0 raised" in resumed.stdout
        assert len(server.requests) >= 2
    finished = records(cell / "questions.jsonl")
    assert len({r["question_id"] for r in finished}) == len(finished) == 2
    assert all(r["error"] is None for r in finished), finished
    evaluated = t2c("evaluate", "--params", str(params), "--strategy", "feedback", env=env)
    assert evaluated.returncode == 0, evaluated.stderr


def test_an_outage_mid_run_keeps_the_finished_question_and_asks_only_the_other(study) -> None:
    params, env, port = study
    cell = Path(env["T2C_RESULTS_DIR"]) / "outage" / "feedback" / "Few-Shot_Nodes+Paths"
    with FaultServer(port=port) as server:
        server.queue(ok(), status(503), status(503))  # the first question's reply, then the endpoint fails
        stopped = t2c("run", "--params", str(params), "--strategy", "feedback", "--no-cache", env=env)
        assert stopped.returncode == 1, stopped.stdout + stopped.stderr
        assert "1 of 2 questions finished and kept" in stopped.stderr and "HTTP 503" in stopped.stderr
        kept = records(cell / "questions.jsonl")
        assert len(kept) == 1 and kept[0]["error"] is None
        resumed = t2c("run", "--params", str(params), "--strategy", "feedback", "--no-cache", env=env)
        assert resumed.returncode == 0, resumed.stderr
        assert "1 run, 1 already done, 0 raised" in resumed.stdout
    assert len(records(cell / "questions.jsonl")) == 2


def test_an_outage_an_older_run_recorded_as_an_answer_is_set_aside_and_asked_again(tiny_dataset, tmp_path) -> None:
    from t2c_lib.runs.layout import OUTAGES_FILE, Cell
    from t2c_lib.runs.runlog import is_outage_record
    from t2c_lib.study.params import params_from_dict
    from t2c_lib.study.runner import run_cell

    cell = Cell("feedback", "Zero-Shot", "full_schema")
    directory = cell.directory(tmp_path)
    directory.mkdir(parents=True)
    old_outage = {
        "question_id": "tiny-002",
        "status": "FAILED",
        "success": False,
        "iterations": 0,
        "final_query": "",
        "error": "LLMError: model 'x' at custom (http://127.0.0.1:9/v1) failed after 6 attempt(s): "
        "no HTTP status: connection failed: Connection error.",
    }
    real_failure = {
        "question_id": "tiny-001",
        "status": "FAILED",
        "success": False,
        "iterations": 3,
        "final_query": "MATCH (n) RETURN n",
        "error": None,
    }
    other_error = {"question_id": "tiny-003", "status": "FAILED", "error": "RuntimeError: store closed"}
    (directory / "questions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in (real_failure, old_outage, other_error))
    )
    (directory / "attempts.jsonl").write_text(json.dumps({"question_id": "tiny-002", "iteration": 1}) + "\n")
    assert [is_outage_record(r) for r in (real_failure, old_outage, other_error)] == [False, True, False]

    asked: list[str] = []

    def scripted_solve_stand_in(item, on_attempt):
        asked.append(item.id)
        return {
            "status": "SUCCESS",
            "success": True,
            "kg_valid": True,
            "iterations": 1,
            "final_query": "RETURN 1",
            "error": None,
        }

    report = run_cell(
        cell,
        params_from_dict({"run_id": "t"}),
        tiny_dataset.questions,
        scripted_solve_stand_in,
        tmp_path,
        progress=False,
    )
    assert asked == ["tiny-002"] and report.outages_set_aside == 1 and report.dropped_partial_attempts == 1
    assert "1 outage(s) an older run recorded as answers, asked again" in report.line()
    now = {r["question_id"]: r for r in records(directory / "questions.jsonl")}
    assert now["tiny-002"]["status"] == "SUCCESS" and now["tiny-001"] == real_failure
    assert records(directory / OUTAGES_FILE) == [old_outage]
