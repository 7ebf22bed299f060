"""`t2c dataset import`, `t2c dataset check`: bring a graph, and check a dataset folder before a run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import click

from t2c_lib.cli.common import POSITIVE_INT, TIMEOUT, friendly_errors, open_dataset_store, store_option
from t2c_lib.errors import InvalidValue

if TYPE_CHECKING:  # pragma: no cover - imported where used, for a quick start of the command
    from t2c_lib.dataset_import.graph import ImportCaps, ImportedGraph


@click.group("dataset")
def dataset_group() -> None:
    """Bring a graph: build data/<name>/ from what you hold, and check a dataset before a run."""


@dataset_group.command("import")
@click.option("--name", required=True, help="the dataset's name (letters, digits, _); written to data/<name>/")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="the new folder (default: data/<name>)")
@click.option("--cypher", "script", type=click.Path(path_type=Path), help="a Cypher script of CREATE/MERGE statements")
@click.option("--csv-mapping", type=click.Path(path_type=Path), help="a mapping file beside node/relationship CSVs")
@click.option("--neo4j", "from_neo4j", is_flag=True, help="the running Neo4j database (NEO4J_URI ...), read-only")
@click.option("--pairs", type=click.Path(path_type=Path), required=True, help="question/Cypher pairs: CSV or .jsonl")
@click.option("--question-column", default="question", show_default=True, help="the pairs' question column")
@click.option("--cypher-column", default="cypher", show_default=True, help="the pairs' Cypher column")
@click.option("--language", type=click.Choice(["en", "id"]), default="en", show_default=True)
@click.option(
    "--max-nodes", type=POSITIVE_INT, default=None, help="refuse a source with more nodes (default 1,000,000)"
)
@friendly_errors
def import_command(
    name: str,
    out: Path | None,
    script: Path | None,
    csv_mapping: Path | None,
    from_neo4j: bool,
    pairs: Path,
    question_column: str,
    cypher_column: str,
    language: str,
    max_nodes: int | None,
) -> None:
    """Write a dataset folder from one source and a pairs file; the loader then checks it."""
    from t2c_lib import config
    from t2c_lib.dataset_import.graph import ImportCaps, check_name
    from t2c_lib.dataset_import.pairs import read_pairs
    from t2c_lib.dataset_import.writer import write_dataset
    from t2c_lib.datasets import load_dataset

    check_name("dataset name", name)
    sources = [s for s in (script, csv_mapping, from_neo4j or None) if s]
    if len(sources) != 1:
        raise InvalidValue("give exactly one source: --cypher SCRIPT, --csv-mapping FILE or --neo4j")
    caps = ImportCaps(nodes=max_nodes) if max_nodes else ImportCaps()
    graph, source = _read_source(script, csv_mapping, caps)
    target = out if out is not None else config.DATA_DIR / name
    write_dataset(graph, read_pairs(pairs, question_column, cypher_column), target, name, source, language)
    try:
        dataset = load_dataset(target)
    except InvalidValue:
        shutil.rmtree(target, ignore_errors=True)  # nothing half-made is left behind
        raise
    labels = ", ".join(f"{label} {len(rows)}" for label, rows in graph.nodes.items())
    click.echo(
        f"wrote {target}/: {graph.node_count:,} nodes ({labels}), {graph.rel_count:,} relationships, "
        f"{len(dataset.questions):,} question/Cypher pairs"
    )
    click.echo(f"next: t2c dataset check {target if out is not None else name}")


def _read_source(script: Path | None, csv_mapping: Path | None, caps: ImportCaps) -> tuple[ImportedGraph, str]:
    """The graph of the one source given, and how dataset.yaml names it."""
    if script is not None:
        from t2c_lib.dataset_import.cypher_script import read_script

        return read_script(script, caps), f"the Cypher script {script.name}"
    if csv_mapping is not None:
        from t2c_lib.dataset_import.csv_folder import read_folder

        return read_folder(csv_mapping, caps), f"the CSV folder mapped by {csv_mapping.name}"
    from t2c_lib.dataset_import.neo4j_source import read_neo4j
    from t2c_lib.graph.neo4j import Neo4jStore

    store = Neo4jStore(None, auto_load=False)
    try:
        return read_neo4j(store, caps), "a Neo4j database"
    finally:
        store.close()


@dataset_group.command("check")
@click.argument("dataset")
@store_option
@click.option("--timeout", type=TIMEOUT, default=10.0, show_default=True, help="seconds per gold query")
@friendly_errors
def check_command(dataset: str, store: str, timeout: float) -> None:
    """The loader's checks, a schema preview and the gold screen of DATASET, with what each dropped pair needs."""
    from t2c_lib.study.screen import NEEDS, OrderProbe, failing_examples, screen_gold

    ds, graph = open_dataset_store(dataset, store)
    try:
        counts = ", ".join(f"{k} {v:,}" for k, v in ds.expected_counts().items())
        click.echo(f"{ds.name}: the loader's checks passed ({counts}; {len(ds.questions)} gold pairs)")
        failing = failing_examples(ds, graph, timeout)
        click.echo(
            f"examples.yaml: {len(ds.examples) - len(failing)} of {len(ds.examples)} few-shot examples pass the chain"
        )
        for line in failing:
            click.echo(f"- {line} (a run refuses the dataset until it is fixed)")
        click.echo("schema (nodes_paths, as the prompts show it):")
        click.echo(graph.schema().render("nodes_paths").rstrip("\n"))
        probe = OrderProbe.open(ds) if graph.facts.embedded else None
        try:
            screen = screen_gold(ds, graph, timeout_s=timeout, order_probe=probe)
        finally:
            if probe is not None:
                probe.close()
    finally:
        graph.close()
    click.echo(screen.describe())
    click.echo(screen.survival())
    for item in screen.dropped:
        reason = " ".join(item.reason.split())[:300]
        click.echo(f"- {item.id} ({item.kind.value}): needs {NEEDS[item.kind]}; {reason}")
    if screen.loud_warning():
        click.echo(screen.loud_warning(), err=True)
