"""What a researcher meets on a first run (issue 28, items 3-7): which model answers and why, no
silent exit 0, one-line errors that say where, bounded output. Real subprocesses of `t2c` against
the embedded store and a loopback OpenAI-compatible endpoint.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from t2c_lib.study.model_precedence import AmbiguousModel, choose_model
from tests.helpers import ROOT
from tests.helpers.fault_server import FaultServer

pytestmark = pytest.mark.slow  # subprocesses: the t2c command, a loopback endpoint, the local model

PARAMS = {
    "run_id": "first",
    "dataset": "kurikulum",
    "store": "ladybug",
    "model": "local",
    "prompt_types": ["Few-Shot"],
    "schema_formats": ["nodes_paths"],
    "strategies": ["single-pass", "feedback"],
    "max_iterations": 2,
    "limit": 1,
    "max_tokens": 64,
    "test_suite_copies": 0,
}


def t2c(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
        timeout=1800,  # a wall, not a speed goal: the 1.5B on a busy 2-core machine took over 600 s for the quick grid
    )


@pytest.fixture()
def study(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    params = tmp_path / "first.yaml"
    params.write_text(yaml.safe_dump(PARAMS))
    env = {
        "T2C_CACHE_DIR": str(tmp_path / "cache"),
        "T2C_RESULTS_DIR": str(tmp_path / "results"),
        "T2C_FIGURES_DIR": str(tmp_path / "figures"),
        "T2C_MODEL": "",
        "T2C_LLM_BASE_URL": "",
        "T2C_LLM_MAX_ATTEMPTS": "1",
    }
    return params, env


# --- item 3: which model answers --------------------------------------------------------------


def test_the_command_line_beats_the_environment_which_beats_the_parameter_file() -> None:
    assert choose_model("local", "qwen", {"T2C_MODEL": "gemma"}).name == "qwen"
    env_wins = choose_model("local", None, {"T2C_MODEL": "qwen2.5-coder:3b", "T2C_LLM_BASE_URL": "http://h/v1"})
    assert (env_wins.name, env_wins.source) == ("qwen2.5-coder:3b", "T2C_MODEL")
    assert (
        env_wins.describe()
        == "model qwen2.5-coder:3b (from T2C_MODEL; the parameter file's model: local is overridden)"
    )
    file_wins = choose_model("qwen2.5-coder:3b", None, {"T2C_LLM_BASE_URL": "http://h/v1"})
    assert (file_wins.name, file_wins.refused) == ("qwen2.5-coder:3b", "")
    assert choose_model("local", None, {}).describe() == "model local (from the parameter file)"
    with pytest.raises(AmbiguousModel, match="T2C_LLM_BASE_URL is set .* says model: local"):
        choose_model("local", None, {"T2C_LLM_BASE_URL": "http://h/v1"}, "params/quick.yaml").check()
    choose_model("local", "local", {"T2C_LLM_BASE_URL": "http://h/v1"}).check()  # said explicitly: no question


def test_an_endpoint_in_the_environment_and_model_local_in_the_file_is_refused_not_guessed(study) -> None:
    params, env = study
    with FaultServer() as server:
        refused = t2c("run", "--params", str(params), env={**env, "T2C_LLM_BASE_URL": server.base_url})
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "t2c: error: T2C_LLM_BASE_URL is set" in refused.stderr and "says model: local" in refused.stderr
        assert server.requests == []


def test_t2c_model_wins_over_the_file_and_run_evaluate_and_analyze_say_which_model_answered(study) -> None:
    params, env = study
    with FaultServer() as server:
        env = {**env, "T2C_LLM_BASE_URL": server.base_url, "T2C_MODEL": "fault-model"}
        ran = t2c("run", "--params", str(params), env=env)
        assert ran.returncode == 0, ran.stderr
        assert server.requests and server.requests[0].body["model"] == "fault-model"
    host = server.base_url.split("//")[1].split("/")[0]
    assert "model fault-model (from T2C_MODEL; the parameter file's model: local is overridden)" in ran.stdout
    assert f"model fault-model@{host}" in ran.stdout.splitlines()[-1]
    evaluated = t2c("evaluate", "--params", str(params), env=env)
    assert evaluated.returncode == 0, evaluated.stderr
    assert all(f"model fault-model@{host}" in line for line in evaluated.stdout.splitlines()), evaluated.stdout
    analyzed = t2c("analyze", "--params", str(params), env=env)
    assert analyzed.returncode == 0, analyzed.stderr
    assert f"answered by: fault-model@{host}" in analyzed.stdout


# --- item 4: a selection outside the grid is an error, not an empty run -------------------------


@pytest.mark.parametrize(
    "args,named",
    [
        (["--prompt", "CoT"], "--prompt CoT"),
        (["--schema", "Full"], "--schema full_schema"),
        (["--strategy", "vote"], "--strategy vote"),
    ],
)
def test_a_cell_outside_the_grid_is_an_error_naming_the_grid(study, args, named) -> None:
    params, env = study
    done = t2c("run", "--params", str(params), *args, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"t2c: error: {named} is not in the grid of {params}" in done.stderr
    assert not (Path(env["T2C_RESULTS_DIR"]) / "first").exists()


# --- item 5: one-line errors that say where; nothing silent -----------------------------------


def test_a_broken_parameter_file_is_reported_with_its_line_and_column(tmp_path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("run_id: x\nprompt_types: [Zero-Shot\nlimit: 3\n")
    done = t2c("run", "--params", str(broken))
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"t2c: error: {broken}: not valid YAML at line 3, column 6: did not find expected ',' or ']' "
        "(while parsing a flow sequence from line 2, column 15)"
    )


def test_an_empty_question_is_refused_before_any_model_call() -> None:
    with FaultServer() as server:
        for question in ("", "   \n"):
            done = t2c("ask", question, "--model", "fault-model", env={"T2C_LLM_BASE_URL": server.base_url})
            assert done.returncode == 2 and "the question is empty" in done.stderr, done.stderr
        assert server.requests == []


def test_the_notebooks_parameter_cells_parse_without_papermill_warnings(caplog) -> None:
    import ast

    import nbformat
    from papermill.translators import PythonTranslator

    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        caplog.clear()
        with caplog.at_level("WARNING", logger="papermill"):
            found = [p.name for p in PythonTranslator.inspect(cell)]
        assigned = [t.id for node in ast.parse(cell.source).body if isinstance(node, ast.Assign) for t in node.targets]
        assert not [r.message for r in caplog.records], (path.name, [r.message for r in caplog.records])
        assert found == assigned, path.name


def test_a_one_strategy_run_prints_intervals_and_writes_a_latex_table_with_a_body(study) -> None:
    params, env = study
    with FaultServer() as server:
        env = {**env, "T2C_LLM_BASE_URL": server.base_url}
        assert (
            t2c("run", "--params", str(params), "--strategy", "feedback", "--model", "fault-model", env=env).returncode
            == 0
        )
    assert t2c("evaluate", "--params", str(params), "--strategy", "feedback", env=env).returncode == 0
    analyzed = t2c("analyze", "--params", str(params), env=env)
    assert analyzed.returncode == 0, analyzed.stderr
    assert "share [95% CI]" in analyzed.stdout, analyzed.stdout
    assert "0.000 [0.000, 0.000]" in analyzed.stdout or "1.000 [1.000, 1.000]" in analyzed.stdout, analyzed.stdout
    figures = Path(env["T2C_FIGURES_DIR"]) / "first"
    assert (
        f"figures: {figures}/" in analyzed.stdout
        and f"tables: {Path(env['T2C_RESULTS_DIR']) / 'first' / 'analysis'}/" in analyzed.stdout
    )
    tex = (Path(env["T2C_RESULTS_DIR"]) / "first" / "analysis" / "comparison.tex").read_text()
    body = tex.split("\\hline")[2]
    assert "Few-Shot\\_Nodes+Paths & thesis-loop & 1 & " in body, tex


# --- item 7: a long answer is a preview with its row count --------------------------------------


def test_ask_shows_a_bounded_preview_with_the_row_count_and_how_to_get_the_rest(tmp_path) -> None:
    env = {"T2C_CACHE_DIR": str(tmp_path / "cache"), "T2C_MODEL": ""}
    with FaultServer("<cypher>MATCH (m:MK) RETURN m.nama</cypher>") as server:  # 63 courses
        env["T2C_LLM_BASE_URL"] = server.base_url
        done = t2c("ask", "Sebutkan semua mata kuliah.", "--model", "fault-model", "--max-iterations", "1", env=env)
        more = t2c(
            "ask",
            "Sebutkan semua mata kuliah.",
            "--model",
            "fault-model",
            "--max-iterations",
            "1",
            "--rows",
            "70",
            env=env,
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.strip() == "m.nama"))
    footer = next(i for i, line in enumerate(lines) if line.startswith("(63 rows"))
    assert footer - header - 2 == 10, "ten rows between the rule under the header and the footer"
    assert lines[footer] == (
        "(63 rows; the first 10 shown: --rows N shows more, --export FILE.csv writes them all, --json prints them all)"
    )
    assert "(63 rows)" in more.stdout
    validated = t2c("validate", "MATCH (m:MK) RETURN m.nama", env=env)
    assert "(63 rows; the first 10 shown: t2c db query prints them all)" in validated.stdout


# --- item 6: the first run shows the study's shape --------------------------------------------


def test_the_quick_grid_is_a_first_run_of_the_studys_shape() -> None:
    from t2c_lib.study.params import load_params

    params = load_params(ROOT / "params" / "quick.yaml")
    assert set(params.prompt_types) == {"Few-Shot", "CoT"} and len(params.schema_formats) == 1
    assert set(params.strategies) == {"single-pass", "feedback"} and params.model == "local"
    assert isinstance(params.limit, int) and 4 <= params.limit <= 8


@pytest.mark.slow
def test_the_quick_grid_fills_every_figure_and_captions_it(tmp_path) -> None:
    """The packaged model on params/quick.yaml (the response cache may answer): non-empty figures with captions."""
    env = {
        "T2C_RESULTS_DIR": str(tmp_path / "results"),
        "T2C_FIGURES_DIR": str(tmp_path / "figures"),
        "T2C_MODEL": "",
        "T2C_LLM_BASE_URL": "",
    }
    for step in ("run", "evaluate", "analyze"):
        done = t2c(step, "--params", "params/quick.yaml", env=env)
        assert done.returncode == 0, step + done.stdout + done.stderr
    means = __import__("pandas").read_csv(tmp_path / "results" / "quick" / "analysis" / "mode_means.csv")
    assert len(means) == 4 and means["kg_valid_chain_final"].max() > 0, (
        "the first run's KG-valid bars are not all empty"
    )
    figures = tmp_path / "figures" / "quick"
    for name in (
        "pass_kgvalid_by_config",
        "llmetric_heatmap",
        "cumulative_success",
        "error_types_recovery",
        "accuracy_by_stratum",
        "accuracy_by_stratum_id",
        "cost_vs_gain",
        "strategy_cost_effectiveness",
    ):
        assert (figures / f"{name}.png").stat().st_size > 10_000, name
        assert "N = " in (figures / f"{name}.txt").read_text() or name == "strategy_cost_effectiveness"
    assert "answered by: local/" in done.stdout
