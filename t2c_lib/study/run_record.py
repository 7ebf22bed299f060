"""A run folder bound to the settings it was started with: `results/<run_id>/run.json`.

The first inference of a run writes `run.json` (its parameters, dataset hash, model and
llama.cpp build; sorted keys, no clock, no commit: the same run writes the same bytes). Every
later step that writes into or reads from the run (`t2c run`, notebook 01, `make all`,
`t2c evaluate`, `t2c analyze`, notebooks 02 and 03) compares its own settings with it and
refuses, in one line naming the keys that differ, unless they are the same. The two ways out: a
new `run_id`, or `--replace-run` (`T2C_REPLACE_RUN=1`, `make all REPLACE_RUN=1`), which moves
the old run aside to `results/<run_id>.replaced-<n>/` (its figures to `figures/<run_id>.replaced-<n>/`),
never deleting it. A run made before `run.json` existed is bound to the settings most of its
cells' manifests record.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from t2c_lib import config
from t2c_lib.errors import StudyError
from t2c_lib.files.outputs import to_json
from t2c_lib.runs.layout import MANIFEST_FILE, RUN_FILE, Cell, expand_grid
from t2c_lib.runs.runlog import read_json
from t2c_lib.study.params import StudyParams, params_from_dict

REPLACE_ENV = "T2C_REPLACE_RUN"
"""`1`: a step that finds the run bound to other settings moves it aside instead of refusing."""
NOT_BINDING = ("run_id", "description", "workers", "requests_per_minute")
"""Parameters that name or pace a run, never change its numbers: a later step may differ in them."""
MODEL_KEYS = ("model", "model_id", "llama_build")
"""What only a step that asks the model checks (evaluation and analysis call none)."""


class RunSettingsDiffer(StudyError):
    """A step's settings differ from those the run folder was started with: going on would mix two runs."""


@dataclass(frozen=True)
class RunRecord:
    """What `run.json` holds: every setting a run's numbers rest on."""

    parameters: dict[str, Any]
    dataset_hash: str
    model_id: str = ""
    llama_build: str = ""

    @property
    def params(self) -> StudyParams:
        """The recorded parameters, checked like a parameter file."""
        return params_from_dict(self.parameters, source=RUN_FILE)

    def grid(self) -> list[Cell]:
        """The cells the run's parameters name: the only ones its analysis pools."""
        return expand_grid(self.params)

    def settings(self) -> dict[str, Any]:
        """Flat key -> value of every binding setting (parameters, dataset hash, model, build)."""
        flat = {k: v for k, v in self.parameters.items() if k not in NOT_BINDING}
        flat.update(dataset_hash=self.dataset_hash, model_id=self.model_id, llama_build=self.llama_build)
        return flat


def record_for(params: StudyParams, dataset_hash: str, model_id: str = "", llama_build: str = "") -> RunRecord:
    """The record of a run started with these settings (model and build: "" where not known yet)."""
    return RunRecord(params.to_dict(), dataset_hash, model_id, llama_build)


def run_dir_of(params: StudyParams, results_dir: Path | None = None) -> Path:
    return Path(results_dir or config.RESULTS_DIR) / params.run_id


def read_record(run_dir: Path) -> RunRecord | None:
    """The run's `run.json`, else (a run made before it) what most of its cells' manifests record; None: no run."""
    path = Path(run_dir) / RUN_FILE
    if path.is_file():
        data = read_json(path)
        return RunRecord(
            dict(data.get("parameters", {})),
            str(data.get("dataset_hash", "")),
            str(data.get("model_id", "")),
            str(data.get("llama_build", "")),
        )
    manifests = [read_json(p) for p in sorted(Path(run_dir).glob(f"*/*/{MANIFEST_FILE}"))]
    if not manifests:
        return None
    keyed = [json.dumps(m.get("parameters", {}), sort_keys=True) for m in manifests]
    most = Counter(keyed).most_common(1)[0][0]
    first = manifests[keyed.index(most)]
    build = first.get("llama_build") or {}
    return RunRecord(
        first.get("parameters", {}), first.get("dataset_hash", ""), first.get("model_id", ""), build.get("id", "")
    )


def differing(recorded: RunRecord, wanted: RunRecord, with_model: bool) -> list[str]:
    """The binding keys whose values differ (model, model id and build only `with_model`; an unknown one "" never)."""
    old, new = recorded.settings(), wanted.settings()
    skip = set() if with_model else set(MODEL_KEYS)
    return sorted(
        k
        for k in set(old) | set(new)
        if k not in skip and old.get(k) != new.get(k) and not (k in MODEL_KEYS[1:] and "" in (old.get(k), new.get(k)))
    )


def replace_wanted(flag: bool | None = None) -> bool:
    """`flag` when given (`--replace-run`, a notebook's `replace_run`), else `T2C_REPLACE_RUN=1`."""
    return flag if flag is not None else os.environ.get(REPLACE_ENV, "").strip() == "1"


def check_run(run_dir: Path, wanted: RunRecord, *, with_model: bool, replace: bool = False) -> Path | None:
    """Refuse in one line when the run folder is bound to other settings; with `replace`, move it aside instead.

    Returns where the old run went (None: nothing moved)."""
    recorded = read_record(run_dir)
    if recorded is None:
        return None
    keys = differing(recorded, wanted, with_model)
    if not keys:
        return None
    if replace:
        return move_aside(Path(run_dir))
    run_id = Path(run_dir).name
    raise RunSettingsDiffer(
        f"{run_dir} was started with other settings ({', '.join(keys)} differ; recorded in {RUN_FILE}): "
        f"give a new run_id, or --replace-run (notebooks: -p replace_run True; make all REPLACE_RUN=1; "
        f"{REPLACE_ENV}=1) to move the old run aside to results/{run_id}.replaced-<n>/"
    )


def move_aside(run_dir: Path, figures_dir: Path | None = None) -> Path:
    """Rename the run to the first free `<run_id>.replaced-<n>`, and its figures (`figures_dir`, by default the
    project's for a run under the project's results) to the same name; nothing is deleted."""
    if figures_dir is None and run_dir.parent.resolve() == Path(config.RESULTS_DIR).resolve():
        figures_dir = Path(config.FIGURES_DIR)
    n = 1
    while (run_dir.parent / f"{run_dir.name}.replaced-{n}").exists() or (
        figures_dir is not None and (figures_dir / f"{run_dir.name}.replaced-{n}").exists()
    ):
        n += 1
    target = run_dir.parent / f"{run_dir.name}.replaced-{n}"
    try:
        run_dir.rename(target)
    except FileNotFoundError:  # another step of the same make moved it a moment ago
        return target
    if figures_dir is not None and (figures_dir / run_dir.name).is_dir():
        (figures_dir / run_dir.name).rename(figures_dir / target.name)
    return target


def bind_run(run_dir: Path, record: RunRecord) -> None:
    """Write `run.json` when the run has none (a run already bound keeps its file, byte for byte)."""
    path = Path(run_dir) / RUN_FILE
    if path.is_file():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{RUN_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")  # cells started at once
    tmp.write_text(to_json(asdict(record), ensure_ascii=False, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
