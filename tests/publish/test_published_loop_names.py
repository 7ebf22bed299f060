"""No committed caption, legend or table of a published run names a loop other than the one its manifests ran
(issue 51, items 1-2), and every one that shows the feedback cells names that loop by its one name.

Read from the files as committed: figure captions (`figures/*.txt`), the figures' SVG text (matplotlib writes each
text of a figure as a comment beside its glyphs: legends, axis titles, tick labels), the analysis text, LaTeX and
the headline CSV. The old constant label "feedback (the thesis's agentic loop)" counts as naming `thesis-loop`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from t2c_lib.agent.names import REVISE, REVISE_STRICT, THESIS_LOOP
from t2c_lib.agent.strategies import recorded_loop
from tests.helpers import ROOT

PUBLISHED = ROOT / "results" / "published"
LOOPS = (THESIS_LOOP, REVISE, REVISE_STRICT)
OLD_THESIS_LABEL = re.compile(r"thesis's agentic loop")
SVG_TEXT = re.compile(r"<!-- (.*?) -->")


def _mentions(text: str) -> set[str]:
    """The loops a text names: each loop name as a word of its own, and the old label as the thesis's loop."""
    found = {name for name in LOOPS if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)}
    if OLD_THESIS_LABEL.search(text):
        found.add(THESIS_LOOP)
    return found


def _runs() -> list[str]:
    return sorted(p.parent.name for p in PUBLISHED.glob("*/feedback")) if PUBLISHED.is_dir() else []


def _ran(run: Path) -> str:
    names = {
        recorded_loop(json.loads(p.read_text(encoding="utf-8"))).name for p in run.glob("feedback/*/manifest.json")
    }
    assert len(names) == 1, (run.name, names)
    return names.pop()


def _texts(run: Path) -> dict[str, str]:
    """Every committed text of the run that a reader takes as a caption, legend or table, by its path."""
    out = {}
    for path in sorted([*run.glob("figures/*.txt"), *run.glob("analysis/*.txt"), *run.glob("analysis/*.tex")]):
        out[path.relative_to(run).as_posix()] = path.read_text(encoding="utf-8")
    for path in sorted(run.glob("figures/*.svg")):
        out[path.relative_to(run).as_posix()] = "\n".join(SVG_TEXT.findall(path.read_text(encoding="utf-8")))
    headline = run / "analysis" / "headline.csv"
    if headline.is_file():
        out["analysis/headline.csv"] = headline.read_text(encoding="utf-8")
    return out


@pytest.mark.parametrize("run_id", _runs())
def test_no_published_caption_or_legend_names_another_loop(run_id):
    run = PUBLISHED / run_id
    ran = _ran(run)
    wrong = {name: sorted(_mentions(text) - {ran}) for name, text in _texts(run).items() if _mentions(text) - {ran}}
    assert not wrong, f"run {run_id} ran {ran}, but these name other loops: {wrong}"


@pytest.mark.parametrize("run_id", _runs())
def test_every_published_caption_of_the_feedback_cells_names_their_loop(run_id):
    run = PUBLISHED / run_id
    ran = _ran(run)
    captions = {p.name: p.read_text(encoding="utf-8") for p in sorted(run.glob("figures/*.txt"))}
    unnamed = sorted(name for name, text in captions.items() if ran not in _mentions(text))
    assert captions and not unnamed, f"run {run_id} ran {ran}; these captions do not name it: {unnamed}"
    headline = (run / "analysis" / "headline.csv").read_text(encoding="utf-8").splitlines()
    assert headline[0].split(",")[:2] == ["strategy", "loop"], "headline.csv names each row's loop"
