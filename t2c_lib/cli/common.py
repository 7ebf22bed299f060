"""Pieces every `t2c` command shares: one-line errors, dataset/store options, result tables."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from t2c_lib.errors import T2CError
from t2c_lib.graph import DEFAULT_STORE, STORES
from t2c_lib.graph.base import QueryResult, to_jsonable


class StrategyChoice(click.Choice):
    """`--strategy`: a registered strategy or an old name of one (`agentic`), read from the registry when the option
    is parsed or shown, so a strategy registered after import (`T2C_STRATEGY_MODULES`) is a valid choice."""

    def __init__(self) -> None:
        super().__init__((), case_sensitive=True)

    @property
    def choices(self) -> tuple[str, ...]:
        from t2c_lib.agent.strategies import STRATEGIES, strategy_names

        return (*strategy_names(), *STRATEGIES.aliases)

    @choices.setter
    def choices(self, value: Any) -> None:  # click.Choice.__init__ sets it; the registry is the source
        pass


STRATEGY = StrategyChoice()


USER_ERRORS: tuple[type[BaseException], ...] = (T2CError,)
"""What the command line shows as one line: the library's user errors. Anything else is a bug and shows as one."""


def friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the library's user errors (`T2CError`) into `t2c: error: <reason>` and exit status 1.

    Click's own errors (a bad option) keep click's handling; any other exception is a bug
    and propagates with its traceback.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except USER_ERRORS as exc:
            ctx = click.get_current_context(silent=True)
            if ctx is not None and ctx.find_root().params.get("debug"):
                raise
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            click.echo(f"t2c: error: {message}", err=True)
            sys.exit(1)

    return wrapper


# --- option types: every command takes the same spellings and checks the same ranges ------------


class _EnumNameType(click.ParamType):
    """An enum member by any name its `parse` reads; yields the member's value. The enum is imported when used."""

    def members(self) -> Any:
        raise NotImplementedError

    def text(self, value: Any) -> str:
        return str(value)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None, *args: Any) -> str:
        return "[" + "|".join(m.value for m in self.members()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return str(self.members().parse(self.text(value)).value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class SchemaFormatType(_EnumNameType):
    """A schema format by its snake_case name (`nodes_paths`) or thesis name (`Nodes+Paths`); yields the snake_case name."""

    name = "schema format"

    def members(self) -> Any:
        from t2c_lib.schema import SchemaFormat

        return SchemaFormat

    def text(self, value: Any) -> str:
        return str(value).strip()  # SchemaFormat.parse reads names exactly


class PromptTypeType(_EnumNameType):
    """A prompt type by its thesis name (`Zero-Shot`) or snake_case name (`zero_shot`); yields the thesis name."""

    name = "prompt type"

    def members(self) -> Any:
        from t2c_lib.prompts.config import PromptType

        return PromptType


class LimitType(click.ParamType):
    """A number of questions (a positive integer) or `all`."""

    name = "N|all"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        text = str(value).strip().lower()
        if text == "all":
            return "all"
        if text.isdigit() and int(text) >= 1:
            return int(text)
        self.fail(f"{value!r} is not a positive integer or 'all'", param, ctx)


SCHEMA_FORMAT = SchemaFormatType()
PROMPT_TYPE = PromptTypeType()
LIMIT = LimitType()
TIMEOUT = click.FloatRange(min=0, min_open=True, max=86400)
TEMPERATURE = click.FloatRange(min=0.0, max=2.0)
POSITIVE_INT = click.IntRange(min=1)
FILE_PATH = click.Path(dir_okay=False, path_type=Path)
FOLDER_PATH = click.Path(file_okay=False, path_type=Path)


def choice_option(*decls: str, choices: Sequence[str], help: str) -> Callable[..., Any]:
    """An option naming one of `choices`, None unless given: what reads the setting holds its default."""
    return click.option(*decls, type=click.Choice(choices), default=None, help=help)


def strategy_option(help: str) -> Callable[..., Any]:
    """`--strategy`: a registered strategy (or an old name of one), None unless given; `help` names the default."""
    return click.option("--strategy", type=STRATEGY, default=None, help=help)


def dataset_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--dataset", "-d", default="kurikulum", show_default=True, help="dataset name under data/ or a path"
    )(func)


def store_option(func: Callable[..., Any] | None = None, *, help: str = "graph database") -> Any:
    """`--store/-s`: a registered store, the embedded one by default (`@store_option` or `@store_option(help=...)`)."""
    option = click.option(
        "--store", "-s", type=click.Choice(STORES.names()), default=DEFAULT_STORE, show_default=True, help=help
    )
    return option(func) if func is not None else option


def open_dataset_store(dataset: str, store: str, auto_load: bool = True) -> Any:
    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph import open_store, store_facts

    ds = load_dataset(dataset)
    options = {"auto_load": auto_load} if "auto_load" in store_facts(store).opener_options else {}
    return ds, open_store(store, ds, **options)


def format_table(result: QueryResult, max_width: int = 60, max_rows: int | None = None, rest: str = "") -> str:
    """A plain-text table of a query result, cells cut at `max_width` characters.

    With `max_rows`, a longer result shows its first rows only and the footer gives the row
    count and `rest` (how to get the others), so a long answer never floods the terminal.
    """

    def cell(value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(to_jsonable(value), ensure_ascii=False)
        return text if len(text) <= max_width else text[: max_width - 1] + "…"

    total = len(result.rows)
    shown = result.rows if max_rows is None else result.rows[:max_rows]
    header = list(result.columns)
    body = [[cell(v) for v in row] for row in shown]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]
    lines = [" | ".join(h.ljust(w) for h, w in zip(header, widths)), "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in body]
    if len(shown) < total:
        lines.append(f"({total} rows; the first {len(shown)} shown" + (f": {rest})" if rest else ")"))
    else:
        lines.append(f"({total} row{'s' if total != 1 else ''})")
    return "\n".join(lines)


def loop_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The `feedback` loop's options (`t2c_lib.agent.options`), each off unless given: `--repair-turns`,
    `--repeat-guard`, `--repeat-guard-retries`, `--corrector`."""
    from t2c_lib.agent.options import DEFAULT_GUARD_RETRIES, CorrectorKind, RepairTurns

    options = (
        choice_option(
            "--repair-turns",
            choices=[m.value for m in RepairTurns],
            help="feedback loop: a refinement as one user message (single, the thesis), as a conversation "
            "(the failed reply as the model's own turn, the feedback as the user's reply) or as a fresh attempt "
            "(the question and every failure's feedback, never a failed query) [default: single]",
        ),
        click.option(
            "--repeat-guard/--no-repeat-guard",
            default=None,
            help="feedback loop: a refinement that repeats a failed query is not accepted; the model is asked again "
            "(the extra calls counted) [default: off]",
        ),
        click.option(
            "--repeat-guard-retries",
            type=click.IntRange(min=1),
            default=None,
            help=f"the repeat guard's extra model calls per refinement [default: {DEFAULT_GUARD_RETRIES}]",
        ),
        choice_option(
            "--corrector",
            choices=[m.value for m in CorrectorKind],
            help="feedback loop: schema = a deterministic schema corrector on a failed query before the model "
            "repairs it [default: none]",
        ),
    )
    for option in reversed(options):
        func = option(func)
    return func
