"""The wiring of one loop, in one place: schema text -> prompts, feedback, validator chain, context -> `AgentLoop`.

`t2c ask`, `t2c chat` (and the `Session` API) and the study's `infer` all build their loop
here, so a question meets the same prompts, the same read-only walls and the same
feedback wherever it is asked; `loop_strategy` turns a strategy name and the feedback
loop's options (`agent.options`) into what `build_loop` takes, for `t2c ask` and `t2c chat` alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from t2c_lib.agent.loop import AgentLoop
from t2c_lib.agent.options import OPTION_KEYS, LoopOptions
from t2c_lib.errors import InvalidValue
from t2c_lib.feedback.builder import FeedbackBuilder
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S
from t2c_lib.linking import LinkingSettings, schema_text_source
from t2c_lib.prompts.builder import PromptBuilder
from t2c_lib.prompts.config import Configuration
from t2c_lib.validation.chain import build_chain, make_context

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.agent.steps import Strategy
    from t2c_lib.datasets import Dataset
    from t2c_lib.graph.base import GraphStore
    from t2c_lib.llm.base import ChatModel
    from t2c_lib.validation.base import ValidationContext, Validator


@dataclass(frozen=True)
class LoopParts:
    """What a loop is built from besides the model: prompts, feedback, the validator chain and its context."""

    configuration: Configuration
    prompts: PromptBuilder
    feedback: FeedbackBuilder
    chain: tuple[Validator, ...]
    context: ValidationContext


def build_parts(
    store: GraphStore,
    dataset: Dataset,
    configuration: Configuration,
    *,
    descriptions: bool = False,
    linking: LinkingSettings | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    value_hints: bool | None = None,
) -> LoopParts:
    """The prompts (schema text of `configuration`), feedback, chain (`build_chain`: guard first) and context for `store`."""
    context = make_context(store, timeout_s=timeout_s)
    schema_text = schema_text_source(
        store,
        dataset.schema_spec.descriptions,
        configuration.schema_format,
        dataset.language,
        descriptions=descriptions,
        settings=linking,
        timeout_s=timeout_s,
        value_hints=value_hints,
    )
    prompts = PromptBuilder(configuration, schema_text, dataset.language, dataset.examples)
    feedback = FeedbackBuilder(context.schema, dataset.language, timeout_s)
    return LoopParts(configuration, prompts, feedback, build_chain(store), context)


def build_loop(model: ChatModel, parts: LoopParts, **options: Any) -> AgentLoop:
    """An `AgentLoop` over `parts`; `options` are the loop's keyword settings (max_iterations, strategy, ...)."""
    return AgentLoop(model, parts.chain, parts.context, parts.prompts, parts.feedback, **options)


class LoopOptionsMisplaced(InvalidValue):
    """Loop options given to a strategy that has none (only `feedback` has them)."""


def loop_strategy(strategy: str | None, max_iterations: int, options: LoopOptions) -> str | Strategy | None:
    """The strategy `build_loop` takes: the name as given, or `feedback` carrying `options` when any is on.

    With every option off the name is returned unchanged, so the thesis loop is built exactly as before.
    Options with a strategy that has none (single-pass, also what `max_iterations` 1 means) are a one-line error.
    """
    from t2c_lib.agent.names import FEEDBACK, SINGLE_PASS, default_strategy
    from t2c_lib.agent.strategies import strategy_spec

    if options.is_default:
        return strategy
    spec = strategy_spec(strategy or default_strategy(max_iterations))
    if not set(OPTION_KEYS) <= set(spec.options):
        raise LoopOptionsMisplaced(
            f"--repair-turns, --repeat-guard and --corrector are options of the {FEEDBACK} strategy, not of {spec.name}"
            + (f" (-n 1 means {SINGLE_PASS}: add --strategy {FEEDBACK})" if strategy is None else "")
        )
    return spec(options=options)
