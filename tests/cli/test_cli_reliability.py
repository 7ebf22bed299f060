"""What a new user and a crash run into (issue 17): configuration errors stop a run, `--run-id`
works for every study command, one-mode runs analyze, options are checked with their ranges, and
every command takes the thesis and snake_case spellings. Real subprocesses and a loopback endpoint.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.helpers.fault_server import FaultServer, status

pytestmark = pytest.mark.slow  # subprocesses: the t2c command against a loopback endpoint


def t2c(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
        timeout=600,
    )


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("reliability")
    return {
        "T2C_CACHE_DIR": str(base / "cache"),
        "T2C_RESULTS_DIR": str(base / "results"),
        "T2C_FIGURES_DIR": str(base / "figures"),
    }


RUN = [
    "run",
    "--params",
    "params/quick.yaml",
    "--run-id",
    "auth",
    "--mode",
    "agentic",
    "--prompt",
    "few_shot",
    "--schema",
    "Nodes+Paths",
    "--limit",
    "2",
    "--model",
    "fault-model",
    "--no-cache",
]


def test_401_stops_the_run_records_nothing_and_the_fixed_run_asks_again_then_evaluate_and_analyze(dirs) -> None:
    with FaultServer() as server:
        env = {**dirs, "T2C_LLM_BASE_URL": server.base_url, "T2C_LLM_API_KEY": "sk-wrong-key-0000000000"}
        server.queue(*[status(401, body='{"error": {"message": "Invalid API Key"}}')] * 5)
        refused = t2c(*RUN, env=env)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        errors = [line for line in refused.stderr.splitlines() if line.startswith("t2c: error:")]
        assert len(errors) == 1 and "authentication failed: check the API key" in errors[0]
        assert len(server.requests) == 1, "not retried, and no second question asked"
        cell = Path(dirs["T2C_RESULTS_DIR"]) / "auth" / "agentic" / "Few-Shot_Nodes+Paths"
        questions = cell / "questions.jsonl"
        assert not questions.exists() or questions.read_text() == ""
        server.faults.clear()  # the key is fixed
        fixed = t2c(*RUN, env=env)
        assert fixed.returncode == 0, fixed.stderr
        assert "2 run, 0 already done" in fixed.stdout
    # the study commands find the run by its id alone (its manifests hold limit, model and grid)
    evaluated = t2c("evaluate", "--run-id", "auth", env=dirs)
    assert evaluated.returncode == 0, evaluated.stderr
    assert (
        evaluated.stdout.startswith("feedback/Few-Shot_Nodes+Paths: KG-valid structural ")
        and "Pass@1 first" in evaluated.stdout
    )
    analyzed = t2c("analyze", "--run-id", "auth", env=dirs)
    assert analyzed.returncode == 0, analyzed.stderr
    assert "paired tests need both strategies (single-pass and feedback)" in analyzed.stdout
    assert "Few-Shot_Nodes+Paths" in analyzed.stdout and "Traceback" not in analyzed.stderr
    assert (Path(dirs["T2C_RESULTS_DIR"]) / "auth" / "analysis" / "comparison.csv").is_file()


def test_unknown_run_id_is_a_one_line_error(dirs) -> None:
    missing = t2c("evaluate", "--run-id", "never-ran", env=dirs)
    assert missing.returncode == 1 and "no run 'never-ran' found" in missing.stderr


@pytest.mark.parametrize(
    "args,option,expected",
    [
        (["run", "--limit", "abc"], "--limit", "is not a positive integer or 'all'"),
        (["run", "--limit", "0"], "--limit", "is not a positive integer or 'all'"),
        (["db", "query", "--timeout", "0", "RETURN 1"], "--timeout", "range 0<x<=86400"),
        (["db", "query", "--timeout", "-5", "RETURN 1"], "--timeout", "range 0<x<=86400"),
        (["validate", "--timeout", "0", "RETURN 1"], "--timeout", "range 0<x<=86400"),
        (["ask", "--timeout", "-5", "q"], "--timeout", "range 0<x<=86400"),
        (["ask", "--temperature", "3", "q"], "--temperature", "0<=x<=2"),
        (["ask", "--refine-temperature", "-1", "q"], "--refine-temperature", "0<=x<=2"),
        (["ask", "--max-tokens", "0", "q"], "--max-tokens", "x>=1"),
        (["ask", "--max-iterations", "0", "q"], "--max-iterations", "x>=1"),
        (["ask", "--schema", "Graph", "q"], "--schema", "valid: full_schema (Full)"),
        (["run", "--prompt", "One-Shot"], "--prompt", "valid: Zero-Shot, Few-Shot, CoT"),
        (["db", "schema", "--format", "paths"], "--format", "unknown schema format"),
    ],
)
def test_every_option_is_checked_with_its_name_and_range(args: list[str], option: str, expected: str) -> None:
    done = t2c(*args)
    assert done.returncode == 2
    assert f"Invalid value for '{option}'" in done.stderr and expected in done.stderr, done.stderr


def test_every_command_takes_thesis_and_snake_case_names(dirs) -> None:
    from t2c_lib.cli.agent import ask
    from t2c_lib.cli.study import evaluate_command, run_command
    from t2c_lib.study.params import params_from_dict

    for command, name in ((run_command, "run"), (evaluate_command, "evaluate"), (ask, "ask")):
        extra = ["why?"] if name == "ask" else []
        for prompt, schema in (("zero_shot", "Nodes+Paths"), ("Zero-Shot", "nodes_paths"), ("cot", "Only-Paths")):
            ctx = command.make_context(name, ["--prompt", prompt, "--schema", schema, *extra])
            assert ctx.params["prompt_type"] in ("Zero-Shot", "CoT")
            assert ctx.params["schema_format"] in ("nodes_paths", "only_paths")
    params = params_from_dict({"prompt_types": ["few_shot", "CoT"], "schema_formats": ["Nodes+Paths", "full_schema"]})
    assert params.prompt_types == ("Few-Shot", "CoT") and params.schema_formats == ("nodes_paths", "full_schema")
    thesis = t2c("db", "schema", "--format", "Nodes+Paths", env=dirs)
    snake = t2c("db", "schema", "--format", "nodes_paths", env=dirs)
    assert thesis.returncode == 0 and thesis.stdout == snake.stdout and "(:MK)" in thesis.stdout
