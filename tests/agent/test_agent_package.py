"""The agent package: its records are a leaf, old imports still work, and no import circle remains."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import ROOT

# every public name `t2c_lib/agent.py` had at commit 2592876
OLD_NAMES = (
    "AgentStatus",
    "ErrorType",
    "KG_VALID_STEPS",
    "ValidationResult",
    "Attempt",
    "SINGLE_PASS",
    "AGENTIC",
    "default_strategy",
    "AgentState",
    "AgentLoop",
    "log",
)


@pytest.mark.parametrize("name", OLD_NAMES)
def test_old_names_still_import_from_the_package(name: str) -> None:
    import t2c_lib.agent as agent

    assert getattr(agent, name) is not None


def test_unknown_name_is_a_clear_attribute_error() -> None:
    import t2c_lib.agent as agent

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        agent.Nope  # noqa: B018


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(m for m in sys.modules if m.startswith('t2c_lib')))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT)
    return set(out.stdout.split())


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_records_import_loads_no_loop_validation_or_prompts() -> None:
    loaded = _loaded_after("import t2c_lib.records")
    assert "t2c_lib.agent.loop" not in loaded
    assert not any(
        m.startswith(("t2c_lib.validation", "t2c_lib.prompts", "t2c_lib.feedback", "t2c_lib.llm")) for m in loaded
    )


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_metrics_import_does_not_load_the_loop() -> None:
    loaded = _loaded_after("import t2c_lib.metrics")
    assert "t2c_lib.agent.loop" not in loaded
    assert "t2c_lib.agent.strategies" not in loaded


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_validation_first_then_loop_imports_cleanly() -> None:
    loaded = _loaded_after("import t2c_lib.validation.chain; from t2c_lib.agent import AgentLoop")
    assert "t2c_lib.agent.loop" in loaded


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_no_import_circles_counting_type_checking_and_function_imports() -> None:
    out = subprocess.run([sys.executable, "tools/import_cycles.py"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout
    assert ", 0 import circle(s)" in out.stdout


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_no_package_circles_counting_the_parent_packages_python_runs_first() -> None:
    """Importing `a.b.c` runs `a/__init__` and `a/b/__init__` first: no package may import one that imports it back."""
    out = subprocess.run(
        [sys.executable, "tools/import_cycles.py", "--with-parents"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stdout
    assert ", 0 import circle(s) (parent packages counted)" in out.stdout
