"""The range of every numeric study parameter: a parameter file is hostile input, so no count is unbounded.

`workers: 100000000` would start that many threads, `test_suite_copies: 100000000` build that many
graph copies, `max_iterations: 1000000000` let one question call the model that often. Each
numeric parameter has a smallest and a largest value here (far above any study's: the published
runs use at most 16 workers, 4 copies, 3 iterations, 512 tokens); a float must also be finite
(`.nan` and `.inf` are refused). `params.py` checks parameter files and overrides with it,
`notebook_params.py` the notebooks' papermill values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Bound:
    """An allowed range: integers or finite numbers from `low` to `high` (`low` itself excluded when `above`)."""

    low: float
    high: float
    integer: bool = True
    above: bool = False
    nullable: bool = False  # None is allowed (it means "not set")
    note: str = ""

    def admits(self, value: Any) -> bool:
        """Whether `value` is a number of the right kind inside the range."""
        if isinstance(value, bool) or not isinstance(value, int if self.integer else (int, float)):
            return False
        if not self.integer and not math.isfinite(value):
            return False
        return (self.low < value if self.above else self.low <= value) and value <= self.high

    def describe(self) -> str:
        """`a positive integer, at most 20`, `a number above 0 and at most 3600`, `a number between 0 and 2`."""
        if self.integer:
            kind = {0: "a non-negative integer", 1: "a positive integer"}.get(int(self.low), "an integer")
            text = (
                f"{kind}, at most {self.high:g}"
                if self.low in (0, 1)
                else f"an integer from {self.low:g} to {self.high:g}"
            )
        else:
            low = f"above {self.low:g} and at most" if self.above else f"between {self.low:g} and"
            text = f"a number {low} {self.high:g}"
        return text + (f" ({self.note})" if self.note else "")


BOUNDS: dict[str, Bound] = {
    "max_iterations": Bound(1, 20),
    "max_tokens": Bound(1, 32768),
    "workers": Bound(1, 256),
    "linking_k": Bound(1, 1000),
    "linking_rel_k": Bound(0, 100),
    "test_suite_copies": Bound(0, 32, note="0: no test-suite accuracy"),
    "repeat_guard_retries": Bound(1, 10, note="extra model calls per refinement"),
    "vote_k": Bound(1, 64, nullable=True, note="or null for feedback's measured mean LLM calls rounded up"),
    "limit": Bound(1, 1_000_000),
    "seed": Bound(0, 2**31 - 1),  # the vote strategy adds its sample number
    "sample_seed": Bound(0, 2**32 - 1),
    "vote_temperature": Bound(0.0, 2.0, integer=False, above=True, note="vote samples need randomness"),
    "temperature_first": Bound(0.0, 2.0, integer=False),
    "temperature_refine": Bound(0.0, 2.0, integer=False),
    "query_timeout_s": Bound(0.0, 3600.0, integer=False, above=True, note="seconds"),
    "requests_per_minute": Bound(0.0, 100_000.0, integer=False, above=True, nullable=True, note="or null for no limit"),
}
"""Every numeric parameter of a parameter file and its range."""


def bound_problem(key: str, value: Any) -> str | None:
    """Why `value` is not allowed for the numeric parameter `key` (naming the range), or None when it is."""
    bound = BOUNDS[key]
    if value is None and bound.nullable:
        return None
    return None if bound.admits(value) else bound.describe()


LATER_OPTION_LIMIT = 1_000_000
"""The largest number (in size) an option of a strategy registered later may have in a parameter file."""


def later_option_problem(value: Any) -> str | None:
    """Why a later strategy's option value is out of bounds (a number that is not finite or past the limit), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) > LATER_OPTION_LIMIT:
        return f"a number between -{LATER_OPTION_LIMIT} and {LATER_OPTION_LIMIT}"
    return None
