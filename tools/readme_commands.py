#!/usr/bin/env python3
"""Run the command blocks of the README and of the manual's pages (docs/*.md) as printed; check each exit status.

The README comes first, then its pages in the order its table of pages lists them. Every line
(backslash continuations joined) of every ```bash block is one command. It must exit 0, unless its own comment or the comment line just above it says `(exit N)`; a command
whose comment says `(interactive` (e.g. `make lab`, which serves until stopped) is listed, not run. Commands
run with `bash -c` in the checkout, `.venv/bin` first on PATH (what `source
.venv/bin/activate` gives). On a clean clone run `make setup` first; the long ones (`make
all`, `make test`, papermill) take as long as the README says.

    tools/readme_commands.py --list                       # what would run
    tools/readme_commands.py --doc docs/study.md          # one page only
    tools/readme_commands.py --only "t2c db" --only "t2c validate"
    tools/readme_commands.py --skip "make all" --skip "make test"
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_EXIT = re.compile(r"\(exit (\d+)\)")


@dataclass(frozen=True)
class Command:
    """One documented command: its text, the exit status it must have, and where it is (file and line)."""

    text: str
    expected_exit: int
    line: int
    source: str = "README.md"


def documented_pages(root: Path = ROOT) -> list[Path]:
    """README.md, then the docs/ pages in the order the README's table of pages lists them (the manual's reading
    order, so `t2c db load` runs before the queries that need it and `make clean` last), then any page it does not list."""
    table = r"^\| \[[^\]]*\]\((docs/[^)#\s]+\.md)\)"
    linked = re.findall(table, (root / "README.md").read_text(encoding="utf-8"), flags=re.M)
    pages = [root / name for name in dict.fromkeys(linked) if (root / name).is_file()]
    return [root / "README.md", *pages, *(p for p in sorted((root / "docs").glob("*.md")) if p not in pages)]


def documented_commands(pages: list[Path]) -> list[Command]:
    """The commands of every page's ```bash blocks, page by page."""
    return [command for page in pages for command in readme_commands(page)]


def readme_commands(readme: Path) -> list[Command]:
    """The commands of every ```bash block, continuations joined, with their expected exit status."""
    commands: list[Command] = []
    source = readme.resolve().relative_to(ROOT).as_posix() if readme.resolve().is_relative_to(ROOT) else str(readme)
    in_block, pending, start, note_exit = False, "", 0, None
    for number, raw in enumerate(readme.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.rstrip()
        if line.startswith("```"):
            in_block = line.strip() == "```bash" if not in_block else False
            pending, note_exit = "", None
            continue
        if not in_block or not line.strip():
            continue
        if line.lstrip().startswith("#") and not pending:
            found = _EXIT.search(line)
            note_exit = int(found.group(1)) if found else None
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        text = (pending + line.strip()).strip()
        own = _EXIT.search(text.split(" # ")[-1]) if " # " in text else None
        expected = int(own.group(1)) if own else (note_exit if note_exit is not None else 0)
        commands.append(Command(text, expected, start, source))
        pending, note_exit = "", None
    return commands


def select(commands: list[Command], only: list[str], skip: list[str]) -> list[Command]:
    chosen = [c for c in commands if not only or any(c.text.startswith(p) for p in only)]
    return [c for c in chosen if not any(c.text.startswith(p) for p in skip)]


def run(command: Command, cwd: Path, timeout: float | None) -> tuple[int, str]:
    env = {**os.environ, "PATH": f"{cwd / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-c", command.text], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    return done.returncode, (done.stdout + done.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--doc",
        "--readme",
        dest="docs",
        type=Path,
        action="append",
        default=None,
        help="a Markdown file whose commands to run (repeatable; default: README.md and docs/*.md)",
    )
    parser.add_argument("--cwd", type=Path, default=ROOT, help="checkout to run in")
    parser.add_argument("--only", action="append", default=[], help="run only commands starting with this (repeatable)")
    parser.add_argument("--skip", action="append", default=[], help="skip commands starting with this (repeatable)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per command")
    parser.add_argument("--list", action="store_true", help="print the commands and their expected exit status")
    args = parser.parse_args(argv)
    commands = select(documented_commands(args.docs or documented_pages()), args.only, args.skip)
    failures = interactive = 0
    for command in commands:
        if "(interactive" in command.text and not args.list:
            interactive += 1
            print(f"{command.source}:{command.line}: interactive, not run: {command.text}")
            continue
        if args.list:
            print(f"{command.source}:{command.line}: (exit {command.expected_exit}) {command.text}")
            continue
        print(f"$ {command.text}", flush=True)
        status, output = run(command, args.cwd.resolve(), args.timeout)
        if status != command.expected_exit:
            failures += 1
            print(
                f"{command.source}:{command.line}: exit {status}, expected {command.expected_exit}\n{output[-3000:]}",
                flush=True,
            )
    if not args.list:
        ran = len(commands) - interactive
        print(
            f"{ran - failures} of {ran} README and docs commands behaved as printed"
            + (f" ({interactive} interactive, not run)" if interactive else "")
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
