"""The `t2c` command line: load and inspect graphs, ask questions, run and evaluate the study.

Every command exits non-zero with a one-line reason when something is wrong; `--debug`
(on the group) shows the full traceback instead.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from typing import Any, Callable

import click

from t2c_lib import __version__
from t2c_lib.graph import STORES
from t2c_lib.graph.base import QueryResult, to_jsonable
from t2c_lib.graph.schema import SchemaFormat

USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, RuntimeError, OSError, KeyError)


def friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn expected failures into `t2c: error: <reason>` and exit status 1."""

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


def dataset_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--dataset", "-d", default="kurikulum", show_default=True, help="dataset name under data/ or a path")(func)


def store_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--store", "-s", type=click.Choice(STORES), default="ladybug", show_default=True, help="graph database")(func)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="show full tracebacks and debug logs")
@click.version_option(__version__, prog_name="t2c")
def main(debug: bool) -> None:
    """t2c: agentic Text2Cypher (validate, feed back, repair) versus a single-pass LLM."""
    if debug:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")


@main.group()
def db() -> None:
    """Load a dataset into a graph store and inspect it."""


def open_dataset_store(dataset: str, store: str, auto_load: bool = True) -> Any:
    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph import open_store

    ds = load_dataset(dataset)
    options = {"auto_load": auto_load} if store == "ladybug" else {}
    return ds, open_store(store, ds, **options)


@db.command("load")
@dataset_option
@store_option
@friendly_errors
def db_load(dataset: str, store: str) -> None:
    """Load (or reload) a dataset into the store; prints counts per label and type."""
    started = time.perf_counter()
    ds, graph = open_dataset_store(dataset, store, auto_load=False)
    with_counts = graph.load(ds)
    elapsed = time.perf_counter() - started
    expected = ds.expected_counts()
    for name, count in with_counts.items():
        click.echo(f"{name:<20} {count:>6}")
    click.echo(f"loaded {ds.name} into {store} in {elapsed:.2f} s")
    if with_counts != expected:
        raise RuntimeError(f"counts in the store {with_counts} differ from the dataset files {expected}")
    graph.close()


@db.command("schema")
@dataset_option
@store_option
@click.option("--format", "-f", "fmt", type=click.Choice([f.value for f in SchemaFormat]), default=SchemaFormat.FULL.value, show_default=True)
@friendly_errors
def db_schema(dataset: str, store: str, fmt: str) -> None:
    """Print the schema introspected from the live database in one of the three formats."""
    _, graph = open_dataset_store(dataset, store)
    click.echo(graph.schema().render(fmt), nl=False)
    graph.close()


@db.command("query")
@dataset_option
@store_option
@click.option("--json", "as_json", is_flag=True, help='print {"columns": [...], "rows": [[...], ...]}')
@click.option("--timeout", default=10.0, show_default=True, help="seconds before the query is stopped")
@click.argument("cypher")
@friendly_errors
def db_query(dataset: str, store: str, as_json: bool, timeout: float, cypher: str) -> None:
    """Run one query on the read-only database and print the result."""
    _, graph = open_dataset_store(dataset, store)
    result = graph.query(cypher, timeout_s=timeout)
    graph.close()
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        click.echo(format_table(result))


def format_table(result: QueryResult, max_width: int = 60) -> str:
    """A plain-text table of a query result, cells cut at `max_width` characters."""

    def cell(value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(to_jsonable(value), ensure_ascii=False)
        return text if len(text) <= max_width else text[: max_width - 1] + "…"

    header = list(result.columns)
    body = [[cell(v) for v in row] for row in result.rows]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]
    lines = [" | ".join(h.ljust(w) for h, w in zip(header, widths)), "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in body]
    lines.append(f"({len(body)} row{'s' if len(body) != 1 else ''})")
    return "\n".join(lines)


def _register_optional_commands() -> None:
    """Commands that live in their own modules (agent, experiment) register here."""
    for module_name in ("t2c_lib.cli_agent", "t2c_lib.cli_study"):
        try:
            module = __import__(module_name, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(main)


_register_optional_commands()


if __name__ == "__main__":  # pragma: no cover
    main()
