"""Issue 54, item 2: one LaTeX escaper and one p-value formatter, shared by every table that writes names and p-values."""

from __future__ import annotations

import math

from t2c_lib.publish import readme_tables
from t2c_lib.report import analysis, table_text
from t2c_lib.report.table_text import LATEX_SPECIAL, latex_text, p_text
from t2c_lib.study import paper_tables


def test_every_latex_special_character_is_escaped_and_control_characters_become_spaces() -> None:
    assert len(LATEX_SPECIAL) == 10
    assert latex_text("a_b & 50% $x$ #1 {y} ~z^ \\") == (
        "a\\_b \\& 50\\% \\$x\\$ \\#1 \\{y\\} \\textasciitilde{}z\\textasciicircum{} \\textbackslash{}"
    )
    assert latex_text("Few-Shot_Nodes+Paths\n") == "Few-Shot\\_Nodes+Paths "


def test_a_p_value_reads_the_same_in_latex_and_markdown_but_for_the_less_than_sign() -> None:
    assert p_text(0.0234, latex=True) == p_text(0.0234, latex=False) == "0.023"
    assert (p_text(0.0004, latex=True), p_text(0.0004, latex=False)) == ("$<$0.001", "<0.001")
    assert p_text(0.001, latex=False) == "0.001"
    assert (p_text(math.nan, latex=True), p_text(math.nan, latex=False)) == ("--", "-")


def test_the_tables_keep_no_renderer_of_their_own() -> None:
    for module in (analysis, paper_tables, readme_tables):
        assert not hasattr(module, "_tex") and not hasattr(module, "_p"), module.__name__
    assert analysis.latex_text is paper_tables.latex_text is table_text.latex_text
    assert analysis.p_text is paper_tables.p_text is readme_tables.p_text is table_text.p_text
