"""Every duration README.md and `make help` claim is dated and says what it includes (issue 52, item 4).

`make all` on a fresh clone was quoted as 1 min 59 s: it first runs `make setup` (26 of its 30 minutes, 23 of them
compiling llama.cpp); `make help` called `make test-fast` "under a minute" (3 to 4 minutes under load). A duration
(`2 min 35 s`, `under a minute`, `hours`) must have a date (YYYY-MM-DD) next to it, in the same paragraph and within
`NEAR` characters, and one that speaks of a fresh or clean clone must say whether `make setup` is in it.
"""

from __future__ import annotations

import re

from tests.helpers import ROOT

DURATION = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:h|hours?|min|minutes?|s|seconds?)\b"
    r"|\bunder (?:a|one|\d+) (?:second|minute|hour)s?\b"
    r"|\b(?:a few|several|few) (?:seconds|minutes|hours)\b"
    r"|\b(?:in )?(?:seconds|minutes|hours)\b"
)
"""A duration as prose claims one: a measured time or a promise of one."""
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
NEAR = 300
"""How far (characters) a duration's date may be, in the same paragraph."""


def prose_blocks(text: str) -> list[str]:
    """Paragraphs of Markdown without fenced code, rendered tables and the digits of `code spans`, whitespace
    collapsed."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"^<!--\s*t2c:table\b.*?^<!--\s*/t2c:table\s*-->", "", text, flags=re.S | re.M)
    text = re.sub(r"`([^`\n]*)`", lambda m: re.sub(r"\d", "", m.group(1)), text)  # its words, never its numbers
    return [" ".join(b.split()) for b in re.split(r"\n\s*\n", text) if b.strip()]


def help_lines(makefile: str) -> list[str]:
    """`make help`'s text: the `## ` description of every target, with its target's name."""
    return [f"make {m.group(1)}: {m.group(2)}" for m in re.finditer(r"^([A-Za-z_-]+):.*?## (.*)$", makefile, re.M)]


def undated(blocks: list[str]) -> list[str]:
    """Each duration without a date near it, or about a fresh clone without saying whether setup is in it."""
    found = []
    for block in blocks:
        dates = [m.start() for m in DATE.finditer(block)]
        for match in DURATION.finditer(block):
            around = block[max(0, match.start() - NEAR) : match.end() + NEAR]
            shown = block[max(0, match.start() - 80) : match.end() + 60]
            if not any(abs(d - match.start()) <= NEAR for d in dates):
                found.append(f"{match.group(0)!r} has no date next to it: ...{shown}...")
            elif re.search(r"\b(?:fresh|clean) clone\b", around) and "setup" not in around:
                found.append(f"{match.group(0)!r} on a fresh clone does not say whether `make setup` is in it: {shown}")
    return found


def test_every_duration_the_readme_claims_is_dated() -> None:
    problems = undated(prose_blocks((ROOT / "README.md").read_text(encoding="utf-8")))
    assert not problems, "README.md:\n" + "\n".join(problems)


def test_every_duration_make_help_claims_is_dated() -> None:
    lines = help_lines((ROOT / "Makefile").read_text(encoding="utf-8"))
    assert any(line.startswith("make test-fast:") for line in lines), lines
    problems = undated(lines)
    assert not problems, "make help:\n" + "\n".join(problems)


def test_an_undated_duration_fails_and_a_dated_one_passes() -> None:
    """The check itself: the two claims issue 52 found fail, their dated forms pass."""
    assert undated(["make test-fast: the quick tests, under a minute"])
    assert undated(["`make all` on a fresh clone: 1 min 59 s, measured on 2026-11-29"])  # setup not named
    assert undated(["hours on a CPU"])
    assert not undated(["make test-fast: the quick tests (3 min 51 s, measured on 2026-12-02 under load)"])
    assert not undated(["on a fresh clone: `make setup` 26 min, then the study 1 min 59 s (measured on 2026-11-29)"])
    assert not undated(["a number of questions: 52"])  # no duration
