"""Figures and tables a paper can take (issue 28, items 9 and 10): every figure has a caption file
(what is plotted, n, the error bars and their seed), bars carry k/N, strata panels have English
titles in the dataset's order (the dataset's own words in the thesis-language variant), one
vocabulary (each loop by its one name: `thesis-loop` for the thesis's agentic loop, issue 51), and `t2c analyze`'s
summary is rounded text.
The run is the scored tiny run of test_analysis.py (recorded attempts, real scoring).
"""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

from t2c_lib.report.analysis import analyze_run, readable_summary, summary_header, write_tables
from t2c_lib.report.figure_text import stratum_title, stratum_value
from t2c_lib.report.plots import FIGURES, STYLE, export_figures, fig_pass_kgvalid, fig_strata, figures_of

matplotlib.use("Agg")
import matplotlib.pyplot as plt


@pytest.fixture()
def tables(scored_run, tiny_dataset):
    return analyze_run(scored_run, {"level": ("hard", "easy")})  # declared order, not the alphabet


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


@pytest.mark.slow
def test_every_figure_has_a_caption_saying_what_n_and_the_error_bars_are(tables, tmp_path) -> None:
    written = export_figures(tables, tmp_path)
    for name in FIGURES:
        caption = (tmp_path / f"{name}.txt").read_text(encoding="utf-8")
        assert caption.endswith("\n") and caption.count("\n") == 1, name
        assert (
            "N = 3 questions per configuration and strategy, 2 configuration(s)" in caption
            or name == "strategy_cost_effectiveness"
        )
        shows_pass = name not in ("cumulative_success", "error_types_recovery")  # issue 39 (6)
        assert (f"Pass@1 under the {tables.scoring} scoring preset" in caption) == shows_pass, name
    for name in ("pass_kgvalid_by_config", "accuracy_by_stratum"):
        caption = (tmp_path / f"{name}.txt").read_text(encoding="utf-8")
        bootstrap = "cluster bootstrap" if name == "accuracy_by_stratum" else "95% percentile bootstrap confidence"
        assert bootstrap in caption and "seed 20241" in caption  # the strata pool configurations: questions resampled
        assert "labelled k/N" in caption and "single-pass (grey) and thesis-loop (blue)" in caption
        assert "thesis-loop: the thesis's agentic loop" in caption
    assert {p.suffix for p in written} == {".pdf", ".svg", ".png", ".txt"}


@pytest.mark.slow
def test_bars_carry_their_count_so_a_zero_bar_reads_as_zero(tables) -> None:
    with plt.style.context(str(STYLE)):
        fig = fig_pass_kgvalid(tables)
    labels = texts(fig)
    plt.close(fig)
    # Pass@1 single-pass 1/3 and feedback 2/3 per configuration; KG-valid chain 2/3 and 3/3; nothing unlabelled
    assert labels.count("1/3") == 2 and labels.count("2/3") == 4 and labels.count("3/3") == 2, labels
    assert len(labels) == 8


@pytest.mark.slow
def test_strata_panels_follow_the_dataset_order_and_english_titles(tables) -> None:
    assert tables.strata[tables.strata["configuration"] == "ALL"]["value"].tolist() == ["hard", "hard", "easy", "easy"]
    with plt.style.context(str(STYLE)):
        fig = fig_strata(tables)
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert ticks == ["hard", "easy"] and legend == ["single-pass", "thesis-loop"]
    assert texts(fig) == ["0/2", "2/4", "0/2", "4/4"]  # hard then easy: single-pass, then feedback
    plt.close(fig)
    assert (
        stratum_title("Tingkat Kompleksitas") == "Complexity"
        and stratum_title("Tingkat Kompleksitas", "id") == "Tingkat Kompleksitas"
    )
    assert (
        stratum_title("Tingkat Penalaran") == "Reasoning level" and stratum_value("Fakta Implisit") == "implicit fact"
    )
    assert stratum_value("Fakta Implisit", "id") == "Fakta Implisit" and stratum_title("level") == "level"


@pytest.mark.slow
def test_a_dataset_in_another_language_also_gets_the_strata_figure_in_its_own_words(scored_run) -> None:
    import dataclasses

    tables = analyze_run(scored_run, {"level": ("easy", "hard")}, language="id")
    assert "accuracy_by_stratum_id" not in figures_of(tables)  # no Indonesian title known for `level`: nothing to add
    kurikulum_like = dataclasses.replace(tables, strata_values={"Tingkat Kompleksitas": ("Easy", "Medium", "Hard")})
    assert list(figures_of(kurikulum_like))[-1] == "accuracy_by_stratum_id"


def test_one_vocabulary_in_the_tables_no_mode_no_agentic_suffix(tables, scored_run) -> None:
    for path in write_tables(tables, scored_run):
        if path.suffix == ".csv" and path.stat().st_size:
            columns = pd.read_csv(path, nrows=0).columns
            assert "mode" not in columns and not [c for c in columns if c.endswith("_ag")], path.name
    tex = (scored_run / "analysis" / "comparison.tex").read_text()
    assert (
        "SP & FB & $p_{\\mathrm{Holm}}$" in tex
        and "AG" not in tex
        and "FB: thesis-loop (the thesis's agentic loop" in tex
    )


def test_the_analyze_summary_is_rounded_text_with_counts_intervals_and_p(tables) -> None:
    view = readable_summary(tables)
    first = view.iloc[0].to_dict()
    assert list(view["configuration"]) == ["Zero-Shot_Full", "Zero-Shot_Only-Paths"]
    assert first["Pass@1 (kg-axel) sp -> fb"] == "1/3 -> 2/3"
    assert first["Pass@1 diff [95% CI]"].startswith("+0.333 [") and first["Pass@1 p Holm"] == "1.000"
    assert first["KG-valid chain sp -> fb"] == "2/3 -> 3/3"
    assert all(isinstance(v, str) or isinstance(v, int) for v in first.values())
    header = summary_header(tables)
    assert (
        "paired bootstrap 95% CIs, seed 20241" in header and "exact McNemar, Holm across 2 configuration(s)" in header
    )
