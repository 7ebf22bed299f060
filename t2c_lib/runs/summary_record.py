"""A cell's `summary.json` as a declared record: the evaluation writes `CellSummary`, the analysis reads it back.

One record for writer and readers, so a key is named once (no renaming on the way in or out) and
each fact has one key: the strategy is `strategy` (files before it also wrote `mode`), the loop's one
name is `loop` (derived from the strategy's options; files before it have none and get theirs from the
cell's manifest), the model calls are `llm_calls_per_question` (files before it also wrote
`model_calls_per_question`). Reading an old file maps those keys; unknown keys are dropped.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from t2c_lib.agent.names import canonical_strategy
from t2c_lib.errors import IncompatibleResults
from t2c_lib.runs.runlog import read_json

NAN = float("nan")


@dataclass(frozen=True)
class PresetSummary:
    """One scoring preset's means over a cell's questions (`metrics.summarize`), Pass@1 named by attempt."""

    n: int
    scoring: str
    weights: str
    signature: str
    pass_at_1_first: float
    pass_at_1_final: float
    llmetric: float
    llmetric_q: float = NAN
    jaccard_output: float = NAN
    bleu: float = NAN
    rouge_l_f1: float = NAN
    rouge_l_p: float = NAN
    rouge_l_r: float = NAN
    jaro_winkler: float = NAN
    jaccard_tokens: float = NAN
    jarou: float = NAN
    n_errors: int = 0
    pass_at_1_ts: float | None = None
    n_coincidental: int | None = None

    @classmethod
    def from_means(cls, means: dict[str, Any], pass_at_1_first: float) -> PresetSummary:
        """From `metrics.summarize`'s means (its `pass_at_1` is the final query's) and the first attempts' Pass@1."""
        shared = {f.name: means[f.name] for f in fields(cls) if f.name in means}
        return cls(**{**shared, "pass_at_1_final": means["pass_at_1"], "pass_at_1_first": pass_at_1_first})

    def to_dict(self) -> dict[str, Any]:
        return _without_none(asdict(self))


@dataclass(frozen=True)
class CellSummary:
    """A cell's `summary.json`: who answered, which loop, the headline preset's means, every preset's, the loop's work."""

    configuration: str
    strategy: str
    n: int = 0
    loop: str | None = None
    prompt_type: str = ""
    schema_format: str = ""
    scoring: str = ""
    weights: str = ""
    signature: str = ""
    model_id: str = ""
    max_iterations: int = 0
    kg_valid_structural_first: float = NAN
    kg_valid_chain_first: float = NAN
    kg_valid_structural_final: float = NAN
    kg_valid_chain_final: float = NAN
    pass_at_1_first: float = NAN
    pass_at_1_final: float = NAN
    llmetric: float = NAN
    oracle: float = NAN
    harm_rate: float = NAN
    llm_calls_per_question: float = NAN
    tokens_per_question: float = NAN
    refinement_repeat_rate: float | None = None
    accepted_refinement_repeat_rate: float | None = None
    questions_raised: int = 0
    by_scoring: dict[str, PresetSummary] = field(default_factory=dict)
    agentic: dict[str, Any] = field(default_factory=dict)
    pass_at_1_ts: float | None = None
    n_coincidental: int | None = None
    test_suite: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (`None` fields of a run without a test suite left out; NaN stays NaN)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["by_scoring"] = {name: preset.to_dict() for name, preset in self.by_scoring.items()}
        keep = {"loop", "refinement_repeat_rate", "accepted_refinement_repeat_rate"}  # null is a value here
        return {k: v for k, v in data.items() if v is not None or k in keep}

    @classmethod
    def from_dict(cls, data: Any, where: str = "summary.json") -> CellSummary:
        """A record from a written object, old keys mapped (`mode` -> `strategy`); a damaged one is one line."""
        if not isinstance(data, dict):
            raise IncompatibleResults(f"{where}: not a JSON object; evaluate the cell again")
        strategy = data.get("strategy", data.get("mode"))
        if not isinstance(strategy, str) or not isinstance(data.get("configuration"), str):
            raise IncompatibleResults(f"{where}: no strategy or configuration; evaluate the cell again")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["strategy"] = canonical_strategy(strategy)
        values["by_scoring"] = {
            str(name): _preset(preset, f"{where} by_scoring.{name}")
            for name, preset in (data.get("by_scoring") or {}).items()
        }
        return cls(**values)


def _preset(data: Any, where: str) -> PresetSummary:
    if not isinstance(data, dict):
        raise IncompatibleResults(f"{where}: not a JSON object; evaluate the cell again")
    known = {f.name for f in fields(PresetSummary)}
    try:
        return PresetSummary(**{k: v for k, v in data.items() if k in known})
    except TypeError:
        raise IncompatibleResults(f"{where}: missing means; evaluate the cell again") from None


def _without_none(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


def read_summary(path: Path) -> CellSummary:
    """A cell's `summary.json` as its record (see the module for old files)."""
    return CellSummary.from_dict(read_json(path), str(path))


def is_missing(value: Any) -> bool:
    """A mean with no questions behind it (NaN or None)."""
    return value is None or (isinstance(value, float) and math.isnan(value))
