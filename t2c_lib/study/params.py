"""Study parameters (a YAML file under `params/`), checked strictly before anything runs.

Unknown keys or values fail at once with the list of valid ones. Secrets never live here:
endpoints and keys come from the environment (see `t2c_lib/llm/`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2c_lib.agent.names import AGENTIC, FEEDBACK, SINGLE_PASS, canonical_strategy
from t2c_lib.agent.options import OPTION_KEYS, CorrectorKind, LoopOptions, RepairTurns
from t2c_lib.agent.strategies import option_defaults, strategy_names
from t2c_lib.datasets import SPLITS, TEST_SPLIT
from t2c_lib.errors import T2CError
from t2c_lib.files.yaml_file import YamlFileError, read_yaml
from t2c_lib.graph import STORES as STORE_REGISTRY
from t2c_lib.metrics.composite import WEIGHT_SETS
from t2c_lib.metrics.scoring import SCORING_PRESETS
from t2c_lib.prompts.config import PromptType
from t2c_lib.schema import SchemaFormat
from t2c_lib.study.param_bounds import BOUNDS, bound_problem, later_option_problem

PROMPT_TYPES = tuple(p.value for p in PromptType)
THESIS_SCHEMA_FORMATS = tuple(f.value for f in SchemaFormat if not f.per_question)
SCHEMA_FORMATS = tuple(f.value for f in SchemaFormat)
RANKINGS = ("embedding", "lexical", "hybrid")  # t2c_lib.linking.Ranking (not imported here: it loads the embedder)
LEGACY_MODES = (SINGLE_PASS, AGENTIC)
"""The thesis's names, still read from the legacy `modes` key: `agentic` is the `feedback` strategy."""
DECODINGS = ("free", "constrained")
STORES = STORE_REGISTRY.names()
WEIGHT_NAMES = WEIGHT_SETS.names()
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # fullmatch: `$` would let a trailing newline through


class ParamsError(T2CError, ValueError):
    """A parameter file or value is invalid; the message lists the valid choices."""


RUN_ID_RULE = "use letters, digits, '.', '_' or '-', starting with a letter or digit, no '..' (it names a folder)"


def valid_run_id(value: Any) -> bool:
    """A run id names one folder under results/: no separator, no `..`, no newline or other control character."""
    return isinstance(value, str) and _RUN_ID.fullmatch(value) is not None and ".." not in value


def check_run_id(value: Any) -> str:
    """`value` if it is a valid run id; otherwise a one-line `ParamsError` (the id shown escaped and cut short)."""
    if not valid_run_id(value):
        shown = repr(value[:60] if isinstance(value, str) else value)
        raise ParamsError(f"run_id={shown}: {RUN_ID_RULE}")
    return value


@dataclass(frozen=True)
class StudyParams:
    """Everything that decides a run's numbers (recorded in its manifest and signature)."""

    run_id: str = "thesis"
    dataset: str = "kurikulum"
    store: str = "ladybug"
    model: str = "local"
    prompt_types: tuple[str, ...] = PROMPT_TYPES
    schema_formats: tuple[str, ...] = THESIS_SCHEMA_FORMATS
    strategies: tuple[str, ...] = (SINGLE_PASS, FEEDBACK)
    max_iterations: int = 3
    vote_k: int | None = None  # None: the feedback cell's measured mean LLM calls, rounded up
    vote_temperature: float = 0.7
    limit: int | str = "all"
    sample_seed: int = 13
    split: str = TEST_SPLIT  # dev: the dataset's development questions (choose designs there; report on test)
    temperature_first: float = 0.0
    temperature_refine: float = 0.1
    max_tokens: int = 256
    seed: int = 42
    query_timeout_s: float = 10.0
    workers: int = 1
    requests_per_minute: float | None = None
    weights: str = "kg-axel"
    scoring: str = "t2c"  # the headline scoring preset; every registered preset is computed beside it
    test_suite_copies: int = 4  # perturbed graph copies behind pass_at_1_ts (0: none; t2c_lib/metrics/perturb.py)
    schema_descriptions: bool = False  # render schema.yaml's descriptions into the schema text
    linking_k: int = 6  # `retrieved`: elements kept per question
    linking_rel_k: int = 2  # `retrieved`: relationship types always kept
    linking_ranking: str = "embedding"  # `retrieved`: embedding, lexical or hybrid
    value_hints: bool = True  # `retrieved`: name the stored values a question mentions
    decoding: str = (
        "free"  # constrained: replies held to the schema's read-only Cypher grammar (t2c_lib/llm/grammar.py)
    )
    repair_turns: str = "single"  # feedback loop option: single (the thesis), conversation or fresh (agent/options.py)
    repeat_guard: bool = False  # feedback loop option: refuse a refinement that repeats a failed query, ask again
    repeat_guard_retries: int = 2  # the repeat guard's extra calls per refinement
    corrector: str = "none"  # feedback loop option: none or schema (agent/corrector.py before the model repairs)
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_run_id(self.run_id)  # built directly too (notebooks): the id still names one folder under results/

    def option(self, key: str) -> Any:
        """A strategy option's value (`agent.spec.StrategySpec.options`): a field of these parameters, or an option
        a strategy registered later declares (kept in `extra`), else its declared default."""
        if key in VALID_KEYS:
            return getattr(self, key)
        return self.extra.get(STRATEGY_OPTIONS_KEY, {}).get(key, option_defaults().get(key))

    @property
    def loop_options(self) -> LoopOptions:
        """The `feedback` loop's options these parameters set (all off: the thesis loop)."""
        return LoopOptions.from_values({k: getattr(self, k) for k in OPTION_KEYS})

    def to_dict(self) -> dict[str, Any]:
        """The parameters as a manifest records them; the loop options only where they differ from the thesis loop's
        (so a thesis run's manifest stays as it was before the options existed)."""
        data = dataclasses.asdict(self)
        data.pop("extra")
        data.update({k: list(v) for k, v in data.items() if isinstance(v, tuple)})
        changed = self.loop_options.changed()
        for key in OPTION_KEYS:
            if key not in changed and not (key == "repeat_guard_retries" and self.repeat_guard):
                data.pop(key)
        if data["split"] == TEST_SPLIT:
            data.pop("split")  # a test run's manifest stays as it was before splits existed
        defaults = option_defaults()
        for key, value in self.extra.get(STRATEGY_OPTIONS_KEY, {}).items():
            if value != defaults.get(key):  # a later strategy's option, recorded only where it is set
                data[key] = value
        return data

    def with_overrides(self, **overrides: Any) -> StudyParams:
        """A copy with some values replaced (None means keep), checked like a file (`modes` means `strategies`)."""
        if overrides.get("modes") is not None:
            if overrides.get("strategies") is not None:
                raise ParamsError("overrides: give 'strategies' or the old 'modes', not both")
            modes = overrides.pop("modes")
            _check("modes", modes, "overrides")
            overrides["strategies"] = [canonical_strategy(m) for m in ([modes] if isinstance(modes, str) else modes)]
        overrides.pop("modes", None)
        merged = {**self.to_dict(), **{k: v for k, v in overrides.items() if v is not None}}
        return params_from_dict(merged, source="overrides")


VALID_KEYS = tuple(f.name for f in dataclasses.fields(StudyParams) if f.name != "extra")
STRATEGY_OPTIONS_KEY = "strategy_options"
"""The key of `StudyParams.extra` holding options of strategies registered after import (not fields here)."""


def __getattr__(name: str) -> Any:
    if name == "STRATEGIES":  # read when asked: a strategy registered later is a valid value
        return strategy_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


LEGACY_KEYS = ("modes",)
"""Keys still read: `modes: [single-pass, agentic]` means `strategies: [single-pass, feedback]`."""


def load_params(path: str | Path) -> StudyParams:
    """Read and check a parameter file."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: parameter file not found")
    try:
        raw = read_yaml(path) or {}
    except YamlFileError as exc:
        raise ParamsError(str(exc)) from None
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: expected a mapping of parameters")
    return params_from_dict(raw, source=str(path))


def params_from_dict(raw: dict[str, Any], source: str = "params") -> StudyParams:
    """Check a mapping of parameters; every problem names the key and the valid values."""
    declared = option_defaults()
    unknown = sorted(set(raw) - set(VALID_KEYS) - set(LEGACY_KEYS) - set(declared))
    if unknown:
        valid = (*VALID_KEYS, *(k for k in declared if k not in VALID_KEYS))
        raise ParamsError(f"{source}: unknown parameter(s) {', '.join(unknown)} (valid: {', '.join(valid)})")
    raw = dict(raw)
    later = {key: raw.pop(key) for key in list(raw) if key not in VALID_KEYS and key not in LEGACY_KEYS}
    if "modes" in raw:
        if "strategies" in raw and raw["modes"] is not None:
            raise ParamsError(f"{source}: give 'strategies' or the old 'modes', not both")
        modes = raw.pop("modes")
        if modes is not None:
            _check("modes", modes, source)
            raw["strategies"] = [canonical_strategy(m) for m in ([modes] if isinstance(modes, str) else modes)]
    if "strategies" in raw and raw["strategies"] is not None:
        names = [raw["strategies"]] if isinstance(raw["strategies"], str) else list(raw["strategies"] or [])
        raw["strategies"] = [canonical_strategy(m) for m in names]
    values: dict[str, Any] = {}
    for key, value in raw.items():
        values[key] = _check(key, value, source)
    for key, value in later.items():  # a later strategy's option: its own checks come when it is built
        if (why := later_option_problem(value)) is not None:
            raise ParamsError(f"{source}: {key}={value!r}: {why}")
    if later:
        values["extra"] = {STRATEGY_OPTIONS_KEY: later}
    return StudyParams(**values)


def _canonical(key: str, value: Any) -> Any:
    """Thesis and snake_case spellings alike: `Nodes+Paths` -> `nodes_paths`, `zero_shot` -> `Zero-Shot`."""
    if not isinstance(value, str):
        return value
    try:
        if key == "schema_formats":
            return SchemaFormat.parse(value.strip()).value
        if key == "prompt_types":
            return PromptType.parse(value).value
    except ValueError:
        pass
    return value


def _check(key: str, value: Any, source: str) -> Any:
    def fail(why: str) -> ParamsError:
        return ParamsError(f"{source}: {key}={value!r}: {why}")

    choices = {
        "prompt_types": PROMPT_TYPES,
        "schema_formats": SCHEMA_FORMATS,
        "modes": LEGACY_MODES,
        "strategies": strategy_names(),
    }
    if key in choices:
        items = [value] if isinstance(value, str) else list(value or [])
        if not items:
            raise fail("needs at least one value")
        items = [_canonical(key, v) for v in items]
        bad = [v for v in items if v not in choices[key]]
        if bad:
            raise fail(f"unknown value(s) {', '.join(map(str, bad))} (valid: {', '.join(choices[key])})")
        return tuple(dict.fromkeys(items))
    one_of = {
        "store": STORES,
        "weights": WEIGHT_NAMES,
        "scoring": SCORING_PRESETS.names(),
        "repair_turns": tuple(m.value for m in RepairTurns),
        "corrector": tuple(m.value for m in CorrectorKind),
        "decoding": DECODINGS,
        "linking_ranking": RANKINGS,
    }
    if key in one_of:
        if value not in one_of[key]:
            raise fail(f"valid: {', '.join(one_of[key])}")
        return value
    if key == "split":
        if value not in SPLITS:
            raise fail(f"valid: {', '.join(SPLITS)} (test: the reported ground truth; dev: data/<dataset>/dev/)")
        return value
    if key == "run_id":
        if not valid_run_id(value):
            raise fail(RUN_ID_RULE)
        return value
    if key in ("dataset", "model", "description"):
        if not isinstance(value, str) or (key != "description" and not value.strip()):
            raise fail("must be a non-empty string")
        return value
    if key == "limit":
        if value in (None, "all"):
            return "all"
        if bound_problem("limit", value) is not None:
            raise fail(f"a positive integer or 'all' (at most {BOUNDS['limit'].high:g})")
        return value
    if key in ("schema_descriptions", "value_hints", "repeat_guard"):
        if not isinstance(value, bool):
            raise fail("true or false")
        return value
    return _check_number(key, value, fail)


def _check_number(key: str, value: Any, fail: Callable[[str], ParamsError]) -> Any:
    """The numeric parameters' checks (counts, seeds, temperatures, seconds, rates): each within its range
    (`param_bounds.BOUNDS`), floats finite."""
    if key in BOUNDS:
        why = bound_problem(key, value)
        if why is not None:
            raise fail(why)
        return float(value) if value is not None and not BOUNDS[key].integer else value
    raise fail("not checked")  # pragma: no cover - VALID_KEYS and _check cover the same keys
