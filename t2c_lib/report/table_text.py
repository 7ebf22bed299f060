"""How a value is written into a table's text: one LaTeX escaper and one p-value formatter.

The analysis tables (`analysis.py`: `comparison.tex`), the paper's headline tables
(`paper_tables.py`) and the README's tables (`t2c_lib.publish.readme_tables`) all write names
and p-values; each kind of text has one renderer here, so that a name escaped for one table is
escaped the same way for every other, and a p-value reads the same in LaTeX and in Markdown.
"""

from __future__ import annotations

import math
import re

LATEX_SPECIAL = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
}
"""LaTeX's ten special characters and what stands for each in running text."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def latex_text(text: object) -> str:
    """Plain text for LaTeX: every special character escaped, control characters as spaces.

    A name comes from a parameter file or a dataset, so it may hold any of the ten; escaping all
    of them keeps a table compiling whatever the name.
    """
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in _CONTROL.sub(" ", str(text)))


def p_text(value: float, latex: bool) -> str:
    """A p-value at three decimals, `<0.001` below that (`$<$0.001` in LaTeX); a missing one (NaN) as a dash.

    The dash is `--` in LaTeX (an en dash there) and `-` in Markdown.
    """
    if not math.isfinite(value):
        return "--" if latex else "-"
    if value < 0.001:
        return "$<$0.001" if latex else "<0.001"
    return f"{value:.3f}"
