"""`t2c chat`: a conversation with the graph in the terminal (or driven by a script through stdin).

In a terminal it prompts for each message; when standard input is not a terminal it reads
one message per line and ends at the end of input. Every turn is saved as it ends, so
`t2c chat --session ID` resumes a session that was stopped or killed (a message that was
being answered is answered again).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import click

from t2c_lib.chat.settings import FOLLOW_UPS, ROUTERS, ChatSettings
from t2c_lib.cli.agent import _echo_attempt, _with_loop_options
from t2c_lib.cli.common import (
    POSITIVE_INT,
    PROMPT_TYPE,
    SCHEMA_FORMAT,
    choice_option,
    friendly_errors,
    loop_options,
    strategy_option,
)
from t2c_lib.errors import SessionError
from t2c_lib.graph import STORES

EXIT_WORDS = frozenset({"exit", "quit", "keluar", "selesai", ":q"})


def _messages(interactive: bool) -> Iterator[str]:
    """Messages from the terminal (prompted) or from stdin lines, until EOF or an exit word."""
    while True:
        try:
            line = input("> ") if interactive else sys.stdin.readline()
        except (EOFError, KeyboardInterrupt):
            return
        if not interactive and line == "":
            return
        text = line.strip()
        if not text:
            continue
        if text.lower() in EXIT_WORDS:
            return
        if not interactive:
            click.echo(f"> {text}")
        yield text


def _echo_route(route: Any) -> None:
    """`--debug`: the router's decision as soon as it is made."""
    click.echo(
        f"[route] {route.intent.value} by {route.source.value}"
        + (f" (model said {route.model_reply!r})" if route.model_reply else "")
        + (f"; {route.note}" if route.note else "")
    )


def _show(answer: Any, debug: bool) -> None:
    """One answer: the text, the table (display limit), warnings and quality; with --debug the final query."""
    if debug and answer.query:
        click.echo(f"[query] {answer.query}")
    click.echo(answer.text)
    table = answer.table()
    if table:
        click.echo(table)
    for warning in answer.warnings:
        click.echo(f"! {warning}")
    if answer.quality is not None:
        click.echo(f"quality {answer.quality}/100; attempt {answer.attempt} of {answer.attempts_allowed}")
    if answer.error is not None and debug:
        click.echo(f"[details] {answer.error.technical_details}")
    click.echo("")


def _implied_strategy(max_iterations: int | None, loop: dict[str, Any]) -> str | None:
    """No --strategy: `-n 1` means single-pass and a loop option means `feedback` (the options are its);
    otherwise None, and the session's own strategy stands (a new session's default: vote)."""
    from t2c_lib.agent.names import FEEDBACK, SINGLE_PASS
    from t2c_lib.agent.options import LoopOptions

    if max_iterations == 1:
        return SINGLE_PASS
    if not LoopOptions.from_values(loop).is_default:
        return FEEDBACK
    return None


@click.command("chat")
@click.option("--dataset", "-d", default=None, help="dataset name under data/ or a path [default: kurikulum]")
@click.option(
    "--store", "-s", type=click.Choice(STORES.names()), default=None, help="graph database [default: ladybug]"
)
@click.option(
    "--session",
    "session_id",
    default=None,
    help="resume the saved session with this id (an id nobody saved is an error; add --new to start it)",
)
@click.option("--new", "new_session", is_flag=True, help="start a new session (named by --session, else a fresh id)")
@strategy_option("how attempts follow one another [default: vote; feedback with a loop option; single-pass for -n 1]")
@click.option(
    "--model", "-m", default=None, help="`local` or a model name of the endpoint [default: $T2C_MODEL or local]"
)
@click.option("--prompt", "-p", "prompt_type", type=PROMPT_TYPE, default=None, help="prompt type [default: Few-Shot]")
@click.option(
    "--schema", "schema_format", type=SCHEMA_FORMAT, default=None, help="schema format [default: nodes_paths]"
)
@click.option("--max-iterations", "-n", type=POSITIVE_INT, default=None, help="attempts per query [default: 3]")
@click.option(
    "--max-tokens", type=POSITIVE_INT, default=None, help="tokens the model may write per query [default: 256]"
)
@choice_option(
    "--router",
    choices=ROUTERS,
    help="who routes messages: the model with the rules checking its UNKNOWN (and, after a failed turn, its "
    "EXECUTE_QUERY), the model alone (rules when its reply is unusable) or the rules alone [default: hybrid]",
)
@choice_option(
    "--follow-up",
    choices=FOLLOW_UPS,
    help="how a follow-up is answered: a token edit of the previous query when the message reads as one, else "
    "the model's rewrite (edit), or always the model's rewrite (rewrite, the thesis chat) [default: edit]",
)
@click.option(
    "--stable-order/--as-listed",
    "stable_order",
    default=None,
    help="list an answer whose query sorts nothing by its returned columns, the same on every store, or as the "
    "store lists it (the thesis chat) [default: --stable-order]",
)
@click.option(
    "--value-hints/--no-value-hints",
    "value_hints",
    default=None,
    help="tell the model where the values a question names are stored, under the schema, or show the schema alone "
    "(the thesis chat) [default: --value-hints]",
)
@click.option("--display-limit", type=POSITIVE_INT, default=None, help="rows shown per answer [default: 20]")
@click.option("--no-cache", is_flag=True, help="call the model, neither reading nor writing the response cache")
@click.option("--debug", is_flag=True, help="show each route decision, generated Cypher and its verdicts")
@loop_options
@friendly_errors
def chat(
    dataset: str | None,
    store: str | None,
    session_id: str | None,
    new_session: bool,
    strategy: str | None,
    model: str | None,
    prompt_type: str | None,
    schema_format: str | None,
    max_iterations: int | None,
    max_tokens: int | None,
    router: str | None,
    follow_up: str | None,
    stable_order: bool | None,
    value_hints: bool | None,
    display_limit: int | None,
    no_cache: bool,
    debug: bool,
    repair_turns: str | None,
    repeat_guard: bool | None,
    repeat_guard_retries: int | None,
    corrector: str | None,
) -> None:
    """Talk with the graph: questions, follow-ups ("urutkan ..."), thanks; every turn saved and logged.

    The feedback loop's options (`--repair-turns`, `--repeat-guard`, ...) are `t2c ask`'s, recorded with the
    session's settings: they apply to every question and modification of the session, and a resume keeps them.
    """
    from t2c_lib.chat import Session

    if session_id is not None:
        check_session_id(session_id, new_session)
    loop = {
        "repair_turns": repair_turns,
        "repeat_guard": repeat_guard,
        "repeat_guard_retries": repeat_guard_retries,
        "corrector": corrector,
    }
    _with_loop_options(
        strategy, max_iterations or ChatSettings().max_iterations, loop
    )  # options on single-pass: a usage error, no model loaded
    strategy = strategy or _implied_strategy(max_iterations, loop)

    overrides: dict[str, Any] = {
        "dataset": dataset,
        "store": store,
        "strategy": strategy,
        "model": model,
        "prompt_type": prompt_type,
        "schema_format": schema_format,
        "max_iterations": max_iterations,
        "max_tokens": max_tokens,
        "router": router,
        "follow_up": follow_up,
        "stable_order": stable_order,
        "value_hints": value_hints,
        "display_limit": display_limit,
        "cache": "off" if no_cache else None,
        **loop,
    }
    session = Session.start(
        session_id=session_id,
        on_attempt=_echo_attempt if debug else None,
        on_route=_echo_route if debug else None,
        **{k: v for k, v in overrides.items() if v is not None},
    )
    try:
        s = session.settings
        verb = "resumed" if session.resumed else "started"
        click.echo(
            f"t2c chat: session {session.session_id} {verb} ({len(session.turns)} turn(s) so far); "
            f"dataset {s.dataset}, store {s.store}, model {session.engine.model.model_id}"
            + (f", loop options {s.loop_options.tag()}" if not s.loop_options.is_default else "")
        )
        click.echo(f"resume with: t2c chat --session {session.session_id}; end with 'exit' or Ctrl-D")
        if session.resumed and session.turns:
            last = session.turns[-1]
            click.echo(f"last turn {last.turn}: {last.message} -> {last.text.splitlines()[0] if last.text else ''}")
        if session.pending:
            click.echo(f"answering the interrupted message again: {session.pending}")
            _show(session.ask(session.pending), debug)
        for message in _messages(sys.stdin.isatty()):
            _show(session.ask(message), debug)
    finally:
        session.close()
    click.echo(f"session {session.session_id} saved in {session.directory}")


def check_session_id(session_id: str, new: bool) -> None:
    """`--session ID` resumes a saved session; a mistyped id is an error that lists the saved ones, never a new session.

    With `--new` the id must be free: an existing session is resumed without `--new`.
    """
    from t2c_lib.chat.session import SESSION_FILE, session_dir

    directory = session_dir(session_id)
    saved = (directory / SESSION_FILE).is_file()
    if new and saved:
        raise SessionError(
            f"session {session_id} already exists ({directory}); resume it without --new, or pick another id"
        )
    if not new and not saved:
        others = sorted((p.parent.name for p in directory.parent.glob(f"*/{SESSION_FILE}")), reverse=True)
        listed = (
            f"saved sessions (newest first): {', '.join(others[:5])}{' ...' if len(others) > 5 else ''}"
            if others
            else "no session is saved there yet"
        )
        raise SessionError(
            f"no saved session {session_id!r} in {directory.parent}; {listed}. "
            f"To start a new session with this id: t2c chat --session {session_id} --new"
        )
