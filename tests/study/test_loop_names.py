"""One name per loop (issue 51, item 1): derived from the strategy and its options, recorded in every output, checked.

The thesis's loop is `thesis-loop`; the revising loops of the published grids are `revise` and `revise-strict`;
any other option combination gets a name of its own made of its tag, never one of those. A cell whose recorded
name disagrees with its options is refused in one line; a manifest from before the name derives it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from t2c_lib.agent.names import REVISE, REVISE_STRICT, THESIS_LOOP
from t2c_lib.agent.options import LoopOptions
from t2c_lib.agent.strategies import LoopNameMismatch, loop_name, recorded_loop
from t2c_lib.errors import T2CError
from tests.helpers import ROOT

PUBLISHED = ROOT / "results" / "published"


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ("thesis.yaml", THESIS_LOOP),
        ("movies.yaml", THESIS_LOOP),
        ("strategies.yaml", THESIS_LOOP),
        ("thesis-revise.yaml", REVISE),
        ("thesis-strict.yaml", REVISE_STRICT),
        ("movies-strict.yaml", REVISE_STRICT),
        ("strategies-strict.yaml", REVISE_STRICT),
    ],
)
def test_each_grid_names_its_feedback_loop_from_its_options(params, expected):
    values = yaml.safe_load((ROOT / "params" / params).read_text(encoding="utf-8"))
    assert loop_name("feedback", values).name == expected
    assert loop_name("single-pass", values).name == "single-pass"  # options change only the feedback cells
    assert loop_name("history", values).name == "history"


@pytest.mark.parametrize(
    "options",
    [
        {"repair_turns": "conversation"},
        {"repair_turns": "fresh"},
        {"repair_turns": "fresh", "repeat_guard": True, "repeat_guard_retries": 3, "corrector": "schema"},
        {"repair_turns": "fresh-strict", "repeat_guard": True, "corrector": "schema"},
        {"repeat_guard_retries": 3},
        {"corrector": "schema+syntax"},
    ],
)
def test_any_other_combination_gets_a_name_of_its_own(options):
    name = LoopOptions.from_values(options).loop_name()
    assert name.name not in (THESIS_LOOP, REVISE, REVISE_STRICT)
    assert name.name.startswith("feedback-") and name.description


def test_every_combination_has_a_distinct_name():
    combos = [
        LoopOptions(turns, guard, retries, corrector)
        for turns in ("single", "conversation", "fresh", "fresh-strict")
        for guard in (False, True)
        for retries in (1, 2, 3)
        for corrector in ("none", "schema", "schema+syntax")
    ]
    names = {}
    for options in combos:
        names.setdefault(options.loop_name().name, set()).add(options)
    collided = {n: o for n, o in names.items() if len(o) > 1}
    # without the guard, its retries change nothing a refinement asks: those share a name only where they run alike
    assert all(len({(o.repair_turns, o.corrector) for o in opts}) == 1 for opts in collided.values()), collided


def _manifest(**parameters):
    return {"strategy": "feedback", "configuration": "CoT_Full", "parameters": parameters}


def test_a_manifest_from_before_the_name_derives_it():
    old = _manifest(repair_turns="fresh-strict", repeat_guard=True, repeat_guard_retries=2, corrector="schema+syntax")
    assert recorded_loop(old).name == REVISE_STRICT
    assert recorded_loop({"mode": "agentic", "parameters": {}}).name == THESIS_LOOP  # the thesis's old name


def test_a_recorded_name_its_options_do_not_make_is_refused_in_one_line():
    forged = {**_manifest(repair_turns="fresh", repeat_guard=True, repeat_guard_retries=2, corrector="schema")}
    forged["loop"] = THESIS_LOOP
    with pytest.raises(LoopNameMismatch) as caught:
        recorded_loop(forged, "results/x/feedback/CoT_Full/manifest.json")
    assert isinstance(caught.value, T2CError)
    message = str(caught.value)
    assert "\n" not in message and "'thesis-loop'" in message and "'revise'" in message
    assert recorded_loop({**forged, "loop": REVISE}).name == REVISE


def test_a_hostile_recorded_name_is_cut_short_in_the_message():
    forged = {**_manifest(), "loop": "x" * 10_000 + "\n\x1b[31m"}
    with pytest.raises(LoopNameMismatch) as caught:
        recorded_loop(forged)
    assert len(str(caught.value)) < 300 and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("run_id", "expected"),
    [
        ("thesis", THESIS_LOOP),
        ("movies", THESIS_LOOP),
        ("strategies", THESIS_LOOP),
        ("thesis-revise", REVISE),
        ("thesis-strict", REVISE_STRICT),
        ("movies-strict", REVISE_STRICT),
        ("strategies-strict", REVISE_STRICT),
    ],
)
def test_every_published_feedback_cell_derives_its_runs_loop(run_id, expected):
    manifests = sorted((PUBLISHED / run_id / "feedback").glob("*/manifest.json"))
    assert manifests, run_id
    assert {recorded_loop(json.loads(p.read_text(encoding="utf-8"))).name for p in manifests} == {expected}


def _as_revise_strict(run: Path, keep_recorded_names: bool) -> None:
    """The tiny run's feedback cells as if `revise-strict` had made them: their manifests record its options."""
    import csv

    options = {
        "repair_turns": "fresh-strict",
        "repeat_guard": True,
        "repeat_guard_retries": 2,
        "corrector": "schema+syntax",
    }
    for cell in sorted(run.glob("feedback/*")):
        manifest = {"strategy": "feedback", "configuration": cell.name, "parameters": options}
        (cell / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        if keep_recorded_names:  # the files still say thesis-loop: the cell disagrees with itself
            continue
        summary = json.loads((cell / "summary.json").read_text(encoding="utf-8"))
        summary.pop("loop")  # as written before the name was recorded
        (cell / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
        with (cell / "metrics.csv").open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        with (cell / "metrics.csv").open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, [k for k in rows[0] if k != "loop"], extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)


def test_a_revising_loops_figures_and_tables_never_call_it_the_thesiss(scored_run, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from t2c_lib.report.analysis import analyze_run, comparison_latex, summary_text
    from t2c_lib.report.figure_text import CAPTIONS, caption
    from t2c_lib.study.paper_tables import headline_frame, table_latex

    _as_revise_strict(scored_run, keep_recorded_names=False)
    tables = analyze_run(scored_run, ["level"])
    assert tables.shown("feedback") == REVISE_STRICT and set(tables.per_question["loop"]) == {
        "single-pass",
        REVISE_STRICT,
    }
    texts = [caption(name, tables) for name in CAPTIONS]
    texts += [
        comparison_latex(tables),
        summary_text(tables, "x"),
        table_latex(headline_frame(tables), tables, "x", "d", "headline"),
    ]
    for text in texts:
        assert THESIS_LOOP not in text and "thesis's agentic loop" not in text, text[:200]
    assert all(REVISE_STRICT in text for text in texts[:-3] if "strategy_cost" not in text[:0])
    assert set(headline_frame(tables)["loop"]) == {REVISE_STRICT}


def test_a_cell_whose_files_name_another_loop_than_its_manifest_is_refused(scored_run):
    from t2c_lib.report.analysis import analyze_run

    _as_revise_strict(scored_run, keep_recorded_names=True)
    with pytest.raises(LoopNameMismatch) as caught:
        analyze_run(scored_run, ["level"])
    assert "\n" not in str(caught.value) and "'thesis-loop'" in str(caught.value)


def test_the_cells_record_their_loop_in_metrics_summary_and_rows(scored_run):
    import csv

    for cell in sorted(scored_run.glob("*/*")):
        expected = "single-pass" if cell.parent.name == "single-pass" else THESIS_LOOP
        summary = json.loads((cell / "summary.json").read_text(encoding="utf-8"))
        assert summary["loop"] == expected and "mode" not in summary and "model_calls_per_question" not in summary
        with (cell / "metrics.csv").open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert {r["loop"] for r in rows} == {expected}
        assert "mode" not in rows[0] and "model_calls" not in rows[0]  # one fact, one column
