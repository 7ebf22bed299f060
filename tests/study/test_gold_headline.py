"""Issue 50, item 2: the headline says how much gold survived the screen, and a run that lost more than a quarter says so loudly."""

from __future__ import annotations

import json
import os

from t2c_lib.publish.readme_tables import _gold
from t2c_lib.report.analysis import analyze_run, summary_text
from t2c_lib.runs.gold_screen import DropKind, gold_note, read_gold_note
from t2c_lib.study.screen import DroppedItem, GoldScreen, screen_gold


def _screen(kept: int, drops: list[DropKind]) -> GoldScreen:
    return GoldScreen(
        dataset="shop",
        dataset_hash="0" * 64,
        store="ladybug",
        timeout_s=10.0,
        strata_columns=[],
        kept=[None] * kept,  # only counted here
        dropped=[DroppedItem(f"shop-{i:03d}", "q", "MATCH (n) RETURN n", "why", kind) for i, kind in enumerate(drops)],
    )


def test_the_note_names_kept_of_all_and_the_main_reasons_most_first():
    screen = _screen(279, [DropKind.SYNTAX] * 258 + [DropKind.EMPTY] * 100 + [DropKind.ORDER] * 16)
    assert screen.survival() == (
        "gold pairs: kept 279 of 653, dropped 374 (258 syntax error, 100 empty answer, "
        "16 answer depends on row order; see gold_screen/)"
    )
    assert _screen(3, []).survival() == "gold pairs: kept 3 of 3, none dropped"


def test_more_than_a_quarter_dropped_is_loud_a_quarter_is_not():
    loud = _screen(279, [DropKind.SYNTAX] * 374).loud_warning()
    assert loud.startswith("WARNING: the gold screen dropped 374 of 653 gold pairs of shop (57%, more than a quarter)")
    assert "t2c dataset check shop" in loud
    assert _screen(3, [DropKind.EMPTY]).loud_warning() == ""  # exactly a quarter
    assert _screen(2, [DropKind.EMPTY]).loud_warning() != ""


def test_a_hostile_or_missing_summary_gives_no_note(tmp_path):
    assert read_gold_note(tmp_path) == ""
    (tmp_path / "gold_screen.json").write_text("{not json", encoding="utf-8")
    assert read_gold_note(tmp_path) == ""
    for summary in ({"total": "653", "kept": 1}, {"total": 3, "kept": 5}, {"total": True, "kept": 0}, []):
        (tmp_path / "gold_screen.json").write_text(json.dumps(summary), encoding="utf-8")
        assert read_gold_note(tmp_path) == ""
    (tmp_path / "gold_screen.json").write_text(
        json.dumps({"total": 4, "kept": 2, "dropped_by_kind": {"empty": 1, "<script>": 9, "order": "x"}}),
        encoding="utf-8",
    )
    assert read_gold_note(tmp_path) == "gold pairs: kept 2 of 4, dropped 2 (1 empty answer; see gold_screen/)"
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"total": 1, "kept": 1}), encoding="utf-8")
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(outside, linked / "gold_screen.json")
    assert read_gold_note(linked) == ""


def test_the_headline_and_the_readme_caption_carry_the_runs_gold_line(scored_run, tiny_dataset, tiny_store):
    screen_gold(tiny_dataset, tiny_store).write_report(scored_run / "gold_screen")
    tables = analyze_run(scored_run, tiny_dataset.strata_columns)
    lines = summary_text(tables, "tiny").splitlines()
    assert lines[1] == "gold pairs: kept 3 of 3, none dropped"
    assert _gold(scored_run) == "; gold pairs: kept 3 of 3, none dropped"
    assert gold_note(json.loads((scored_run / "gold_screen" / "gold_screen.json").read_text())) == lines[1]
