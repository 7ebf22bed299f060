"""The command blocks of the README and of its docs/ pages behave as printed: every `t2c` line parses
against the real command line (options exist, values are valid), and the quick ones run with the exit
status the page gives them. `tools/readme_commands.py` runs all of them (including `make all`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import click
import pytest

from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "tools"))

from readme_commands import documented_commands, documented_pages, readme_commands

pytestmark = pytest.mark.slow  # subprocesses: the README's t2c commands


def parse_like_the_shell(args: list[str]) -> click.Context:
    """Resolve subcommands and parse every option and argument (types checked) without running anything."""
    from t2c_lib.cli import main

    ctx = main.make_context("t2c", list(args))
    command: click.Command = main
    while isinstance(command, click.Group):
        rest = (
            [*ctx._protected_args, *ctx.args] if hasattr(ctx, "_protected_args") else [*ctx.protected_args, *ctx.args]
        )
        name, command, rest = command.resolve_command(ctx, rest)
        ctx = command.make_context(name, rest, parent=ctx)
    return ctx


def test_the_readme_lists_the_commands_of_the_documented_flows() -> None:
    commands = documented_commands(documented_pages())
    texts = [c.text for c in commands]
    assert any(t.startswith("t2c evaluate --run-id cli_run") for t in texts)
    assert any(t.startswith("t2c analyze --run-id cli_run") for t in texts)
    failing = [c for c in commands if c.expected_exit != 0]
    assert [c.text.split(" ")[1] for c in failing] == ["validate"], "the failing example is labelled (exit 1)"


def test_the_readme_keeps_its_commands_and_links_every_docs_page() -> None:
    """The front door: the two commands and setup in README.md itself, every docs/ page in its table of pages."""
    front = [c.text.split("#")[0].strip() for c in readme_commands(ROOT / "README.md")]
    assert {"make all", "make test", "make setup"} <= set(front), front
    pages = documented_pages()
    assert pages[0] == ROOT / "README.md" and len(pages) > 1
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    unlisted = [p.name for p in pages[1:] if f"| [docs/{p.name}](docs/{p.name}) |" not in readme]
    assert not unlisted, f"docs pages the README's table of pages does not list: {unlisted}"
    assert len(readme.splitlines()) <= 300, "the README is the front door; the manual lives in docs/"


def test_every_t2c_line_of_the_readme_parses() -> None:
    lines = [c.text for c in documented_commands(documented_pages()) if c.text.startswith("t2c ")]
    assert len(lines) >= 12
    for text in lines:
        args = shlex.split(text, comments=True)[1:]
        ctx = parse_like_the_shell(args)
        assert ctx.command.name == args[0] or ctx.command.name in args, text


def test_quick_readme_commands_run_as_printed(tmp_path) -> None:
    env = {**os.environ, "T2C_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "readme_commands.py"),
            "--only",
            "t2c db load",
            "--only",
            "t2c db schema",
            "--only",
            "t2c db query",
            "--only",
            "t2c validate",
            "--skip",
            "t2c db load --store neo4j",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    import re

    ran = re.search(r"(\d+) of (\d+) README and docs commands behaved as printed", done.stdout)
    assert ran and ran.group(1) == ran.group(2) and int(ran.group(1)) >= 6, done.stdout
