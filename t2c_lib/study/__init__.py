"""The study: a grid of cells (strategy x prompt type x schema format) run, scored and compared.

Where each part lives:

| module | holds |
| --- | --- |
| `params.py`, `param_bounds.py` | the parameter file, checked strictly (`StudyParams`); the range of every number in it |
| `grid.py` | the grid of a parameter file: its cells in run order |
| `run_record.py` | `run.json`: a run folder bound to the settings it started with (`--replace-run` moves it aside) |
| `model_precedence.py` | which model a run uses: `--model`, else `T2C_MODEL`, else the file |
| `layout.py` | the grid's cells, their folders and the files a run writes |
| `screen.py` | the gold screen (pairs that cannot serve as ground truth, with reasons) and the sample |
| `runlog.py`, `runner.py` | the crash-safe attempt log; one cell's questions through the loop |
| `manifest.py` | manifests and signatures; a resumed cell keeps its settings |
| `steps.py` | the three steps notebooks and the CLI call: `infer`, `evaluate`, `analyze` |
| `evaluation.py`, `summary_record.py` | one cell's `metrics.csv`, `attempt_scores.csv`, `summary.json` (numbers from `metrics/`); the declared `summary.json` record |
| `analysis.py`, `compare.py` | a run's comparison tables; two runs side by side |
| `plots.py`, `figure_layout.py`, `figure_text.py` | the paper's figures, their labels placed without overlaps, their captions |
| `paper_tables.py` | the paper's headline tables |
| `citations.py`, `failures.py` | what `CITATION.cff` cites (each run's `reference.csv`); `t2c failures` |
| `make.py`, `progress.py`, `notebook_engine.py`, `kernel.py` | `make all`: its rules, its progress line, papermill on IPC, the notebooks' kernel |
| `notebook_params.py` | a notebook's papermill parameters checked against the names it takes; t2c errors as one line |
| `table_view.py` | a few rows shown in a notebook without pandas |
| `table_text.py` | how a value is written into a table: the one LaTeX escaper and the one p-value formatter |

Published runs (copy, seed, rerun check, replication, forecast, the README's tables and their loop rows) are
`t2c_lib.publish`, which only `t2c publish` and `t2c study seed/reproduced/replicate/tables` import.

Every number is computed in `t2c_lib.metrics` (paired statistics included); this package only
reads and writes the files around those calls. The names below are the notebooks' API
(`from t2c_lib import study; study.infer(...)`); each loads its module on first use, so that
importing one small module of the package (the CLI's `study.params`) does not load pandas
and matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC = {
    "steps": (
        "StudyContext",
        "open_study",
        "screened_gold",
        "cell_for",
        "make_chat_model",
        "infer",
        "evaluate",
        "analyze",
        "resolve_params",
        "model_choice",
        "write_schema_recall",
        "VoteBudgetUnknown",
        "grid_cell",
        "OutsideGrid",
    ),
    "params": ("StudyParams", "ParamsError", "load_params", "params_from_dict"),
    "layout": ("Cell", "expand_grid", "run_dir_for"),
    "runlog": ("read_jsonl", "write_json"),
    "runner": ("CellReport", "run_cell"),
    "manifest": (
        "SettingsChanged",
        "recorded_cells",
        "recorded_grid",
        "recorded_models",
        "run_manifest",
        "build_manifest",
    ),
    "make": ("make_rules",),
    "notebook_params": ("check_parameters", "UnknownParameter"),
    "evaluation": ("evaluate_cell",),
    "analysis": ("RunTables", "analyze_run", "summary_header", "paired_note", "readable_summary", "summary_view"),
    "compare": ("RunPair", "compare_runs"),
    "plots": ("figures_of", "skipped_figures", "export_figures", "export_conversation_figure", "fig_conversations"),
    "table_view": ("Table", "table"),
}
_WHERE = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """Load the module behind a public name on first use (see the module docstring for why)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
