"""`t2c publish` and the `t2c study` helpers around published runs: `seed`, `forecast`, `reproduced`, `replicate`.

`make publish RUN=R` runs `t2c publish --run-id R` (a grid run, or a conversation run: `RUN=conversations`);
`make all` runs `t2c study seed` and `t2c study forecast` before its first notebook and `t2c study reproduced`
after the last, `make conversations` `t2c study seed` before its notebook and `t2c study reproduced` after it;
`make all FRESH=1` runs `t2c study forecast --fresh` first and `t2c study replicate` at the end
(`publish.publish`, `publish.forecast`, `publish.replicate`, `publish.published` say what each does and why).
Every one of them names the run by `t2c study run-id`: the Makefile asks it for the parameter file's
run id, checked, and never reads a parameter file itself (a hostile `run_id` would reach its shell).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from t2c_lib.cli.common import FILE_PATH, FOLDER_PATH, friendly_errors

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.llm.cache import ResponseCache

run_id_required = click.option("--run-id", required=True, help="the run (results/<run_id>/)")
cache_option = click.option(
    "--cache",
    "cache_path",
    type=FILE_PATH,
    help="the response cache file (default: T2C_RESPONSE_CACHE, else .cache/llm_cache.sqlite)",
)


def _cache(path: Path | None) -> ResponseCache:
    from t2c_lib.llm.cache import ResponseCache

    return ResponseCache(path)


@click.command("publish")
@run_id_required
@cache_option
@friendly_errors
def publish_command(run_id: str, cache_path: Path | None) -> None:
    """Publish a finished run into results/published/<run_id>/ (tracked by git): results, tables, figures, replies.

    A grid run (`make all`), or a conversation evaluation under results/ (`make conversations`: --run-id conversations).
    """
    from t2c_lib.publish.publish import publish_run

    click.echo(publish_run(run_id, _cache(cache_path)).line())


@click.command("seed")
@run_id_required
@cache_option
@friendly_errors
def seed_command(run_id: str, cache_path: Path | None) -> None:
    """Put the published replies of a run that this machine's llama.cpp build can be asked for into the response cache.

    Only replies whose request the run's own attempt logs made are seeded (`publish.publish.own_replies`); the
    line counts the rest as refused."""
    from t2c_lib.llm.build import build_fingerprint
    from t2c_lib.publish.publish import every_published_reply, own_replies
    from t2c_lib.publish.published import seed_cache

    own = own_replies(run_id)
    if own is None:
        own = every_published_reply()
        if not own.admitted and not own.refused:
            click.echo(
                f"run {run_id} is not published (no results/published/{run_id}/): every reply comes from the model"
            )
            return
        click.echo(
            f"run {run_id} is not published (no results/published/{run_id}/): seeding from every published run's "
            "replies (each answers only the request it was made for; the rest come from the model)"
        )
        click.echo(seed_cache(_cache(cache_path), own.admitted, build_fingerprint(), own.refused).line(None))
        return
    click.echo(seed_cache(_cache(cache_path), own.admitted, build_fingerprint(), own.refused).line(run_id))


@click.command("reproduced")
@run_id_required
@friendly_errors
def reproduced_command(run_id: str) -> None:
    """After `make all`: the published replies and model calls, then the rerun's files against the published ones.

    The file check reports and never fails `make all`: a rerun that could not be compared says why in one line.
    """
    from t2c_lib import config
    from t2c_lib.errors import T2CError
    from t2c_lib.publish.publish import read_published_replies
    from t2c_lib.publish.replicate import reproduced_line
    from t2c_lib.publish.rerun_check import check_rerun
    from t2c_lib.study.params import check_run_id

    check_run_id(run_id)
    published = read_published_replies(run_id)
    click.echo(reproduced_line(config.RESULTS_DIR / run_id, published))
    if published is None:
        return
    try:
        lines = check_rerun(run_id).lines()
    except (T2CError, OSError) as exc:
        lines = [f"files not compared with the published run: {exc}"]
    click.echo("\n".join(lines))


@click.command("replicate")
@run_id_required
@click.option("--fresh-run-id", help="the fresh run (default: <run_id>-fresh, what `make all FRESH=1` writes)")
@friendly_errors
def replicate_command(run_id: str, fresh_run_id: str | None) -> None:
    """After `make all FRESH=1`: the replication report of the fresh run against the published one."""
    from t2c_lib import config
    from t2c_lib.errors import MissingResults
    from t2c_lib.publish.publish import published_run_dir
    from t2c_lib.publish.replicate import FRESH_SUFFIX, replication_report
    from t2c_lib.study.params import check_run_id

    published = published_run_dir(run_id)
    fresh = config.RESULTS_DIR / check_run_id(fresh_run_id or f"{run_id}{FRESH_SUFFIX}")
    if not published.is_dir():
        raise MissingResults(f"{published}: run {run_id} is not published; nothing to replicate against")
    report = replication_report(published, fresh)
    paths = report.write()
    click.echo(report.markdown())
    click.echo("written: " + ", ".join(str(p) for p in paths))


@click.command("forecast")
@click.option("--params", "-p", "params_file", default="params/thesis.yaml", show_default=True, help="parameter file")
@click.option("--fresh", is_flag=True, help="the model is asked for every cell (make all FRESH=1)")
@friendly_errors
def forecast_command(params_file: str, fresh: bool) -> None:
    """Before `make all` asks a model: the cells answered from the published replies, the calls and time of the rest."""
    from t2c_lib.cli.study import _params
    from t2c_lib.llm.build import build_fingerprint
    from t2c_lib.publish.forecast import forecast
    from t2c_lib.publish.publish import published_run_dir

    params = _params(params_file)
    click.echo(forecast(params, published_run_dir(params.run_id), build_fingerprint(), fresh=fresh).line())


@click.command("run-id")
@click.option("--params", "-p", "params_file", default="params/thesis.yaml", show_default=True, help="parameter file")
@friendly_errors
def run_id_command(params_file: str) -> None:
    """The parameter file's run id, checked: the Makefile names the run by it and never reads a parameter file itself."""
    from t2c_lib.cli.study import _params
    from t2c_lib.study.params import check_run_id

    click.echo(check_run_id(_params(params_file).run_id))


@click.command("tables")
@click.argument("docs", nargs=-1, type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--check", is_flag=True, help="write nothing; exit 1 naming every block that differs from its published run"
)
@click.option(
    "--results-dir",
    type=FOLDER_PATH,
    help="where results/published/ is (default: T2C_RESULTS_DIR, else results/)",
)
@friendly_errors
def tables_command(docs: tuple[Path, ...], check: bool, results_dir: Path | None) -> None:
    """Render the README's and docs' marked tables (<!-- t2c:table RUN_ID -->) from the published runs."""
    from t2c_lib.publish.readme_tables import find_blocks, page_problems, rendered_page, table_pages

    problems = []
    for doc in docs or table_pages():
        text = doc.read_text(encoding="utf-8")
        if check:
            problems += page_problems(text, str(doc), results_dir)
            continue
        new = rendered_page(text, str(doc), results_dir)
        if new != text:
            doc.write_text(new, encoding="utf-8")
        tables = sum(b.kind == "table" for b in find_blocks(new, str(doc)))
        pending = sum(b.kind == "pending" for b in find_blocks(new, str(doc)))
        if tables or pending:
            changed = "rendered" if new != text else "unchanged"
            click.echo(f"{doc}: {tables} table block(s) {changed}, {pending} pending (run not published yet)")
    if problems:
        click.echo("\n".join(problems), err=True)
        raise SystemExit(1)
