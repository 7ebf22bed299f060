"""Two runs side by side (`t2c study compare`): the free vs constrained decoding comparison of issue 18."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from t2c_lib.report.compare import compare_runs, default_labels

QUESTIONS = [f"q-{i:02d}" for i in range(20)]


def _cell(run: Path, mode: str, configuration: str, no_query: int, valid: int, right: int, calls: int) -> None:
    """metrics.csv of one cell: the first `no_query` questions without a query, the first `valid` KG-valid, `right` right."""
    rows = []
    for i, qid in enumerate(QUESTIONS):
        error = "NO_QUERY" if i < no_query else ("" if i < no_query + valid else "SYNTAX_ERROR")
        rows.append(
            {
                "question_id": qid,
                "mode": mode,
                "configuration": configuration,
                "first_error_type": error,
                "final_error_type": error,
                "kg_valid_chain_final": int(no_query <= i < no_query + valid),
                "pass_at_1_final__kg_axel": int(no_query <= i < no_query + right),
                "pass_at_1_final__t2c": int(no_query <= i < no_query + right),
                "llm_calls": calls,
                "model_calls": calls,
                "completion_tokens": 40 * calls,
            }
        )
    directory = run / mode / configuration
    directory.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(directory / "metrics.csv", index=False)


def _run(root: Path, name: str, decoding: str, cells: dict[tuple[str, str], tuple[int, int, int, int]]) -> Path:
    run = root / name
    for (mode, configuration), numbers in cells.items():
        _cell(run, mode, configuration, *numbers)
    manifest = {
        "run_id": name,
        "parameters": {"run_id": name, "decoding": decoding, "max_iterations": 3},
        "cells": {"x": f"t2c:0|model:local/gemma|config:{configuration}"},
    }
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run


@pytest.fixture
def runs(tmp_path):
    free = _run(
        tmp_path,
        "thesis",
        "free",
        {("single-pass", "Zero-Shot_Full"): (20, 0, 0, 1), ("feedback", "Zero-Shot_Full"): (20, 0, 0, 3)},
    )
    constrained = _run(
        tmp_path,
        "thesis-constrained",
        "constrained",
        {("single-pass", "Zero-Shot_Full"): (0, 4, 1, 1), ("feedback", "Zero-Shot_Full"): (0, 14, 1, 2)},
    )
    return free, constrained


def test_labels_come_from_the_one_setting_that_differs(runs, tmp_path):
    assert default_labels(*runs) == ("free", "constrained")
    other = _run(tmp_path, "other", "constrained", {("feedback", "Zero-Shot_Full"): (0, 1, 0, 1)})
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["parameters"]["max_iterations"] = 5
    (other / "manifest.json").write_text(json.dumps(manifest))
    assert default_labels(runs[0], other) == ("thesis", "other")  # two settings differ: the directory names


def test_rates_tests_and_loop_gain(runs):
    pair = compare_runs(*runs, "free", "constrained")
    row = pair.per_cell.set_index("strategy").loc["feedback"]
    assert (row["no_query_first_free"], row["no_query_first_constrained"]) == (1.0, 0.0)
    assert (row["kg_valid_chain_final_free"], row["kg_valid_chain_final_constrained"]) == (0.0, 0.7)
    assert row["pass_at_1_final__kg_axel_constrained"] == pytest.approx(0.05)
    assert row["kg_valid_chain_final_mcnemar_p"] == pytest.approx(2 * 0.5**14)  # 14 discordant pairs, all one way
    assert (row["kg_valid_chain_final_mcnemar_b"], row["kg_valid_chain_final_mcnemar_c"]) == (0, 14)
    assert row["llm_calls_free"] == 3 and row["llm_calls_constrained"] == 2
    assert pair.differences == {"decoding": ("free", "constrained")}
    gain = pair.loop_gain.set_index("run").loc["constrained"]
    assert gain["kg_valid_chain_final_gain"] == pytest.approx(0.5) and gain[
        "kg_valid_chain_final_mcnemar_p"
    ] == pytest.approx(2 * 0.5**10)
    assert (gain["kg_valid_chain_final_mcnemar_b"], gain["kg_valid_chain_final_mcnemar_c"]) == (0, 10)
    text = pair.markdown()
    assert "| 0 / 14, " in text and "| 0 / 10, " in text  # McNemar's discordant pairs beside each p
    assert (
        "`decoding`: 'free' -> 'constrained'" in text and "| Zero-Shot_Full | feedback | 20 | 1.000 -> 0.000 |" in text
    )


def test_runs_without_common_cells_or_equal_labels_are_refused(runs, tmp_path):
    with pytest.raises(ValueError, match="different labels"):
        compare_runs(*runs, "x", "x")
    lone = _run(tmp_path, "lone", "free", {("feedback", "CoT_Full"): (0, 1, 0, 1)})
    with pytest.raises(ValueError, match="no \\(configuration, strategy, question\\) in common"):
        compare_runs(runs[0], lone)


@pytest.mark.slow
def test_cli_writes_tables_and_figure(runs, tmp_path):
    from t2c_lib.cli import main

    out, figures = tmp_path / "tables", tmp_path / "figures"
    result = CliRunner().invoke(
        main, ["study", "compare", str(runs[0]), str(runs[1]), "--out", str(out), "--figures", str(figures)]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "constrained_vs_free.csv",
        "constrained_vs_free.md",
        "constrained_vs_free_loop_gain.csv",
    ]
    assert sorted(p.suffix for p in figures.iterdir()) == [".pdf", ".png", ".svg", ".txt"]  # .txt: its caption
    first = (figures / "constrained_vs_free.svg").read_bytes()
    assert (
        CliRunner()
        .invoke(main, ["study", "compare", str(runs[0]), str(runs[1]), "--out", str(out), "--figures", str(figures)])
        .exit_code
        == 0
    )
    assert (figures / "constrained_vs_free.svg").read_bytes() == first  # same runs, same bytes


@pytest.mark.slow
def test_cli_writes_the_pair_into_a_folder_of_its_own_with_a_caption(runs, tmp_path, monkeypatch):
    """Issue 39 (6): by default neither run's folders receive the pair's tables or figure."""
    from t2c_lib import config
    from t2c_lib.cli import main

    monkeypatch.setattr(config, "RESULTS_DIR", tmp_path / "results")
    monkeypatch.setattr(config, "FIGURES_DIR", tmp_path / "figures")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = CliRunner().invoke(main, ["study", "compare", str(runs[0]), str(runs[1])])
    assert result.exit_code == 0, result.output
    pair = Path("compare") / "thesis-constrained_vs_thesis"
    assert (tmp_path / "results" / pair / "constrained_vs_free.csv").is_file()
    caption = (tmp_path / "figures" / pair / "constrained_vs_free.txt").read_text(encoding="utf-8")
    assert caption.startswith("Run constrained against run free, per configuration: the share of questions")
    assert "Pass@1 under the kg-axel scoring preset" in caption and "N = 20 questions per bar." in caption
    after = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    touched = {p for p in after - set(before) if p.parts[0] in ("thesis", "thesis-constrained")}
    assert not touched, touched
