"""The agent: the loop (`loop`), the steps a strategy calls (`steps`), the strategies (`strategies`) and their wiring (`build`).

The records the loop writes (`ErrorType`, `ValidationResult`, `Attempt`, `AgentState`) live
below every package in `t2c_lib.records`; they are re-exported here so that
`from t2c_lib.agent import X` keeps working for every name this package exported. The strategy names
code outside a declaration needs (`SINGLE_PASS`, `FEEDBACK`, the thesis's `AGENTIC`) are in `names`.
"""

from __future__ import annotations

from typing import Any

from t2c_lib.agent.loop import AgentLoop
from t2c_lib.agent.names import AGENTIC, FEEDBACK, SINGLE_PASS, canonical_strategy, default_strategy
from t2c_lib.agent.spec import StrategySpec
from t2c_lib.agent.steps import LoopSteps, log
from t2c_lib.agent.strategies import (
    STRATEGIES,
    Strategy,
    get_strategy,
    grid_order,
    register_strategy,
    strategy_names,
    strategy_spec,
)
from t2c_lib.records import (
    KG_VALID_STEPS,
    AgentState,
    AgentStatus,
    Attempt,
    ChainResult,
    ErrorType,
    ValidationResult,
)

__all__ = [
    "AGENTIC",
    "FEEDBACK",
    "KG_VALID_STEPS",
    "SINGLE_PASS",
    "STRATEGIES",
    "STRATEGY_NAMES",
    "AgentLoop",
    "AgentState",
    "AgentStatus",
    "LoopSteps",
    "Attempt",
    "ErrorType",
    "Strategy",
    "StrategySpec",
    "ValidationResult",
    "ChainResult",
    "canonical_strategy",
    "get_strategy",
    "grid_order",
    "log",
    "default_strategy",
    "register_strategy",
    "strategy_names",
    "strategy_spec",
]


def __getattr__(name: str) -> Any:
    if name == "STRATEGY_NAMES":  # read when asked: a strategy registered later is in it
        return strategy_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
