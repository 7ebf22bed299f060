"""`t2c failures`: a run's wrong and invalid questions, each with its question, gold query and every attempt."""

from __future__ import annotations

import click

from t2c_lib.cli.common import friendly_errors


@click.command("failures")
@click.option("--run-id", required=True, help="the run to review (results/<run_id>/)")
@click.option(
    "--cell",
    help="only this cell: <strategy>/<configuration> (feedback/CoT_Nodes+Paths) or a configuration (every strategy)",
)
@friendly_errors
def failures_command(run_id: str, cell: str | None) -> None:
    """List each wrong or invalid question: question, gold query, each attempt's query, error and feedback."""
    from t2c_lib import config
    from t2c_lib.report.failures import INVALID, format_failure, run_failures
    from t2c_lib.study.params import check_run_id

    run_dir = config.RESULTS_DIR / check_run_id(run_id)
    failures, answers = run_failures(run_dir, cell)
    invalid = sum(f.verdict == INVALID for f in failures)
    scope = f"cell {cell}" if cell else f"run {run_id}"
    click.echo(
        f"{scope}: {len(failures)} of {answers} answers failed ({invalid} invalid: the final query did not pass "
        f"the validator chain; {len(failures) - invalid} wrong: it passed and its result is not the gold result "
        "under the run's headline scoring preset)"
    )
    for failure in failures:
        click.echo("")
        click.echo(format_failure(failure))
