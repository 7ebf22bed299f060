"""`t2c score FILE`: score any CSV of (gold, predicted) Cypher pairs under a scoring preset."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import click

from t2c_lib.cli.common import FILE_PATH, friendly_errors, open_dataset_store, store_option
from t2c_lib.errors import user_path
from t2c_lib.files.outputs import csv_cell
from t2c_lib.metrics.scoring import DEFAULT_SCORING, scoring_names


@click.command("score")
@click.argument("file", type=FILE_PATH)
@click.option("--gold-column", default="gold", show_default=True, help="column holding the gold Cypher")
@click.option("--pred-column", default="predicted", show_default=True, help="column holding the predicted Cypher")
@click.option(
    "--preset",
    type=click.Choice(scoring_names()),
    default=DEFAULT_SCORING,
    show_default=True,
    help="metric definitions: t2c (published equivalence rules) or kg-axel (the thesis's)",
)
@click.option(
    "--output",
    "-o",
    type=FILE_PATH,
    help="write the input columns plus the scores to this CSV",
)
@click.option(
    "--dataset", "-d", help="also run both queries on this dataset's graph: pass_at_1, jaccard_output, kg_valid"
)
@store_option(help="graph database (with --dataset)")
@click.option("--timeout", default=10.0, show_default=True, help="seconds before a query is stopped (with --dataset)")
@friendly_errors
def score_command(
    file: Path,
    gold_column: str,
    pred_column: str,
    preset: str,
    output: Path | None,
    dataset: str | None,
    store: str,
    timeout: float,
) -> None:
    """Score every (gold, predicted) pair of FILE; prints the means.

    Without --dataset only the text metrics (bleu, rouge_l_f1, jaro_winkler,
    jaccard_cypher) are computed and no database is needed. kg_valid is the preset's
    own (t2c: structural, i.e. guard, syntax, schema, properties; kg-axel: the whole
    validator chain); both kinds are written beside it.
    """
    from t2c_lib.metrics.pairs import STORE_COLUMNS, TEXT_COLUMNS, means, read_pairs, score_pairs

    table = read_pairs(file, gold_column, pred_column)
    if dataset is None:
        rows = list(score_pairs(table, gold_column, pred_column, preset))
        score_columns = list(TEXT_COLUMNS)
    else:
        from t2c_lib.metrics import GoldCache

        ds, graph = open_dataset_store(dataset, store)
        try:
            rows = list(score_pairs(table, gold_column, pred_column, preset, graph, GoldCache.for_dataset(ds), timeout))
        finally:
            graph.close()
        score_columns = [*TEXT_COLUMNS, *STORE_COLUMNS]
    if output is not None:
        columns = [*table.columns, *score_columns, *(["execution_error"] if dataset else [])]
        with user_path(output):
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(_csv(rows, columns), encoding="utf-8")
    click.echo(f"{len(rows)} pairs scored with preset {preset}" + (f" on {dataset} ({store})" if dataset else ""))
    for name, value in means(rows, score_columns).items():
        click.echo(f"{name:<20} {value:.4f}")
    if output is not None:
        click.echo(f"wrote {output}")


def _csv(rows: list[dict], columns: list[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(c) for c in columns])
    for row in rows:  # formula-like text (a query or a column name) quoted; numbers as they are
        writer.writerow([repr(v) if isinstance(v, float) else csv_cell(v) for v in (row.get(c, "") for c in columns)])
    return buffer.getvalue()
