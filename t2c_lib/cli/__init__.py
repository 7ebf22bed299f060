"""The `t2c` command line: load and inspect graphs, ask questions, run and evaluate the study.

One module per command group: `db` (load, schema, query), `agent` (ask, validate), `chat`,
`score`, `study` (run, evaluate, analyze, study plan/progress/compare), `failures` (a run's wrong
and invalid questions for review), `publish` (a run into results/published/, and `study seed`,
`study forecast`, `study reproduced`, `study replicate` around it, `study tables`: the docs' tables
from published runs); `common` holds what
they share (one-line errors, option types). Every command exits non-zero with a one-line
reason when something is wrong; `--debug` (on the group) shows the full traceback instead.
"""

from __future__ import annotations

import click

from t2c_lib import __version__
from t2c_lib.cli import agent, chat, dataset, db, failures, publish, score, study


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="show full tracebacks and debug logs")
@click.version_option(__version__, prog_name="t2c")
def main(debug: bool) -> None:
    """t2c: agentic Text2Cypher (validate, feed back, repair) versus a single-pass LLM."""
    if debug:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")


for _command in (
    db.db,
    dataset.dataset_group,
    agent.ask,
    agent.validate,
    chat.chat,
    study.run_command,
    study.evaluate_command,
    study.analyze_command,
    study.study_group,
    failures.failures_command,
    score.score_command,
    publish.publish_command,
):
    main.add_command(_command)
for _command in (
    publish.seed_command,
    publish.forecast_command,
    publish.reproduced_command,
    publish.replicate_command,
    publish.tables_command,
    publish.run_id_command,
):
    study.study_group.add_command(_command)

__all__ = ["main"]
