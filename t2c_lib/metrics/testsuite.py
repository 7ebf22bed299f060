"""Test-suite accuracy: a prediction is right only if it is right on every perturbed copy too.

After Spider's test-suite evaluation, for graphs. A prediction counts correct under
`pass_at_1_ts` if it is equivalent to the gold (eq:v3, the gold query's ordering) on the
original graph and on every perturbed copy (`t2c_lib.metrics.perturb`) where the gold's answer is
non-empty; copies where the gold fails, times out or returns nothing say nothing and are
skipped. A prediction correct on the original graph that fails on some copy is a
*coincidental match*. The copies are embedded stores built once per dataset version and
cached (like the gold screen's reversed copy); gold results on them are kept in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from t2c_lib.datasets import Dataset
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S, GraphStore, QueryResult
from t2c_lib.metrics.output import Execution, execute
from t2c_lib.metrics.perturb import copy_plan, perturb, variant_name
from t2c_lib.metrics.scoring import get_scoring

DEFAULT_COPIES = 4
COPY_SCORING = "t2c"
"""The scoring preset whose Pass@1 judges a prediction on each copy (t2c's eq:v3, whatever the headline preset)."""


@dataclass(frozen=True)
class SuiteVerdict:
    """A prediction's outcome on the copies: which were checked and which it failed."""

    checked: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.failed


@dataclass
class TestSuite:
    """The perturbed copies of one dataset version, each an embedded store."""

    __test__ = False  # not a pytest test class

    copies: list[tuple[str, GraphStore]]
    _gold: dict[tuple[str, str], Execution] = field(default_factory=dict)

    @classmethod
    def open(cls, dataset: Dataset, k: int = DEFAULT_COPIES, seed: int = 0, root: Path | None = None) -> TestSuite:
        """Build (or reuse from the cache) `k` copies of `dataset`, kinds in turn (`copy_plan`)."""
        from t2c_lib.graph.ladybug import LadybugStore

        copies: list[tuple[str, GraphStore]] = []
        for index, (kind, copy_seed) in enumerate(copy_plan(k, seed)):
            variant = variant_name(kind, index, copy_seed)
            copies.append((variant, LadybugStore(perturb(dataset, kind, copy_seed), root=root, variant=variant)))
        return cls(copies)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.copies]

    def gold(self, name: str, store: GraphStore, gold_query: str, timeout_s: float) -> Execution:
        """The gold query's result on one copy (computed once)."""
        key = (name, gold_query)
        if key not in self._gold:
            self._gold[key] = execute(store, gold_query, timeout_s)
        return self._gold[key]

    def check(self, gold_query: str, generated_query: str | None, timeout_s: float = DEFAULT_TIMEOUT_S) -> SuiteVerdict:
        """Run the prediction on every copy where the gold has a non-empty answer; name the copies it fails."""
        rules = get_scoring(COPY_SCORING)
        checked, failed = [], []
        for name, store in self.copies:
            gold = self.gold(name, store, gold_query, timeout_s)
            if not _answers(gold.result):
                continue
            checked.append(name)
            generated = execute(store, generated_query, timeout_s).result
            if not rules.pass_at_1(gold_query, gold.result, generated, generated_query or ""):
                failed.append(name)
        return SuiteVerdict(tuple(checked), tuple(failed))

    def close(self) -> None:
        for _, store in self.copies:
            store.close()


def _answers(result: QueryResult | None) -> bool:
    """Whether a gold result is an answer worth checking against: it ran and has a row."""
    return result is not None and bool(result.rows)


__all__ = ["DEFAULT_COPIES", "SuiteVerdict", "TestSuite"]
