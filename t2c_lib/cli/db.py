"""`t2c db load`, `t2c db schema`, `t2c db query`: a dataset in a graph store, its schema, one read-only query."""

from __future__ import annotations

import time

import click

from t2c_lib.cli.common import (
    SCHEMA_FORMAT,
    TIMEOUT,
    choice_option,
    dataset_option,
    format_table,
    friendly_errors,
    open_dataset_store,
    store_option,
)
from t2c_lib.errors import StoreError, UnsafeQuery
from t2c_lib.files.outputs import to_json
from t2c_lib.schema import SchemaFormat


@click.group()
def db() -> None:
    """Load a dataset into a graph store and inspect it."""


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
        raise StoreError(f"counts in the store {with_counts} differ from the dataset files {expected}")
    graph.close()


@db.command("schema")
@dataset_option
@store_option
@click.option(
    "--format",
    "-f",
    "fmt",
    type=SCHEMA_FORMAT,
    default=SchemaFormat.FULL.value,
    show_default=True,
    help="full_schema, nodes_paths, only_paths, retrieved (or the thesis names Full, Nodes+Paths, Only-Paths, Retrieved)",
)
@click.option(
    "--question", "-q", default=None, help="the question `retrieved` links the schema to (needed by that format only)"
)
@click.option(
    "--descriptions", is_flag=True, help="append the descriptions of schema.yaml (the `schema_descriptions` parameter)"
)
@click.option("--k", "k", default=None, type=click.IntRange(min=1), help="`retrieved`: elements kept [default: 6]")
@choice_option(
    "--ranking",
    choices=["embedding", "lexical", "hybrid"],
    help="`retrieved`: how elements are ranked [default: embedding]",
)
@friendly_errors
def db_schema(
    dataset: str, store: str, fmt: str, question: str | None, descriptions: bool, k: int | None, ranking: str | None
) -> None:
    """Print the schema introspected from the live database in a format (`retrieved`: what QUESTION would get)."""
    from t2c_lib.linking import LinkingSettings, Ranking, schema_text_source

    fmt_enum = SchemaFormat.parse(fmt)
    if fmt_enum.per_question and not (question or "").strip():
        raise click.UsageError(f'--format {fmt} needs --question "..." (the schema it prints depends on the question)')
    if question and not fmt_enum.per_question:
        raise click.UsageError(f"--question only applies to --format retrieved, not {fmt}")
    defaults = LinkingSettings()
    settings = LinkingSettings(k=k or defaults.k, ranking=Ranking(ranking) if ranking else defaults.ranking)
    ds, graph = open_dataset_store(dataset, store)
    try:
        source = schema_text_source(
            graph, ds.schema_spec.descriptions, fmt_enum, ds.language, descriptions=descriptions, settings=settings
        )
        click.echo(source(question or "") if callable(source) else source, nl=False)  # a question: checked above
    finally:
        graph.close()


@db.command("query")
@dataset_option
@store_option
@click.option("--json", "as_json", is_flag=True, help='print {"columns": [...], "rows": [[...], ...]}')
@click.option(
    "--timeout", default=10.0, show_default=True, type=TIMEOUT, help="seconds before the query is stopped (> 0)"
)
@click.argument("cypher")
@friendly_errors
def db_query(dataset: str, store: str, as_json: bool, timeout: float, cypher: str) -> None:
    """Run one read-only query (the guard checks it first) and print the result."""
    from t2c_lib.graph import store_facts
    from t2c_lib.validation.guard import check_read_only

    verdict = check_read_only(cypher, store_facts(store).dialect)
    if not verdict.ok:
        raise UnsafeQuery(f"refused by the read-only guard: {verdict.message}")
    _, graph = open_dataset_store(dataset, store)
    result = graph.query(cypher, timeout_s=timeout)
    graph.close()
    if as_json:
        click.echo(to_json(result.to_json(), ensure_ascii=False))  # NaN as null: the output is JSON
    else:
        click.echo(format_table(result))
