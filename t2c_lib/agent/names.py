"""The strategy names that code outside a strategy's own declaration needs, and the thesis's old name.

- `SINGLE_PASS` and `FEEDBACK` are the thesis's two strategies: the comparison's baseline and its
  loop, a study's default grid (`study.params`), and the default strategy for an iteration budget
  (`default_strategy`: one attempt is single-pass, more is the feedback loop);
- `AGENTIC` is the thesis's name for `feedback`. Parameter files (`modes`), command-line options and
  the folders, manifests, `metrics.csv` and `summary.json` of runs made before the rename still carry
  it, so it stays readable: `LEGACY_STRATEGY_NAMES` maps it and `canonical_strategy` applies the map.
  It is a name on disk, kept for those files, not a strategy of its own.

Every other strategy is named only in its own declaration (`strategies.BUILT_IN`, or a notebook's or
a test's `StrategySpec`). This module imports nothing, so the study's parameters, layout,
manifests and analysis take these names from `agent/` without reaching into a strategy's code.
"""

from __future__ import annotations

SINGLE_PASS = "single-pass"
"""The baseline: one attempt."""
FEEDBACK = "feedback"
"""The thesis's repair loop: error-specific feedback on the last failed attempt."""
AGENTIC = "agentic"
"""The thesis's name for the `feedback` strategy; still read from params, CLI options and old run folders."""

LEGACY_STRATEGY_NAMES = {AGENTIC: FEEDBACK}
"""Old name -> strategy, for what runs before the rename wrote (folders, manifests, tables) and old parameter files."""


def canonical_strategy(name: str) -> str:
    """A strategy name with the legacy alias mapped (`agentic` -> `feedback`)."""
    return LEGACY_STRATEGY_NAMES.get(name, name)


def default_strategy(max_iterations: int) -> str:
    """The default strategy for an iteration budget: `single-pass` for one, else `feedback` (was `agentic`)."""
    return SINGLE_PASS if max_iterations == 1 else FEEDBACK
