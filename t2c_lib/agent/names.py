"""The strategy names that code outside a strategy's own declaration needs, and the thesis's old name.

- `SINGLE_PASS` and `FEEDBACK` are the thesis's two strategies: the comparison's baseline and its
  loop, a study's default grid (`study.params`), and the default strategy for an iteration budget
  (`default_strategy`: one attempt is single-pass, more is the feedback loop);
- `AGENTIC` is the thesis's name for `feedback`. Parameter files (`modes`), command-line options and
  the folders, manifests, `metrics.csv` and `summary.json` of runs made before the rename still carry
  it, so it stays readable: `LEGACY_STRATEGY_NAMES` maps it and `canonical_strategy` applies the map.
  It is a name on disk, kept for those files, not a strategy of its own.

The loops have names of their own (`THESIS_LOOP`, `REVISE`, `REVISE_STRICT`, `LoopName`): what every
figure, table, manifest and `metrics.csv` row calls the loop that made it, derived from the strategy's
options (`options.LoopOptions.loop_name`) so that a revising loop is never shown as the thesis's.

Every other strategy is named only in its own declaration (`strategies.BUILT_IN`, or a notebook's or
a test's `StrategySpec`). This module imports nothing of t2c, so the study's parameters, layout,
manifests and analysis take these names from `agent/` without reaching into a strategy's code.
"""

from __future__ import annotations

from dataclasses import dataclass

SINGLE_PASS = "single-pass"
"""The baseline: one attempt."""
FEEDBACK = "feedback"
"""The thesis's repair loop: error-specific feedback on the last failed attempt."""
VOTE = "vote"
"""Self-consistency: k samples through the chain, the most frequent result wins (chat's loop since issue 53)."""
AGENTIC = "agentic"
"""The thesis's name for the `feedback` strategy; still read from params, CLI options and old run folders."""

THESIS_LOOP = "thesis-loop"
"""The loop's name for `feedback` with every option off: the thesis's own agentic loop."""
REVISE = "revise"
"""The loop's name for the first revising loop (`params/thesis-revise.yaml`'s options)."""
REVISE_STRICT = "revise-strict"
"""The loop's name for the second revising loop (`params/thesis-strict.yaml`'s options)."""


@dataclass(frozen=True)
class LoopName:
    """What a cell's loop is called wherever a result appears, and one line saying what it does.

    Derived from the strategy and its options (`StrategySpec.loop_name`), never declared per run,
    so a figure, a table and a manifest of the same cell cannot disagree.
    """

    name: str
    description: str


LEGACY_STRATEGY_NAMES = {AGENTIC: FEEDBACK}
"""Old name -> strategy, for what runs before the rename wrote (folders, manifests, tables) and old parameter files."""


def canonical_strategy(name: str) -> str:
    """A strategy name with the legacy alias mapped (`agentic` -> `feedback`)."""
    return LEGACY_STRATEGY_NAMES.get(name, name)


def default_strategy(max_iterations: int) -> str:
    """The default strategy for an iteration budget: `single-pass` for one, else `feedback` (was `agentic`)."""
    return SINGLE_PASS if max_iterations == 1 else FEEDBACK
