"""Database messages made safe to show, store and feed back.

A database error is shown to the user, written to result files meant for publication and fed
back to the model. The gate keeps file and environment access away from the databases, so
their messages should carry nothing from outside the graph; this is the wall behind that:
the value of every environment variable long enough to be a secret is blanked wherever it
appears, and a parser's list of the ~100 tokens it expected is cut to what a model can use.
"""

from __future__ import annotations

import os
import re

MIN_SECRET_CHARS = 6
"""Environment values at least this long are blanked wherever a message repeats them."""
MAX_MESSAGE_CHARS = 600
_EXPECTED_LIST = re.compile(r"([Ee]xpect(?:ed|ing)|Was expecting one of)[^\n]{200,}")
_REDACTED = "[redacted]"


def _environment_values() -> list[str]:
    values = {v for v in os.environ.values() if len(v) >= MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)  # longest first, so a value containing another goes whole


def redact(text: str) -> str:
    """`text` with the value of every environment variable of MIN_SECRET_CHARS or more blanked."""
    for value in _environment_values():
        if value in text:
            text = text.replace(value, _REDACTED)
    return text


def shorten_expected(text: str) -> str:
    """A parser message with its long list of expected tokens cut to the first few."""

    def cut(match: re.Match[str]) -> str:
        return match.group(0)[:160].rstrip(" ,") + " ... (list shortened)"

    return _EXPECTED_LIST.sub(cut, text)


def safe_message(text: str) -> str:
    """A database message fit for users, result files and feedback: secrets blanked, expected-token lists
    cut, and at most MAX_MESSAGE_CHARS characters."""
    text = shorten_expected(redact(text.strip()))
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS].rstrip() + " ... (message shortened)"
    return text
