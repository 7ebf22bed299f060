"""Figures that say what they can show (issue 39, item 6): a one-strategy run skips the figures it cannot fill,
with a line saying why, and draws its one strategy centred on the ticks without a blank panel; the
"illustrative" mark of a local model's figures overlaps no text; a caption speaks of Pass@1 only where its
figure shows Pass@1. The scored tiny run of test_analysis.py (recorded attempts, real scoring).
"""

from __future__ import annotations

import shutil

import matplotlib
import pytest

from t2c_lib.report.analysis import analyze_run
from t2c_lib.report.figure_text import caption
from t2c_lib.report.plots import (
    FIGURES,
    STYLE,
    export_figures,
    fig_llmetric_heatmap,
    fig_pass_kgvalid,
    figures_of,
    mark_illustrative,
    skipped_figures,
)

matplotlib.use("Agg")
import matplotlib.pyplot as plt

# renders every figure of small runs: `make test` runs it, `make test-fast` stays under a minute
pytestmark = pytest.mark.slow

STRATA = {"level": ("easy", "hard")}
LOCAL = ("local/qwen2.5-coder-1.5b-instruct",)


@pytest.fixture()
def one_strategy(scored_run):
    for folder in scored_run.glob("single-pass/*"):
        shutil.rmtree(folder)
    tables = analyze_run(scored_run, STRATA)
    tables.models = LOCAL
    return tables


def test_a_one_strategy_run_skips_what_it_cannot_fill_and_says_why(one_strategy, tmp_path):
    skipped = skipped_figures(one_strategy)
    assert set(skipped) == {"cost_vs_gain", "strategy_cost_effectiveness"}
    assert skipped["cost_vs_gain"] == (
        "needs single-pass and feedback on the same questions (this run has feedback): no gain to plot"
    )
    assert "cost_vs_gain" not in figures_of(one_strategy)
    (tmp_path / "cost_vs_gain.png").write_bytes(b"left by an earlier analysis")
    export_figures(one_strategy, tmp_path)
    assert not list(tmp_path.glob("cost_vs_gain.*")) and not list(tmp_path.glob("strategy_cost_effectiveness.*"))
    assert (tmp_path / "pass_kgvalid_by_config.png").is_file()


def test_one_strategy_bars_stand_on_their_ticks_and_the_heatmap_has_no_blank_panel(one_strategy):
    with plt.style.context(str(STYLE)):
        fig = fig_pass_kgvalid(one_strategy)
        for ax in fig.axes:
            centres = sorted(round(p.get_x() + p.get_width() / 2, 6) for p in ax.patches)
            assert centres == sorted(round(float(t), 6) for t in ax.get_xticks()), centres
        plt.close(fig)
        heat = fig_llmetric_heatmap(one_strategy)
        assert len(heat.axes) == 2  # the feedback panel and its colour bar
        assert "thesis-loop" in heat.axes[0].get_title()  # the loop's one name (issue 51)
        plt.close(heat)


@pytest.mark.parametrize("name", list(FIGURES))
def test_the_illustrative_mark_covers_no_text(scored_run, name):
    tables = analyze_run(scored_run, STRATA)
    tables.models = LOCAL
    with plt.style.context(str(STYLE)):
        fig = FIGURES[name](tables)
        mark = mark_illustrative(fig)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        box = mark.get_window_extent(renderer)
        for text in fig.findobj(matplotlib.text.Text):
            if text is mark or not text.get_visible() or not text.get_text().strip():
                continue
            assert not box.overlaps(text.get_window_extent(renderer)), f"{name}: covers {text.get_text()!r}"
        plt.close(fig)


def test_captions_speak_of_pass_at_1_only_where_the_figure_shows_it(scored_run):
    tables = analyze_run(scored_run, STRATA)
    for name in ("cumulative_success", "error_types_recovery"):
        assert "Pass@1" not in caption(name, tables), name
    for name in ("pass_kgvalid_by_config", "accuracy_by_stratum", "cost_vs_gain"):
        assert f"Pass@1 under the {tables.scoring} scoring preset" in caption(name, tables), name


# --- issue 51, item 6: no text covers another, no label leaves its panel, on the published runs' data ---------------

PUBLISHED_RUNS = {"thesis-strict": "kurikulum", "movies-strict": "movies", "strategies-strict": "kurikulum"}
"""Runs whose figures a paper takes: nine configurations (crowded strata k/N, nine points), a movies run (its long
question types under the legend), the strategies run (six strategies' points in one corner)."""


@pytest.fixture(scope="module", params=sorted(PUBLISHED_RUNS))
def published_tables(request):
    from t2c_lib.datasets import load_dataset
    from tests.helpers import ROOT

    run = ROOT / "results" / "published" / request.param
    if not run.is_dir():
        pytest.skip(f"results/published/{request.param} is not in this checkout")
    return request.param, analyze_run(run, load_dataset(PUBLISHED_RUNS[request.param]).ground_truth_spec.strata)


def test_no_text_covers_another_and_no_label_leaves_its_panel(published_tables):
    from t2c_lib.report.figure_layout import crowded_texts, texts_outside

    run, tables = published_tables
    with plt.style.context(str(STYLE)):
        for name, draw in figures_of(tables).items():
            fig = draw(tables)
            mark_illustrative(fig)
            crowded, outside = crowded_texts(fig), texts_outside(fig)
            plt.close(fig)
            assert not crowded, f"{run} {name}: texts touching where the saved file has them: {crowded[:5]}"
            assert not outside, f"{run} {name}: labels outside their panel: {outside[:5]}"


def test_the_check_sees_touching_texts_and_a_label_outside_its_panel():
    from t2c_lib.report.figure_layout import POINT_GID, crowded_texts, texts_outside

    with plt.style.context(str(STYLE)):
        fig, ax = plt.subplots(figsize=(3.4, 2.0))  # a column of a two-column paper
        ax.text(0.5, 0.5, "28/180", fontsize=6)
        ax.text(0.52, 0.5, "29/180", fontsize=6)  # upright neighbours: "28/18029/180"
        ax.annotate("9", (0.5, 0.5), xytext=(0, 200), textcoords="offset points", gid=POINT_GID)  # far above
        crowded, outside = crowded_texts(fig), texts_outside(fig)
        plt.close(fig)
    assert ("28/180", "29/180") in crowded and outside == ["9"]
