"""A strategy is one declaration (issue 40, item 1): a strategy declared in this file only is a runnable one.

`AskTwice` and its `StrategySpec` below exist nowhere else. The study's parts read the registry when they
run (the parameter check, the grid order, the make rules, the budget, the CLI's choices), and
`T2C_STRATEGY_MODULES=tests.agent.test_strategy_declarations` brings the declaration into other processes: the
slow test runs one of its cells through `t2c run` and another through the inference notebook. The model
there is a scripted stand-in: a loopback OpenAI-compatible server (`FaultServer`) that answers every
request with the same query, one the validator chain refuses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from t2c_lib.agent.names import SINGLE_PASS
from t2c_lib.agent.spec import OptionInputs, StrategySpec
from t2c_lib.agent.strategies import STRATEGIES, STRATEGY_MODULES_ENV, register_strategy, strategy_names
from t2c_lib.records import AgentStatus
from tests.helpers import ROOT

NAME = "ask-twice"
OPTION = "ask_twice_temperature"


class AskTwice:
    """Ask the first request; if its query fails, ask the same messages once more at `temperature` (no feedback)."""

    name = NAME

    def __init__(self, temperature: float = 0.5) -> None:
        self.temperature = temperature

    def solve(self, loop: Any, state: Any, ctx: Any) -> None:
        messages = loop.prompts.initial(state.question)
        for temperature, last in ((loop.temperature, False), (self.temperature, True)):
            exchange = loop.ask(state, messages, temperature)
            checked = loop.validate(ctx, exchange.parsed)
            done = last or checked.ok
            status = AgentStatus.SUCCESS if checked.ok else AgentStatus.FAILED if done else AgentStatus.REFINING
            loop.record(state, exchange, checked, status=status)
            if done:
                return

    def signature(self, loop: Any) -> dict[str, Any]:
        return {"name": NAME, "temperature": self.temperature}


def _two_at_most(max_iterations: int) -> int:
    return min(2, max_iterations)


def _configure(inputs: OptionInputs) -> dict[str, Any]:
    return {"temperature": float(inputs.values[OPTION])}


SPEC = StrategySpec(
    NAME,
    AskTwice,
    budget=_two_at_most,
    waits_for=SINGLE_PASS,
    why="begins with single-pass's request: the response cache answers its first attempt",
    options={OPTION: 0.5},
    configure=_configure,
)
if NAME not in STRATEGIES:  # imported twice (pytest, then T2C_STRATEGY_MODULES): declared once
    register_strategy(SPEC)


PARAMS = {
    "run_id": "declared",
    "dataset": "kurikulum",
    "store": "ladybug",
    "model": "scripted-stand-in",
    "prompt_types": ["Few-Shot", "CoT"],
    "schema_formats": ["nodes_paths"],
    "strategies": [NAME, "single-pass"],
    "max_iterations": 3,
    "limit": 2,
    "max_tokens": 64,
    "test_suite_copies": 0,
    OPTION: 0.3,
}


def test_the_study_reads_the_declaration_when_it_runs() -> None:
    from t2c_lib.runs.layout import Cell, expand_grid
    from t2c_lib.study.make import make_rules
    from t2c_lib.study.params import params_from_dict

    params = params_from_dict(PARAMS)
    assert params.strategies == (NAME, SINGLE_PASS) and params.option(OPTION) == 0.3
    assert params.to_dict()[OPTION] == 0.3  # a set option of a later strategy is in the manifest's parameters
    assert OPTION not in params_from_dict({}).to_dict()  # and only where it is set
    assert [c.strategy for c in expand_grid(params)] == [SINGLE_PASS, SINGLE_PASS, NAME, NAME]  # after its wait
    assert Cell(NAME, "CoT", "nodes_paths").max_iterations(params) == 2  # its budget rule, not max_iterations
    rule = next(
        line for line in make_rules(params, "p.yaml").splitlines() if line.startswith(f"results/declared/{NAME}/CoT")
    )
    assert rule.endswith(": p.yaml $(STAMP) results/declared/single-pass/CoT_Nodes+Paths/.inferred | $(SEED)"), rule


def test_a_strategy_registered_later_is_a_valid_value_and_an_unregistered_one_is_refused() -> None:
    from t2c_lib.cli import main
    from t2c_lib.study.params import ParamsError, params_from_dict

    later = "ask-thrice"
    with pytest.raises(ParamsError, match=f"unknown value.*{later}"):
        params_from_dict({"strategies": [later]})
    register_strategy(StrategySpec(later, AskTwice))
    try:
        assert params_from_dict({"strategies": [later]}).strategies == (later,)
        assert later in strategy_names()
        shown = CliRunner().invoke(main, ["run", "--help"]).output
        assert later in shown and NAME in shown
    finally:
        STRATEGIES.unregister(later)
    assert later not in strategy_names()


def test_a_module_that_cannot_be_imported_is_one_line(monkeypatch) -> None:
    from t2c_lib.agent.strategies import StrategyModuleError, strategy_spec

    monkeypatch.setenv(STRATEGY_MODULES_ENV, "tests.no_such_module_here")
    with pytest.raises(StrategyModuleError, match="tests.no_such_module_here.*could not be imported"):
        strategy_spec(NAME)


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env={**os.environ, **env}, cwd=ROOT, timeout=900
    )


@pytest.mark.slow  # subprocesses: the t2c command, a notebook kernel, a loopback endpoint
def test_a_declared_strategy_runs_through_t2c_run_and_the_notebook(tmp_path: Path) -> None:
    from tests.helpers.fault_server import FaultServer

    params_file = tmp_path / "declared.yaml"
    params_file.write_text(yaml.safe_dump(PARAMS))
    results = tmp_path / "results"
    env = {
        STRATEGY_MODULES_ENV: "tests.agent.test_strategy_declarations",
        "T2C_CACHE_DIR": str(tmp_path / "cache"),
        "T2C_RESULTS_DIR": str(results),
        "T2C_FIGURES_DIR": str(tmp_path / "figures"),
        "T2C_MODEL": "",
        "T2C_LLM_MAX_ATTEMPTS": "1",
        "PYTHONPATH": str(ROOT),
    }
    with FaultServer("<cypher>MATCH (k:Kursus) RETURN k.nama</cypher>") as server:  # no label Kursus: refused
        env["T2C_LLM_BASE_URL"] = server.base_url
        ran = _run(["-m", "t2c_lib.cli", "run", "--params", str(params_file), "--prompt", "Few-Shot"], env)
        assert ran.returncode == 0, ran.stderr
        notebook = tmp_path / "01_inference.ipynb"
        args = ["-p", "params_file", str(params_file), "-p", "prompt_type", "CoT", "-p", "strategy", NAME]
        engine = ["-m", "t2c_lib.study.notebook_engine", "--no-progress-bar", "-k", "python3", "--cwd", str(ROOT)]
        executed = _run([*engine, "notebooks/01_inference.ipynb", str(notebook), *args], env)
        assert executed.returncode == 0, executed.stderr[-2000:]
    for configuration in ("Few-Shot_Nodes+Paths", "CoT_Nodes+Paths"):
        cell = results / "declared" / NAME / configuration
        attempts = [json.loads(line) for line in (cell / "attempts.jsonl").read_text().splitlines()]
        assert len(attempts) == 4 and [a["iteration"] for a in attempts].count(2) == 2  # two questions, two tries
        manifest = json.loads((cell / "manifest.json").read_text())
        assert manifest["strategy"] == NAME and manifest["parameters"][OPTION] == 0.3
        assert manifest["strategy_settings"] == {"name": NAME, "temperature": 0.3}
    assert not (results / "declared" / SINGLE_PASS / "CoT_Nodes+Paths" / "attempts.jsonl").exists()  # one cell ran
