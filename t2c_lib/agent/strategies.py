"""The strategies: how a question's attempts follow one another, one small class each, in a registry.

| name | what it does | LLM calls per question |
| --- | --- | --- |
| `single-pass` | one attempt | 1 |
| `feedback` | the thesis loop (was `agentic`): error-specific feedback on the last failed attempt | 1..max_iterations |
| `history` | each retry shows *all* earlier failed attempts with their errors, plus the schema | 1..max_iterations |
| `raw-error` | ablation: the retry gets only the database's or validator's own message | 1..max_iterations |
| `verifier` | a second call audits the query (JSON `approved/issues/corrected_query`); up to 2 corrections | 1..3 |
| `vote` | k samples at temperature > 0; the most frequent result among valid samples wins | k |

`feedback` takes loop options (`options.py`: `repair_turns`, `repeat_guard`, `corrector`), each off by
default; off is the thesis loop exactly, on runs `revise.solve`. Results name the loop, not the strategy:
`thesis-loop` (every option off), `revise` and `revise-strict` (the options of `params/thesis-revise.yaml`
and `params/thesis-strict.yaml`), `feedback-<tag>` for any other combination (`LoopOptions.loop_name`);
every other strategy's loop is its own name (`loop_name`, `recorded_loop`).

The first four and `verifier` begin with the same request (the prompt builder's `initial`
at `temperature`), so the response cache serves it once and they pair with single-pass.
Strategies never import the loop; the loop passes itself in (`solve(loop, state, ctx)`), typed as the
`steps.LoopSteps` it is (the shared steps: ask, validate, record, choose, feedback).

Each strategy's `StrategySpec` (`agent/spec.py`: budget rule, the cell it waits for and why, its options
and their defaults, run order) is declared in `BUILT_IN` below; the study reads the registry when it runs.
`register_strategy` adds one (a notebook's, a test's), and `T2C_STRATEGY_MODULES` names modules that do so
in every process (`t2c run`, the notebooks' kernels).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from t2c_lib.agent.names import AGENTIC, FEEDBACK, LEGACY_STRATEGY_NAMES, SINGLE_PASS, LoopName
from t2c_lib.agent.options import OPTION_KEYS, LoopOptions
from t2c_lib.agent.spec import BASELINE, TREATMENT, OptionInputs, StrategySpec, one_attempt
from t2c_lib.agent.steps import LoopSteps, Strategy
from t2c_lib.errors import InvalidValue
from t2c_lib.files.outputs import decode_json
from t2c_lib.llm.parse import ParsedResponse, QuerySource, parse_response
from t2c_lib.prompts.strategies import FailedAttempt, history_messages, strategy_template_hashes, verification_messages
from t2c_lib.records import AgentState, AgentStatus, Attempt, AttemptKind, ChainResult
from t2c_lib.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.validation.base import ValidationContext


# --- single-pass and the retry family ----------------------------------------------------------


class _Retry:
    """Generate, validate, and while it fails (and budget remains) ask again with `retry_messages`."""

    name = ""
    templates: tuple[str, ...] = ()

    def attempts(self, loop: LoopSteps) -> int:
        return loop.max_iterations

    def solve(self, loop: LoopSteps, state: AgentState, ctx: ValidationContext) -> None:
        messages = loop.prompts.initial(state.question)
        temperature = loop.temperature
        budget = self.attempts(loop)
        for iteration in range(1, budget + 1):
            loop.set_status(state, AgentStatus.GENERATING)
            exchange = loop.ask(state, messages, temperature)
            parsed = exchange.parsed
            loop.set_status(state, AgentStatus.VALIDATING)
            checked = loop.validate(ctx, parsed)
            note = self.note(loop, state, parsed, checked)
            last = iteration == budget
            status = AgentStatus.SUCCESS if checked.ok else (AgentStatus.FAILED if last else AgentStatus.REFINING)
            loop.record(state, exchange, checked, status=status, feedback=note)
            if checked.ok or last:
                return
            loop.set_status(state, AgentStatus.REFINING)
            messages = self.retry_messages(loop, state, parsed, note or "")
            temperature = loop.refine_temperature

    def note(self, loop: LoopSteps, state: AgentState, parsed: ParsedResponse, checked: ChainResult) -> str | None:
        """What a retry is told about this attempt's failure (recorded as the attempt's `feedback`)."""
        return loop.feedback_text(state, parsed, checked)

    def retry_messages(self, loop: LoopSteps, state: AgentState, parsed: ParsedResponse, note: str) -> list:
        return loop.prompts.refinement(state.question, parsed.query, note)

    def signature(self, loop: LoopSteps) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "attempts": self.attempts(loop)}
        if self.templates:
            out["templates"] = strategy_template_hashes(loop.prompts.language, self.templates)
        return out


class SinglePass(_Retry):
    """One attempt, nothing else (the baseline)."""

    name = SINGLE_PASS

    def attempts(self, loop: LoopSteps) -> int:
        return 1


class Feedback(_Retry):
    """The thesis loop: error-specific structured feedback on the last failed attempt.

    `options` (`agent/options.LoopOptions`: conversation turns, the repeat guard, the schema
    corrector) are off by default, and off is the thesis loop exactly; any option on runs
    `agent/revise.solve` and is named in the strategy's signature.
    """

    name = FEEDBACK

    def __init__(self, options: LoopOptions | None = None) -> None:
        self.options = options if options is not None else LoopOptions()

    def solve(self, loop: LoopSteps, state: AgentState, ctx: ValidationContext) -> None:
        if self.options.is_default:
            super().solve(loop, state, ctx)
            return
        from t2c_lib.agent.revise import solve

        solve(self.options, loop, state, ctx)

    def signature(self, loop: LoopSteps) -> dict[str, Any]:
        out = super().signature(loop)
        if not self.options.is_default:
            from t2c_lib.prompts.repair import repair_template_hashes

            out["options"] = self.options.signature()
            out["templates"] = repair_template_hashes(loop.prompts.language)
        return out


def raw_message(checked: ChainResult) -> str:
    """The failing validator's (or the database's) own message, nothing added."""
    if checked.failed is None:
        return ""
    return checked.failed.message or (checked.failed.error_type.value if checked.failed.error_type else "")


class RawError(_Retry):
    """Ablation of `feedback`: the retry sees only the raw error message (no templates, hints or suggestions)."""

    name = "raw-error"

    def note(self, loop: LoopSteps, state: AgentState, parsed: ParsedResponse, checked: ChainResult) -> str | None:
        return None if checked.ok else raw_message(checked)


class History(_Retry):
    """Every retry shows all earlier failed attempts (query and error) and a schema reminder."""

    name = "history"
    templates = ("history",)

    def note(self, loop: LoopSteps, state: AgentState, parsed: ParsedResponse, checked: ChainResult) -> str | None:
        if checked.ok or checked.failed is None:
            return None
        kind = checked.failed.error_type.value if checked.failed.error_type else checked.failed.validator
        return f"{kind}: {raw_message(checked)}"

    def retry_messages(self, loop: LoopSteps, state: AgentState, parsed: ParsedResponse, note: str) -> list:
        failures = [FailedAttempt(a.query, a.feedback or "") for a in state.attempts if not a.ok]
        return history_messages(loop.prompts, state.question, failures)


# --- verifier -----------------------------------------------------------------------------------

MAX_CORRECTIONS = 2

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_verdict(text: str) -> dict[str, Any]:
    """The verifier's JSON `{approved, issues, corrected_query}`; `approved` is None when unreadable."""
    match = _JSON_OBJECT.search(text or "")
    data: Any = None
    if match:
        try:
            data = decode_json(match.group(0))
        except json.JSONDecodeError:
            data = None
    if not isinstance(data, dict) or not isinstance(data.get("approved"), bool):
        return {
            "approved": None,
            "issues": [],
            "corrected_query": "",
            "note": "no JSON verdict with a boolean 'approved'",
        }
    issues = data.get("issues")
    corrected = data.get("corrected_query")
    return {
        "approved": data["approved"],
        "issues": [str(i) for i in issues] if isinstance(issues, list) else ([str(issues)] if issues else []),
        "corrected_query": corrected.strip() if isinstance(corrected, str) else "",
        "note": "",
    }


class Verifier:
    """Generate once; a second call audits the query and may correct it (at most twice); the chain judges each."""

    name = "verifier"

    def solve(self, loop: LoopSteps, state: AgentState, ctx: ValidationContext) -> None:
        messages = loop.prompts.initial(state.question)
        loop.set_status(state, AgentStatus.GENERATING)
        exchange = loop.ask(state, messages, loop.temperature)
        parsed = exchange.parsed
        loop.set_status(state, AgentStatus.VALIDATING)
        checked = loop.validate(ctx, parsed)
        if not parsed.query:  # nothing to audit
            loop.record(state, exchange, checked, status=AgentStatus.FAILED)
            return
        loop.record(state, exchange, checked, status=AgentStatus.REFINING)
        query = parsed.query
        for correction in range(1, MAX_CORRECTIONS + 1):
            loop.set_status(state, AgentStatus.REFINING)
            audit_messages = verification_messages(loop.prompts, state.question, query)
            audit = loop.ask(state, audit_messages, loop.temperature)
            judged = parse_verdict(audit.completion.text)
            corrected = parse_response(judged["corrected_query"]).query if judged["corrected_query"] else ""
            changes = judged["approved"] is False and corrected and corrected != query
            if changes:
                query = corrected
                checked = loop.validate(ctx, ParsedResponse(query, source=QuerySource.CYPHER_TAG))
            done = not changes or correction == MAX_CORRECTIONS
            status = (AgentStatus.SUCCESS if checked.ok else AgentStatus.FAILED) if done else AgentStatus.REFINING
            shown = ParsedResponse(
                query,
                source=QuerySource.CYPHER_TAG,
                reason=""
                if changes
                else "kept: " + ("approved" if judged["approved"] else judged["note"] or "no usable correction"),
            )
            loop.record(
                state,
                replace(audit, parsed=shown),
                checked if changes else _carry(checked),
                status=status,
                kind=AttemptKind.VERIFY,
                verdict_json={k: v for k, v in judged.items() if k != "note"},
            )
            if done:
                return

    def signature(self, loop: LoopSteps) -> dict[str, Any]:
        return {
            "name": self.name,
            "max_corrections": MAX_CORRECTIONS,
            "templates": strategy_template_hashes(loop.prompts.language, ("verify",)),
        }


def _carry(checked: ChainResult) -> ChainResult:
    """The same chain result for an unchanged query, its validation time not counted twice."""
    return replace(checked, elapsed_s=0.0)


# --- vote ---------------------------------------------------------------------------------------

VOTE_TEMPERATURE = 0.7


def result_key(result: Any) -> str:
    """A canonical form of an execution result for voting: rows as a bag, column names ignored."""
    rows = result.to_json()["rows"] if result is not None else []
    return json.dumps(sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in rows), ensure_ascii=False)


def vote_k_from_calls(mean_calls: float) -> int:
    """k for `vote` at `feedback`'s budget: its measured mean LLM calls per question, rounded up."""
    if not mean_calls or mean_calls <= 0:
        raise ValueError(f"the mean number of LLM calls must be positive, got {mean_calls!r}")
    return max(1, math.ceil(round(mean_calls, 9)))


@dataclass
class Vote:
    """Self-consistency: k samples at `temperature` (seeds base+0..k-1), each through the chain; most frequent result wins.

    Among samples that pass the whole chain, the execution results are grouped as bags of
    rows; the largest group wins, ties going to the group seen first; its first sample is
    the answer. With no valid sample the first sample is the answer. `k=None` uses
    `max_iterations` (the study sets k from the `feedback` cell's measured mean calls).
    """

    k: int | None = None
    temperature: float = VOTE_TEMPERATURE
    name: str = field(default="vote", init=False)

    def samples(self, loop: LoopSteps) -> int:
        return self.k if self.k is not None else loop.max_iterations

    def solve(self, loop: LoopSteps, state: AgentState, ctx: ValidationContext) -> None:
        k = self.samples(loop)
        base = _model_seed(loop.model)
        messages = loop.prompts.initial(state.question)
        votes: dict[str, list[tuple[Attempt, ChainResult]]] = {}
        samples: list[tuple[Attempt, ChainResult]] = []
        for i in range(k):
            loop.set_status(state, AgentStatus.GENERATING)
            exchange = loop.ask(state, messages, self.temperature, seed=base + i)
            loop.set_status(state, AgentStatus.VALIDATING)
            checked = loop.validate(ctx, exchange.parsed)
            last = i == k - 1
            valid_after = bool(votes) or checked.ok  # the last sample's status says how the vote ends
            status = AgentStatus.REFINING if not last else (AgentStatus.SUCCESS if valid_after else AgentStatus.FAILED)
            attempt = loop.record(state, exchange, checked, status=status)
            samples.append((attempt, checked))
            if checked.ok:
                votes.setdefault(result_key(checked.result), []).append((attempt, checked))
        if votes:
            winner = max(votes.values(), key=len)  # max keeps the first of equal lengths: ties go to the earliest group
            loop.choose(state, *winner[0])
        elif samples:
            loop.choose(state, *samples[0])

    def signature(self, loop: LoopSteps) -> dict[str, Any]:
        return {
            "name": self.name,
            "k": self.samples(loop),
            "temperature": self.temperature,
            "seeds": f"model seed + 0..{self.samples(loop) - 1}",
        }


def _model_seed(model: Any) -> int:
    seed = getattr(model, "seed", None)
    return int(seed) if isinstance(seed, int) else 0


# --- the declarations and the registry ----------------------------------------------------------

_SHARED_FIRST = "begins with the request the feedback cell makes first: the response cache answers it once"


def _feedback_options(inputs: OptionInputs) -> dict[str, Any]:
    options = LoopOptions.from_values(dict(inputs.values))
    return {} if options.is_default else {"options": options}


def _feedback_loop(values: Mapping[str, Any]) -> LoopName:
    return LoopOptions.from_values(dict(values)).loop_name()


def _vote_options(inputs: OptionInputs) -> dict[str, Any]:
    k = inputs.values["vote_k"]
    if k is None:
        k = vote_k_from_calls(inputs.waited_mean_calls())
    return {"k": k, "temperature": inputs.values["vote_temperature"]}


_LOOP_OPTION_DEFAULTS = {key: getattr(LoopOptions(), key) for key in OPTION_KEYS}
BUILT_IN: tuple[StrategySpec, ...] = (
    StrategySpec(
        SINGLE_PASS,
        SinglePass,
        label=SINGLE_PASS,
        description="one attempt, no repair",
        budget=one_attempt,
        waits_for=FEEDBACK,
        why=_SHARED_FIRST + " and the pair is question by question",
        answered_by_wait=True,
        run_order=40,
        thesis=True,
        role=BASELINE,
    ),
    StrategySpec(
        FEEDBACK,
        Feedback,
        options={k: v.value if hasattr(v, "value") else v for k, v in _LOOP_OPTION_DEFAULTS.items()},
        configure=_feedback_options,
        loop=_feedback_loop,
        run_order=0,
        thesis=True,
        role=TREATMENT,
    ),
    StrategySpec(
        "history",
        History,
        waits_for=FEEDBACK,
        why=_SHARED_FIRST,
        run_order=10,
        description="each retry shows every earlier failed attempt with its error, and the schema",
    ),
    StrategySpec(
        "raw-error",
        RawError,
        waits_for=FEEDBACK,
        why=_SHARED_FIRST,
        run_order=20,
        description="ablation: each retry gets only the database's or validator's own message",
    ),
    StrategySpec(
        "verifier",
        Verifier,
        waits_for=FEEDBACK,
        why=_SHARED_FIRST,
        run_order=30,
        description="a second call audits the query and may correct it, at most twice",
    ),
    StrategySpec(
        "vote",
        Vote,
        waits_for=FEEDBACK,
        why="measures k from the feedback cell's mean LLM calls (or set vote_k in the parameters)",
        options={"vote_k": None, "vote_temperature": VOTE_TEMPERATURE},
        configure=_vote_options,
        samples=True,
        run_order=60,
        description="k samples at temperature > 0; the most frequent result among valid samples wins",
    ),
)

STRATEGIES: Registry[StrategySpec] = Registry(
    "strategy", aliases=LEGACY_STRATEGY_NAMES, note=f"{AGENTIC!r} means {FEEDBACK!r}"
)
"""Strategy name -> its `StrategySpec` (callable: `STRATEGIES.get(name)(**options)` builds the strategy)."""
for _spec in BUILT_IN:
    STRATEGIES.register(_spec.name, _spec)

STRATEGY_MODULES_ENV = "T2C_STRATEGY_MODULES"
"""Comma-separated modules that declare more strategies (imported before the registry is read): the way a
strategy declared outside t2c_lib reaches `t2c run`, `make all` and the notebooks' kernels."""
_loaded: set[str] = set()


class StrategyModuleError(InvalidValue):
    """A module named in `T2C_STRATEGY_MODULES` cannot be imported."""


def load_strategy_modules() -> None:
    """Import the modules `T2C_STRATEGY_MODULES` names (once each); a module that fails is a one-line error."""
    for name in (n.strip() for n in os.environ.get(STRATEGY_MODULES_ENV, "").split(",")):
        if not name or name in _loaded:
            continue
        _loaded.add(name)
        try:
            importlib.import_module(name)
        except Exception as exc:  # any import failure: say which module and why, in one line
            _loaded.discard(name)
            raise StrategyModuleError(
                f"{STRATEGY_MODULES_ENV}: module {name!r} could not be imported ({type(exc).__name__}: {exc})"
            ) from None


def register_strategy(spec: StrategySpec) -> StrategySpec:
    """Add a strategy (a notebook's or a test's) to the registry; a name already taken fails."""
    return STRATEGIES.register(spec.name, spec)


def strategy_names() -> tuple[str, ...]:
    """Every registered strategy, read now (after `T2C_STRATEGY_MODULES`), in registration order."""
    load_strategy_modules()
    return STRATEGIES.names()


def strategy_spec(name: str) -> StrategySpec:
    """The declaration of strategy `name` (`agentic` is `feedback`); unknown names list the valid ones."""
    load_strategy_modules()
    return STRATEGIES.get(name)


def grid_order(names: Sequence[str]) -> list[str]:
    """`names` in run order: `run_order`, then registration order (feedback first, vote last among the built-ins)."""
    load_strategy_modules()
    registered = STRATEGIES.names()
    return sorted(names, key=lambda n: (STRATEGIES.get(n).run_order, registered.index(STRATEGIES.canonical(n))))


def role_name(role: str) -> str:
    """The strategy that plays `role` (`spec.BASELINE` or `spec.TREATMENT`)."""
    load_strategy_modules()
    return next(name for name, spec in STRATEGIES.items() if spec.role == role)


def option_defaults() -> dict[str, Any]:
    """Every strategy option (a study parameter) of every registered strategy, with its declared default."""
    load_strategy_modules()
    return {key: value for _, spec in STRATEGIES.items() for key, value in spec.options.items()}


class LoopNameMismatch(InvalidValue):
    """A cell's recorded loop name is not the one its recorded options make: its results are refused."""


def loop_name(strategy: str, values: Mapping[str, Any] | None = None) -> LoopName:
    """The loop strategy `strategy` runs under parameter `values`: its one name and description."""
    return strategy_spec(strategy).loop_name(values)


def recorded_loop(manifest: Mapping[str, Any], where: str = "") -> LoopName:
    """The loop a cell's manifest ran (from its strategy and parameters); a recorded `loop` that disagrees is refused.

    Manifests made before the name was recorded have no `loop`: theirs is derived, so old runs keep loading.
    """
    strategy = manifest.get("strategy", manifest.get("mode")) or FEEDBACK
    derived = loop_name(strategy, manifest.get("parameters") or {})
    check_loop(derived, manifest.get("loop"), where)
    return derived


def check_loop(derived: LoopName, recorded: Any, where: str = "") -> None:
    """Refuse a recorded loop name (`None`: not recorded) other than the one the options make."""
    if recorded is not None and recorded != derived.name:
        place = f"{where}: " if where else ""
        raise LoopNameMismatch(
            f"{place}records loop {str(recorded)[:60]!r} but its options make loop {derived.name!r}; "
            "evaluate the cell again from its attempts"
        )


def get_strategy(name: str, **options: Any) -> Strategy:
    """A strategy by name (`agentic` is `feedback`); unknown names list the valid ones."""
    return strategy_spec(name)(**options)


def __getattr__(name: str) -> Any:
    if name == "STRATEGY_NAMES":  # read when asked, so a strategy registered later is in it
        return strategy_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
