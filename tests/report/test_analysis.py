"""Evaluation, comparison tables and figures from recorded attempts (no model needed).

The attempts are written by hand (a scripted record of what a loop could have done) and
scored for real on the tiny embedded graph; the test checks the numbers and that a rerun
writes byte-identical tables and figures.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from t2c_lib.report.analysis import analyze_run, write_tables
from t2c_lib.report.plots import FIGURES, export_figures
from tests.helpers import write_scored_run


def test_per_question_metrics_and_comparison(scored_run, tiny_dataset):
    tables = analyze_run(scored_run, tiny_dataset.strata_columns)
    per_q = tables.per_question
    sp = per_q[(per_q["mode"] == "single-pass") & (per_q["configuration"] == "Zero-Shot_Full")].set_index("question_id")
    assert tables.scoring == "kg-axel"
    for preset in ("kg_axel", "t2c", "cypherbench"):  # every preset is computed, the headline first
        assert sp[f"pass_at_1_final__{preset}"].tolist() == [0.0, 1.0, 0.0]
        assert sp[f"pass_at_1_first__{preset}"].tolist() == [0.0, 1.0, 0.0]
    assert [c for c in per_q.columns if c.startswith("pass_at_1_final__")] == [
        "pass_at_1_final__kg_axel",
        "pass_at_1_final__t2c",
        "pass_at_1_final__cypherbench",
    ]
    assert sp["kg_valid_structural_final"].tolist() == [0.0, 1.0, 1.0]
    assert sp["kg_valid_chain_final"].tolist() == [0.0, 1.0, 1.0]
    ag = per_q[(per_q["mode"] == "feedback") & (per_q["configuration"] == "Zero-Shot_Full")].set_index("question_id")
    assert ag["pass_at_1_first__kg_axel"].tolist() == [0.0, 1.0, 0.0]  # the recovered question failed at first
    assert ag["pass_at_1_final__kg_axel"].tolist() == [1.0, 1.0, 0.0]
    assert ag["kg_valid_chain_first"].tolist() == [0.0, 1.0, 1.0] and ag["kg_valid_chain_final"].tolist() == [
        1.0,
        1.0,
        1.0,
    ]
    row = tables.comparison.set_index("configuration").loc["Zero-Shot_Full"]
    assert row["n"] == 3
    p = "pass_at_1_final__kg_axel"
    assert row[f"{p}_sp"] == pytest.approx(1 / 3) and row[f"{p}_fb"] == pytest.approx(2 / 3)
    assert row["pass_at_1_first__kg_axel_fb"] == pytest.approx(1 / 3)
    assert (row[f"{p}_mcnemar_b"], row[f"{p}_mcnemar_c"]) == (0, 1)
    assert row[f"{p}_mcnemar_p_value"] == pytest.approx(1.0)
    assert row["kg_valid_chain_final_fb"] == pytest.approx(1.0) and row[
        "kg_valid_structural_final_sp"
    ] == pytest.approx(2 / 3)
    assert row["model_calls_per_question_fb"] == pytest.approx(4 / 3)
    agentic = tables.agentic.set_index("configuration").loc["Zero-Shot_Full"]
    assert agentic["recovery_rate"] == pytest.approx(1.0) and agentic["first_attempt_success_rate"] == pytest.approx(
        2 / 3
    )
    cumulative = tables.cumulative[tables.cumulative["configuration"] == "Zero-Shot_Full"]["success_rate"].tolist()
    assert cumulative == pytest.approx([2 / 3, 1.0, 1.0])
    strata = tables.strata
    hard = strata[
        (strata["configuration"] == "ALL") & (strata["value"] == "hard") & (strata["strategy"] == "feedback")
    ]  # an old run's agentic folder reads as feedback
    assert hard["n"].tolist() == [2] and hard["pass_at_1_final__kg_axel"].tolist() == [0.0]
    by = tables.by_scoring.set_index(["scoring", "configuration", "strategy"])
    thesis_row = by.loc[("kg-axel", "Zero-Shot_Full", "feedback")]
    assert thesis_row["pass_at_1_final_pct"] == pytest.approx(200 / 3) and thesis_row["recovery_pct"] == pytest.approx(
        100.0
    )
    assert thesis_row["first_attempt_pct"] == pytest.approx(200 / 3) and thesis_row["mean_iterations"] == pytest.approx(
        4 / 3
    )


def test_loop_cells_under_the_legacy_name_agentic_read_as_the_feedback_loop(
    scored_run, tiny_dataset, tiny_store, tmp_path
):
    """A run recorded before the rename keeps its loop's cells under `agentic/`: its tables are the feedback run's."""
    legacy = write_scored_run(tmp_path / "legacy", tiny_dataset, tiny_store, loop_folder="agentic")
    assert sorted(p.name for p in legacy.iterdir() if p.is_dir()) == ["agentic", "single-pass"]
    old, new = analyze_run(legacy, tiny_dataset.strata_columns), analyze_run(scored_run, tiny_dataset.strata_columns)
    assert sorted(old.per_question["mode"].unique()) == ["feedback", "single-pass"]
    for name in ("per_question", "comparison", "agentic", "strategies", "recovery_by_strategy"):
        pd.testing.assert_frame_equal(getattr(old, name), getattr(new, name))
    assert old.loops == new.loops


def test_published_numbers_stand_beside_the_runs_kg_axel_numbers(scored_run, tiny_dataset):
    from t2c_lib import config
    from t2c_lib.report.analysis import load_published

    published = load_published(config.DATA_DIR / "kurikulum")
    assert len(published) == 13 * 11 and set(published["denominator"]) == {52}
    tables = analyze_run(scored_run, tiny_dataset.strata_columns, published, "this run")
    ref = tables.reference
    ours = ref[ref["source"] == "this run"]
    assert list(ours["configuration"]) == ["Zero-Shot_Full", "Zero-Shot_Only-Paths"]
    theirs = ref[ref["source"].str.startswith("published: ")].set_index(["model", "configuration"])
    assert len(theirs) == 13
    qwen = theirs.loc[("qwen/qwen3-32b", "Zero-Shot_Full")]
    assert (qwen["pass_at_1_final_pct"], qwen["kg_valid_chain_pct"], qwen["llmetric_pct"]) == (34.62, 69.23, 53.56)
    assert theirs.loc[("qwen/qwen3-32b", "Few-Shot_Full")]["n"] == 26
    # the published LLMetric is 0.3 Pass@1 + 0.4 KG-valid chain + 0.2 Jaccard output + 0.1 JaRou, in percent
    for r in theirs.to_dict("records"):
        jarou = (r["jaro_winkler"] + r["rouge_l_f1"]) / 2
        llm = 0.3 * r["pass_at_1_final_pct"] + 0.4 * r["kg_valid_chain_pct"] + 20 * r["jaccard_output"] + 10 * jarou
        assert llm == pytest.approx(r["llmetric_pct"], abs=0.02)


def digest(paths) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.mark.slow
def test_tables_and_figures_are_byte_identical_on_rerun(scored_run, tiny_dataset, tmp_path):
    first_tables = analyze_run(scored_run, tiny_dataset.strata_columns)
    first = digest(write_tables(first_tables, scored_run)) | digest(export_figures(first_tables, tmp_path / "f1"))
    second_tables = analyze_run(scored_run, tiny_dataset.strata_columns)
    second = digest(write_tables(second_tables, scored_run)) | digest(export_figures(second_tables, tmp_path / "f2"))
    assert first == second
    assert len([n for n in first if n.endswith(".pdf")]) == len(FIGURES)
    pdf = (tmp_path / "f1" / "pass_kgvalid_by_config.pdf").read_bytes()
    assert b"CreationDate" not in pdf and b"/FontFile2" in pdf  # no timestamp; TrueType (Type 42) embedded
    assert "comparison.tex" in first
    comparison = pd.read_csv(scored_run / "analysis" / "comparison.csv")
    assert list(comparison["configuration"]) == ["Zero-Shot_Full", "Zero-Shot_Only-Paths"]


def test_cost_vs_gain_labels_every_configuration_once_without_overlaps():
    """Nine configurations, several at the same point and two close together: every label readable."""
    import matplotlib

    from t2c_lib.report.analysis import RunTables
    from t2c_lib.report.plots import STYLE, fig_cost_gain

    names = [f"{p}_{s}" for p in ("Zero-Shot", "Few-Shot", "CoT") for s in ("Full", "Nodes+Paths", "Only-Paths")]
    extra = [0, 40, 40, 0, 80, 40, 0, 80, 41]  # 1,4,7 coincide; 2,3,6 coincide; 9 sits next to them
    gain = [0.0, 1 / 3, 1 / 3, 0.0, 1 / 3, 1 / 3, 0.0, 1 / 3, 0.34]
    comparison = pd.DataFrame(
        {
            "configuration": names,
            "pass_at_1_final__t2c_sp": [0.3] * 9,
            "pass_at_1_final__t2c_fb": [0.3 + g for g in gain],
            "tokens_per_question_sp": [100.0] * 9,
            "tokens_per_question_fb": [100.0 + e for e in extra],
            "model_calls_per_question_sp": [1.0] * 9,
            "model_calls_per_question_fb": [1.0 + e / 100 for e in extra],
        }
    )
    empty = pd.DataFrame()
    tables = RunTables(empty, comparison, empty, empty, empty, empty, empty, empty, "kg-axel", "sig")
    with matplotlib.pyplot.style.context(str(STYLE)):
        fig = fig_cost_gain(tables)
        from t2c_lib.report.figure_layout import crowded_texts, texts_outside

        for ax in fig.axes:
            labels = [t for t in ax.texts if t.get_text()]
            numbers = sorted(int(n) for t in labels for n in t.get_text().split(","))
            assert numbers == list(range(1, 10)), "every configuration is labelled exactly once per panel"
        assert not crowded_texts(fig) and not texts_outside(fig)  # measured where the annotations are drawn
        key = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]  # one key: colours, markers, numbers
        assert all(any(name in entry for entry in key) for name in names)
        matplotlib.pyplot.close(fig)


@pytest.mark.slow
def test_stratum_panels_carry_bootstrap_intervals_drawn_by_seaborn(scored_run, tiny_dataset):
    import matplotlib

    from t2c_lib.report.plots import STYLE, fig_llmetric_heatmap, fig_strata

    tables = analyze_run(scored_run, tiny_dataset.strata_columns)
    with matplotlib.pyplot.style.context(str(STYLE)):
        fig = fig_strata(tables)
        easy_bars = [p for p in fig.axes[0].patches if p.get_height() > 0]
        intervals = [line for line in fig.axes[0].lines if len(line.get_xydata()) >= 2]  # a whisker with its caps
        assert easy_bars and len(intervals) >= len(easy_bars), "every non-empty bar has its 95% interval"
        heat = fig_llmetric_heatmap(tables)
        cells = [t.get_text() for t in heat.axes[0].texts]
        assert len(cells) == 2 and all(len(c) == 4 and c[1] == "." for c in cells)  # annotated, two decimals
        matplotlib.pyplot.close("all")


def test_a_dataset_without_strata_gets_an_empty_strata_table_with_its_columns():
    """An imported graph has no strata: notebook 03 selects `configuration == "ALL"` on the table all the same."""
    import pandas as pd

    from t2c_lib.report.analysis import STRATA_KEYS, strata_breakdown

    per_question = pd.DataFrame(
        {"configuration": ["Zero-Shot_Full"], "strategy": ["single-pass"], "pass_at_1_final__t2c": [1.0]}
    )
    table = strata_breakdown(per_question, [], "t2c")
    assert table.empty and list(table.columns) == list(STRATA_KEYS)
    assert table[table["configuration"] == "ALL"].empty
