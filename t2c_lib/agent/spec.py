"""What the study needs to know of a strategy, declared beside the strategy: `StrategySpec`.

A strategy is one class and one `StrategySpec` next to it (`agent/strategies.py` holds the
built-in ones; a notebook or a test may declare more). The spec says

- its name, and the name and one-line description of the loop it runs (`loop_name`: from its
  options where `loop` derives one, `feedback`'s `thesis-loop` / `revise` / `revise-strict`;
  else its `label` or name and `description`), which tables, figures and manifests show;
- its budget rule (`budget`: attempts for a given `max_iterations`);
- whether its cell waits for another strategy's cell of the same configuration, and why
  (`waits_for`, `why`; `answered_by_wait`: every request it makes is that cell's first one,
  so the response cache answers it once that cell has run);
- its options: the study parameters it reads and their defaults (`options`), and how they
  become the strategy's constructor arguments (`configure`);
- whether its later attempts are independent samples of its first request rather than refinements
  of earlier attempts (`samples`: vote's are); the refinement counts of `metrics.agentic` leave
  samples out, and since `metrics/` sits below `agent/` its callers read this and pass it on;
- where it runs in a grid (`run_order`), whether it is one of the thesis's two strategies
  (their cells' manifests record no strategy settings unless an option is on) and its role in
  the comparison (`BASELINE` or `TREATMENT`).

The grid order, the make rules, the parameter check, the command-line choices and the analysis
read these declarations when they run, so a strategy registered after import (a notebook, a
module named in `T2C_STRATEGY_MODULES`) is a runnable one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from t2c_lib.agent.names import LoopName

BASELINE = "baseline"
"""The role of the strategy every other one is compared with (single-pass)."""
TREATMENT = "treatment"
"""The role of the thesis's loop in the headline comparison (feedback)."""

DEFAULT_RUN_ORDER = 50
"""Where a strategy that names no `run_order` runs: after those sharing the thesis loop's first request."""


def up_to_max_iterations(max_iterations: int) -> int:
    """The budget rule of the retry family: at most `max_iterations` attempts."""
    return max_iterations


def one_attempt(max_iterations: int) -> int:
    """The budget rule of single-pass: one attempt, whatever `max_iterations` says."""
    return 1


@dataclass(frozen=True)
class OptionInputs:
    """What `configure` gets: the values of the strategy's options, and the waited-for cell's measured mean calls.

    `waited_mean_calls()` reads that cell's finished questions when called (and raises a one-line
    error when it has none), so a strategy that does not need it never reads it.
    """

    values: Mapping[str, Any]
    waited_mean_calls: Callable[[], float]


def _no_measure() -> float:
    raise LookupError("no waited-for cell to measure")


@dataclass(frozen=True)
class StrategySpec:
    """One strategy's declaration: its constructor and what the study needs to know of it (see the module)."""

    name: str
    make: Callable[..., Any]
    label: str = ""
    budget: Callable[[int], int] = up_to_max_iterations
    waits_for: str | None = None
    why: str = ""
    answered_by_wait: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    configure: Callable[[OptionInputs], dict[str, Any]] | None = None
    samples: bool = False
    run_order: int = DEFAULT_RUN_ORDER
    thesis: bool = False
    role: str = ""
    description: str = ""
    loop: Callable[[Mapping[str, Any]], LoopName] | None = None

    def __call__(self, **options: Any) -> Any:
        """The strategy itself, built with these constructor options."""
        return self.make(**options)

    def attempts(self, max_iterations: int) -> int:
        """The most attempts a question gets under `max_iterations` (the budget rule)."""
        return self.budget(max_iterations)

    @property
    def reads_max_iterations(self) -> bool:
        """Whether `max_iterations` changes this strategy's budget (single-pass: no)."""
        return self.attempts(1) != self.attempts(2)

    @property
    def shown(self) -> str:
        """The name tables and figures show for the strategy with its default options."""
        return self.loop_name().name

    def loop_name(self, values: Mapping[str, Any] | None = None) -> LoopName:
        """The name and description of the loop this strategy runs under parameter `values` (defaults if None)."""
        if self.loop is not None:
            return self.loop({key: (values or {}).get(key, default) for key, default in self.options.items()})
        return LoopName(self.label or self.name, self.description or f"the {self.name} strategy")

    def options_for(
        self, values: Mapping[str, Any], waited_mean_calls: Callable[[], float] = _no_measure
    ) -> dict[str, Any]:
        """The constructor options for these parameter `values` (missing keys take the declared defaults)."""
        if self.configure is None:
            return {}
        mine = {key: values.get(key, default) for key, default in self.options.items()}
        return self.configure(OptionInputs(mine, waited_mean_calls))
