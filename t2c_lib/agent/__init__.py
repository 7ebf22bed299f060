"""The agent: the loop (`loop`), the strategies (`strategies`) and their wiring (`build`).

The records the loop writes (`ErrorType`, `ValidationResult`, `Attempt`, `AgentState`) live
below every package in `t2c_lib.records`; they are re-exported here so that
`from t2c_lib.agent import X` keeps working for every name this package exported.
"""

from __future__ import annotations

from t2c_lib.agent.loop import AgentLoop, log
from t2c_lib.agent.strategies import STRATEGIES, STRATEGY_NAMES, Strategy, get_strategy
from t2c_lib.records import (
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
    "Attempt",
    "ErrorType",
    "Strategy",
    "ValidationResult",
    "Verdict",
    "canonical_strategy",
    "get_strategy",
    "log",
    "mode_name",
]
