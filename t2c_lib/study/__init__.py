"""The study: a grid of cells (strategy x prompt type x schema format) run, scored and compared.

Where each part lives:

| module | holds |
| --- | --- |
| `params.py`, `param_bounds.py` | the parameter file, checked strictly (`StudyParams`); the range of every number in it |
| `grid.py` | the grid of a parameter file: its cells in run order |
| `run_record.py` | `run.json`: a run folder bound to the settings it started with (`--replace-run` moves it aside) |
| `model_precedence.py` | which model a run uses: `--model`, else `T2C_MODEL`, else the file |
| `screen.py` | the gold screen (pairs that cannot serve as ground truth, with reasons) and the sample |
| `runner.py` | one cell's questions through the loop, logged as it goes (`runs.runlog`) |
| `manifest.py` | manifests and signatures; a resumed cell keeps its settings |
| `steps.py` | the three steps notebooks and the CLI call: `infer`, `evaluate`, `analyze` |
| `evaluation.py` | one cell's `metrics.csv`, `attempt_scores.csv`, `summary.json` (numbers from `metrics/`) |
| `paper_tables.py` | the paper's headline tables (kept here: the published `headline.tex` files name this path) |
| `make.py`, `progress.py`, `notebook_engine.py`, `kernel.py` | `make all`: its rules, its progress line, papermill on IPC, the notebooks' kernel |
| `notebook_params.py` | a notebook's papermill parameters checked against the names it takes; t2c errors as one line |
| `table_view.py` | a few rows shown in a notebook without pandas |

A run folder's files (the cells' layout, the attempt log, `summary.json`, the gold screen's note) are
`t2c_lib.runs`; a finished run's tables, figures and failures are `t2c_lib.report`: both lie below this
package and never import it.

Published runs (copy, seed, rerun check, replication, forecast, the README's tables and their loop rows) are
`t2c_lib.publish`, which only `t2c publish` and `t2c study seed/reproduced/replicate/tables` import.

Every number is computed in `t2c_lib.metrics` (paired statistics included); this package only
reads and writes the files around those calls. The names below are the notebooks' API
(`from t2c_lib import study; study.infer(...)`, a few from `runs` and `report`); each loads its module on first use, so that
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
    "t2c_lib.runs.layout": ("Cell", "expand_grid", "run_dir_for"),
    "t2c_lib.runs.runlog": ("read_jsonl", "write_json"),
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
    "t2c_lib.report.analysis": (
        "RunTables",
        "analyze_run",
        "summary_header",
        "paired_note",
        "readable_summary",
        "summary_view",
    ),
    "t2c_lib.report.compare": ("RunPair", "compare_runs"),
    "t2c_lib.report.plots": (
        "figures_of",
        "skipped_figures",
        "export_figures",
        "export_conversation_figure",
        "fig_conversations",
    ),
    "table_view": ("Table", "table"),
}
_WHERE = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """Load the module behind a public name on first use (see the module docstring for why)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module if "." in module else f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
