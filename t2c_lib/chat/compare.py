"""Two conversation runs on the same dialogues, follow-up by follow-up: k/N each and an exact McNemar test.

Reads the `turns.csv` each evaluation wrote; the pairs are the follow-up (REQUEST_MODIFICATION) turns both
runs played, matched by dialogue and turn. The test is `metrics.stats.mcnemar_exact` (the study's own).
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from t2c_lib.errors import InvalidValue
from t2c_lib.metrics.stats import mcnemar_exact

FOLLOW_UP = "REQUEST_MODIFICATION"
MAX_TURNS_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class FollowUpComparison:
    """Follow-up success of a baseline and a treatment run on the same turns, and McNemar's exact p."""

    turns: int
    baseline_right: int
    treatment_right: int
    only_baseline: int  # b: right in the baseline, wrong in the treatment
    only_treatment: int  # c
    p_value: float
    dialogues: int
    baseline_dialogues_right: int
    treatment_dialogues_right: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_turns(run_dir: Path | str) -> list[dict[str, str]]:
    path = Path(run_dir) / "turns.csv"
    if not path.is_file():
        raise InvalidValue(f"{path}: no turns.csv (run the conversation evaluation first)")
    if path.stat().st_size > MAX_TURNS_BYTES:
        raise InvalidValue(f"{path}: larger than {MAX_TURNS_BYTES:,} bytes; not a conversation run's turns.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def compare_follow_ups(baseline_dir: Path | str, treatment_dir: Path | str) -> FollowUpComparison:
    """Pair the follow-up turns of two runs and test the difference in follow-up success."""
    base, treat = read_turns(baseline_dir), read_turns(treatment_dir)
    right = _right(base), _right(treat)
    pairs = sorted(set(right[0]) & set(right[1]))
    if not pairs or len(pairs) != len(right[0]) or len(pairs) != len(right[1]):
        raise InvalidValue(
            f"the runs did not play the same follow-up turns ({len(right[0])} and {len(right[1])}, {len(pairs)} shared)"
        )
    a = [right[0][k] for k in pairs]
    t = [right[1][k] for k in pairs]
    test = mcnemar_exact(a, t)
    solved = _solved(base), _solved(treat)
    return FollowUpComparison(
        len(pairs),
        sum(a),
        sum(t),
        test.b,
        test.c,
        test.p_value,
        len(solved[0]),
        sum(solved[0].values()),
        sum(solved[1].values()),
    )


def _right(rows: list[dict[str, str]]) -> dict[tuple[str, int], bool]:
    return {
        (r["dialogue_id"], int(r["turn"])): r["pass_at_1"] == "1.0" for r in rows if r["expected_intent"] == FOLLOW_UP
    }


def _solved(rows: list[dict[str, str]]) -> dict[str, bool]:
    """Dialogue -> right at every query turn."""
    out: dict[str, bool] = {}
    for r in rows:
        if r["gold"]:
            out[r["dialogue_id"]] = out.get(r["dialogue_id"], True) and r["pass_at_1"] == "1.0"
    return out
