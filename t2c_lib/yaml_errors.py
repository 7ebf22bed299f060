"""One line for a YAML syntax error, with the line and column where the parser stopped.

PyYAML's messages span several lines ("while parsing ... in <file>, line 2 ... expected ...,
line 3"); the command line shows one line per error, so the position must be on it.
"""

from __future__ import annotations

import yaml


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """`line 3, column 6: expected ',' or ']', but got ':' (while parsing a flow sequence from line 2, column 15)`."""
    mark = getattr(exc, "problem_mark", None)
    problem = " ".join(str(getattr(exc, "problem", "") or "").split())
    if mark is None or not problem:
        return " ".join(str(exc).split())
    text = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context = " ".join(str(getattr(exc, "context", "") or "").split())
    context_mark = getattr(exc, "context_mark", None)
    if context:
        where = f" from line {context_mark.line + 1}, column {context_mark.column + 1}" if context_mark is not None else ""
        text += f" ({context}{where})"
    return text
