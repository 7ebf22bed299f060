"""`chat/compare.py`: two conversation runs paired follow-up by follow-up, McNemar's exact test on the pairs."""

from __future__ import annotations

import csv
import shutil

import pytest

from t2c_lib.chat.compare import compare_follow_ups
from t2c_lib.errors import InvalidValue
from tests.helpers import ROOT

PUBLISHED = ROOT / "results" / "published" / "conversations-rewrite"  # the thesis chat: 7 of 31 follow-ups


def _write(path, rows):
    path.mkdir(parents=True)
    with (path / "turns.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["dialogue_id", "turn", "expected_intent", "gold", "pass_at_1"])
        writer.writeheader()
        writer.writerows(rows)


def test_a_run_against_itself_has_no_discordant_pair():
    result = compare_follow_ups(PUBLISHED, PUBLISHED)
    assert result.turns == 31 and result.baseline_right == result.treatment_right == 7
    assert result.only_baseline == result.only_treatment == 0 and result.p_value == 1.0
    assert result.dialogues == 17 and result.baseline_dialogues_right == 2


def test_discordant_follow_ups_are_counted_and_tested(tmp_path):
    def rows(passes):
        out = [{"dialogue_id": "d", "turn": 1, "expected_intent": "EXECUTE_QUERY", "gold": "q", "pass_at_1": "1.0"}]
        out += [
            {"dialogue_id": "d", "turn": i + 2, "expected_intent": "REQUEST_MODIFICATION", "gold": "q", "pass_at_1": p}
            for i, p in enumerate(passes)
        ]
        return out

    _write(tmp_path / "a", rows(["0.0"] * 8))
    _write(tmp_path / "b", rows(["1.0"] * 8))
    result = compare_follow_ups(tmp_path / "a", tmp_path / "b")
    assert (result.only_baseline, result.only_treatment) == (0, 8) and result.p_value == pytest.approx(2 / 256)
    assert result.treatment_dialogues_right == 1 and result.baseline_dialogues_right == 0


def test_runs_of_other_dialogues_are_refused(tmp_path):
    shutil.copytree(PUBLISHED, tmp_path / "a", ignore=shutil.ignore_patterns("sessions", "figures", "*.gz"))
    _write(
        tmp_path / "b",
        [{"dialogue_id": "x", "turn": 2, "expected_intent": "REQUEST_MODIFICATION", "gold": "q", "pass_at_1": "1.0"}],
    )
    with pytest.raises(InvalidValue, match="same follow-up turns"):
        compare_follow_ups(tmp_path / "a", tmp_path / "b")
