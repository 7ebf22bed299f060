"""The agent: its records (`types`), the loop (`loop`) and the strategies (`strategies`).

`types` is a leaf that `validation/`, `feedback/`, `prompts/` and `metrics/` import; the
loop imports those packages. Importing `t2c_lib.agent.types` runs this file first, so the
loop-side names are re-exported lazily (PEP 562 `__getattr__`, in this one place): an eager
import here would start the loop while a validator module is still half-initialised.
`from t2c_lib.agent import X` keeps working for every name it exported as a module.
"""

from __future__ import annotations

from typing import Any

from t2c_lib.agent.types import (
    AGENTIC,
    FEEDBACK,
    KG_VALID_STEPS,
    SINGLE_PASS,
    AgentState,
    AgentStatus,
    Attempt,
    ErrorType,
    ValidationResult,
    Verdict,
    canonical_strategy,
    mode_name,
)

_LAZY = {
    "AgentLoop": "loop",
    "Strategy": "strategies",
    "STRATEGIES": "strategies",
    "STRATEGY_NAMES": "strategies",
    "get_strategy": "strategies",
    "log": "loop",
}

__all__ = [
    "AGENTIC", "FEEDBACK", "KG_VALID_STEPS", "SINGLE_PASS", "AgentState", "AgentStatus", "Attempt", "ErrorType",
    "ValidationResult", "Verdict", "canonical_strategy", "mode_name", *_LAZY,
]


def __getattr__(name: str) -> Any:
    """Load a loop-side name on first use (see the module docstring for why)."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from t2c_lib.agent import loop, strategies  # noqa: F401  (plain imports, so tools/import_cycles.py sees them)

    value = getattr({"loop": loop, "strategies": strategies}[where], name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
