"""What a run folder holds and where: the grid's cells, their folders and the files in them.

`results/<run_id>/<strategy>/<configuration>/` holds one cell (a strategy and a configuration
of prompt type and schema format); a run made before strategies keeps its `agentic/` folders:
they are the `feedback` strategy's. The file names below are the run's whole layout: the
runner writes attempts and questions, the evaluation metrics and summaries, the analysis its
tables under `analysis/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from t2c_lib import config
from t2c_lib.agent.names import LEGACY_STRATEGY_NAMES
from t2c_lib.agent.strategies import grid_order, strategy_spec
from t2c_lib.files.gzipped import read_gzip
from t2c_lib.schema import SchemaFormat

ATTEMPTS_FILE = "attempts.jsonl"
ATTEMPTS_GZ_FILE = f"{ATTEMPTS_FILE}.gz"
"""A published cell's attempt log (`publish.publish` gzips it); a run's own cells write `ATTEMPTS_FILE`."""
MAX_ATTEMPTS_BYTES = 256 * 1024 * 1024
"""A gzipped attempt log is refused past this decompressed (a published cell's log is well under 1 MB)."""
QUESTIONS_FILE = "questions.jsonl"
OUTAGES_FILE = "questions.outage.jsonl"
MANIFEST_FILE = "manifest.json"
RUN_FILE = "run.json"
"""In the run folder: the settings the run was started with (`study.run_record`); later steps must match them."""
METRICS_FILE = "metrics.csv"
SUMMARY_FILE = "summary.json"
ATTEMPT_SCORES_FILE = "attempt_scores.csv"
SCHEMA_RECALL_FILE = "schema_recall.csv"
GOLD_AUDIT_FILE = "gold_audit.csv"
"""In the run folder (not a cell's): which validator rejects each gold query."""
SCREEN_DIR = "gold_screen"
"""In the run folder: the gold pairs the screen kept and dropped, with reasons."""
ANALYSIS_DIR = "analysis"
"""In the run folder: the comparison tables (CSV, LaTeX) and the signature."""


class GridParams(Protocol):
    """What the grid reads of a parameter file (`study.params.StudyParams` has it), so that run files need no study."""

    @property
    def run_id(self) -> str: ...
    @property
    def strategies(self) -> tuple[str, ...]: ...
    @property
    def prompt_types(self) -> tuple[str, ...]: ...
    @property
    def schema_formats(self) -> tuple[str, ...]: ...
    @property
    def max_iterations(self) -> int: ...


LEGACY_FOLDERS = {name: legacy for legacy, name in LEGACY_STRATEGY_NAMES.items()}
"""Strategy -> the folder name runs made before strategies used for it."""


@dataclass(frozen=True)
class Cell:
    """One cell of the grid: a strategy (single-pass, feedback, ...) and a configuration name."""

    strategy: str
    prompt_type: str
    schema_format: str

    @property
    def configuration(self) -> str:
        return f"{self.prompt_type}_{SchemaFormat.parse(self.schema_format).config_label}"

    def max_iterations(self, params: GridParams) -> int:
        """The attempts a question of this cell gets: its strategy's budget rule under `params.max_iterations`."""
        return strategy_spec(self.strategy).attempts(params.max_iterations)

    def twin(self) -> Cell | None:
        """The cell of the same configuration this one waits for (its strategy's `waits_for`), or None."""
        waits_for = strategy_spec(self.strategy).waits_for
        return Cell(waits_for, self.prompt_type, self.schema_format) if waits_for else None

    def directory(self, run_dir: Path) -> Path:
        """`<run>/<strategy>/<configuration>`; an existing pre-strategy `agentic/` folder for `feedback`."""
        here = run_dir / self.strategy / self.configuration
        legacy = LEGACY_FOLDERS.get(self.strategy)
        if (
            legacy
            and not (here / ATTEMPTS_FILE).is_file()
            and (run_dir / legacy / self.configuration / ATTEMPTS_FILE).is_file()
        ):
            return run_dir / legacy / self.configuration
        return here


def expand_grid(params: GridParams) -> list[Cell]:
    """Every (strategy, prompt type, schema format) of the parameters, in run order (`agent.strategies.grid_order`:
    `feedback` first fills the cache with the first attempt the next four share, so single-pass costs nothing;
    `vote` last, because its k is `feedback`'s measured mean calls)."""
    strategies = grid_order(params.strategies)
    return [Cell(s, pt, sf) for s in strategies for pt in params.prompt_types for sf in params.schema_formats]


def run_dir_for(params: GridParams, results_dir: Path | None = None) -> Path:
    return Path(results_dir or config.RESULTS_DIR) / params.run_id


def attempt_log_cells(run_dir: Path) -> list[Path]:
    """The cell folders of a run or a published run that hold an attempt log (plain or gzipped), sorted."""
    found = {p.parent for name in (ATTEMPTS_FILE, ATTEMPTS_GZ_FILE) for p in Path(run_dir).glob(f"*/*/{name}")}
    return sorted(found)


def attempts_text(cell_dir: Path) -> str:
    """A cell's attempt log: `attempts.jsonl`, else a published cell's `attempts.jsonl.gz` (read within its limit).

    Raises OSError when the cell has neither, `gzipped.GzipReadError` for a bad gzip file."""
    plain = Path(cell_dir) / ATTEMPTS_FILE
    if plain.is_file() or not (Path(cell_dir) / ATTEMPTS_GZ_FILE).is_file():
        return plain.read_text(encoding="utf-8")
    return read_gzip(Path(cell_dir) / ATTEMPTS_GZ_FILE, MAX_ATTEMPTS_BYTES).decode("utf-8")
