"""Before `make all` asks a model: how many calls the grid will make, and about how long they take.

The published run of the same run id (`results/published/<run_id>/`) is the forecast's
evidence. A cell of the grid that the published run holds, made with the same model setting
and the llama.cpp build this machine has, is answered from its published replies (`make all`
seeded them): no call. Every other cell (another build, another model, a cell the published
run lacks, or every cell with `FRESH=1`) asks the model: it is priced at the published cell's
distinct requests (a request its strategy shares with another cell, such as single-pass's
first attempts, counted once) and their recorded latency, which is the pace of the machine
that published the run, not of this one; the progress lines correct it after the first cell.
A cell the published run lacks is counted but not priced. Without a published run there is
nothing to forecast from, and the line says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from t2c_lib.files.gzipped import GzipReadError
from t2c_lib.files.outputs import decode_json, numbered_json_lines
from t2c_lib.records import NO_MODEL_CALL
from t2c_lib.runs.layout import MANIFEST_FILE, Cell, attempts_text, expand_grid
from t2c_lib.study.params import StudyParams
from t2c_lib.study.progress import duration


@dataclass(frozen=True)
class Forecast:
    """The grid's cells by how they will be answered, and the calls and seconds the model cells take."""

    run_id: str
    cells: int
    from_published: int
    calls: int
    seconds: float
    unpriced: int  # model cells the published run lacks: their calls are not in `calls`
    published: bool

    def line(self) -> str:
        if not self.published:
            return (
                f"[forecast {self.run_id}] {self.cells} cells, none published under this run id: replies come from the "
                "model, except for requests another published run holds (seeded above); an estimate follows the first "
                "evaluated cell"
            )
        asks = self.cells - self.from_published
        if not asks:
            return (
                f"[forecast {self.run_id}] {self.cells} cells, all answered from the published replies: no model call"
            )
        unpriced = f" and {self.unpriced} cell(s) the published run lacks" if self.unpriced else ""
        return (
            f"[forecast {self.run_id}] {self.cells} cells: {self.from_published} from the published replies, {asks} ask the "
            f"model: about {self.calls} model calls{unpriced}, about {duration(self.seconds)} at the published run's "
            "pace (its machine; the progress lines give this machine's)"
        )


def _read(path: Path) -> dict:
    try:
        value = decode_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _cost(cell_dir: Path, seen: set[tuple[str, float, object]]) -> tuple[int, float]:
    """Distinct requests of a published cell not already counted, and their recorded seconds."""
    calls, seconds = 0, 0.0
    try:
        text = attempts_text(cell_dir)
    except (OSError, UnicodeDecodeError, GzipReadError):
        return 0, 0.0
    for _, attempt in numbered_json_lines(text, skip_torn=True):
        if not isinstance(attempt, dict) or attempt.get("kind") in NO_MODEL_CALL:
            continue
        request = (str(attempt.get("prompt_hash")), float(attempt.get("temperature", 0.0)), attempt.get("seed"))
        if request in seen:
            continue
        seen.add(request)
        calls += 1
        latency = attempt.get("model_latency_s", 0.0)
        seconds += float(latency) if isinstance(latency, (int, float)) else 0.0
    return calls, seconds


def forecast(params: StudyParams, published_dir: Path, build: str, fresh: bool = False) -> Forecast:
    """How the grid of `params` will be answered, given the published run in `published_dir` and this machine's `build`."""
    cells: list[Cell] = expand_grid(params)
    if not published_dir.is_dir():
        return Forecast(params.run_id, len(cells), 0, 0, 0.0, len(cells), False)
    from_published = calls = unpriced = 0
    seconds = 0.0
    seen: set[tuple[str, float, object]] = set()
    for cell in cells:
        cell_dir = cell.directory(published_dir)
        manifest = _read(cell_dir / MANIFEST_FILE)
        if not manifest:
            unpriced += 1
            continue
        recorded_build = (manifest.get("llama_build") or {}).get("fingerprint")
        same = (
            not fresh
            and manifest.get("parameters", {}).get("model") == params.model
            and recorded_build in (None, build)
        )
        if same:
            from_published += 1
            continue
        n, s = _cost(cell_dir, seen)
        calls, seconds = calls + n, seconds + s
    return Forecast(params.run_id, len(cells), from_published, calls, seconds, unpriced, True)
