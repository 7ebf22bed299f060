"""Manifests and signatures: every setting behind a run's numbers, and the check that a resumed cell keeps them.

A cell's `manifest.json` records the package version, git commit, dataset hash, store, model
(for a packaged model also the llama.cpp build that ran it, `llm.build`), template hashes,
validators, schema hashes and parameters, and a cell's `loop` (the name results show, derived from its
strategy and options); no secrets, no timestamps, so the
same run writes the same bytes. `run_signature` is its one-line form (like sacrebleu's).
A cell is resumed only under the settings it was started with (`check_same_settings`).
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from t2c_lib import __version__, config
from t2c_lib.agent.names import canonical_strategy
from t2c_lib.agent.options import OPTION_KEYS, LoopOptions
from t2c_lib.agent.strategies import loop_name, option_defaults, strategy_spec
from t2c_lib.datasets import Dataset
from t2c_lib.errors import MissingResults, StudyError
from t2c_lib.graph.base import GraphStore
from t2c_lib.runs.layout import MANIFEST_FILE, Cell, expand_grid
from t2c_lib.runs.runlog import read_json
from t2c_lib.schema import SchemaFormat
from t2c_lib.study.params import StudyParams, params_from_dict


def git_commit(root: Path | None = None) -> str:
    """The checkout's commit (with `-dirty` when files changed), or `unknown` outside git."""
    root = root or config.PROJECT_ROOT
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if commit.returncode != 0:
            return "unknown"
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return commit.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def build_manifest(
    params: StudyParams,
    dataset: Dataset,
    store: GraphStore,
    model_id: str,
    template_hashes: dict[str, str],
    chain: Iterable[str],
    cell: Cell | None = None,
) -> dict[str, Any]:
    """Every setting behind a run's numbers; no secrets, no timestamps (same run, same bytes)."""
    schema = store.schema()
    manifest: dict[str, Any] = {
        "package": "t2c",
        "package_version": __version__,
        "git_commit": git_commit(),
        "dataset": dataset.name,
        "dataset_hash": dataset.hash,
        "store": store.name,
        "model_id": model_id,
        **model_build(model_id),
        "template_hashes": template_hashes,
        "validators": list(chain),
        "schema_hashes": {fmt.value: schema.text_hash(fmt) for fmt in SchemaFormat if not fmt.per_question},
        "parameters": params.to_dict(),
    }
    if cell is not None:
        manifest.update(
            {
                "strategy": cell.strategy,
                "configuration": cell.configuration,
                "prompt_type": cell.prompt_type,
                "schema_format": cell.schema_format,
                "max_iterations": cell.max_iterations(params),
                "loop": loop_name(cell.strategy, params.to_dict()).name,  # the one name results show
            }
        )
        if SchemaFormat.parse(cell.schema_format).per_question:
            from t2c_lib.linking import settings_from
            from t2c_lib.linking.embedder import weights_version

            manifest["linking"] = {
                "signature": settings_from(params).signature(),
                "embedding_weights": weights_version(),
            }
    manifest["signature"] = run_signature(manifest)
    return manifest


def model_build(model_id: str) -> dict[str, Any]:
    """`{"llama_build": {...}}` for a packaged model (the build decides its greedy replies), else nothing.

    An endpoint's engine is not known here; its model id is all a manifest can say.
    """
    if not model_id.startswith("local/"):
        return {}
    from t2c_lib.llm.build import installed_build

    build = installed_build()
    return {"llama_build": {"fingerprint": build.fingerprint, "id": build.short}}


def run_signature(manifest: dict[str, Any]) -> str:
    """A one-line signature of a run, like sacrebleu's: model, iterations, validators, hashes."""
    parts = [
        f"t2c:{manifest['package_version']}",
        f"data:{manifest['dataset']}@{manifest['dataset_hash'][:12]}",
        f"store:{manifest['store']}",
        f"model:{manifest['model_id']}",
        f"iters:{manifest.get('max_iterations', manifest['parameters']['max_iterations'])}",
        f"T:{manifest['parameters']['temperature_first']}/{manifest['parameters']['temperature_refine']}",
        f"chain:{'+'.join(manifest['validators'])}",
        "tpl:" + ",".join(f"{k}={v[:8]}" for k, v in sorted(manifest["template_hashes"].items())),
    ]
    if "configuration" in manifest:
        parts.insert(4, f"config:{manifest.get('strategy', manifest.get('mode'))}/{manifest['configuration']}")
    if manifest["parameters"].get("split", "test") != "test":
        parts.append(f"split:{manifest['parameters']['split']}")
    loop = LoopOptions.from_values(manifest["parameters"]).tag()  # "" for the thesis loop: no part added
    if loop:
        parts.append(f"loop:{loop}")
    if manifest["parameters"].get("decoding", "free") != "free":
        parts.append(f"dec:{manifest['parameters']['decoding']}")
    if manifest.get("engine"):
        parts.append(f"engine:{manifest['engine']}")
    if manifest.get("llama_build"):
        parts.append(f"build:{manifest['llama_build']['id']}")
    return "|".join(parts)


class SettingsChanged(StudyError):
    """A cell folder holds results made with other settings; resuming would mix them."""


def check_same_settings(path: Path, manifest: dict[str, Any]) -> None:
    """Refuse to resume a cell whose earlier attempts were made with different settings."""
    if not path.is_file():
        return
    old, new = (_comparable(m) for m in (read_json(path), manifest))
    changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if changed:
        raise SettingsChanged(
            f"{path.parent} holds results made with other settings ({', '.join(changed)} differ); "
            "use a new run_id, or delete that folder to start it again"
        )


class EvaluationSettingsDiffer(StudyError):
    """An evaluation under other settings than the cell's inference recorded: its numbers would describe another run."""


NOT_INFERENCE_SETTINGS = (
    "model",  # the manifest's model_id says which model answered; scoring never calls one (`t2c run --model X`, then evaluate)
    "description",
    "workers",
    "requests_per_minute",
    "prompt_types",
    "schema_formats",
    "strategies",
    "weights",
    "scoring",
    "test_suite_copies",
)
"""Parameters an evaluation may set apart from its cell's inference: the model's name (scoring calls none), the
grid's shape, speed, and the scoring itself."""


def check_evaluation_settings(path: Path, params: StudyParams, cell: Cell) -> None:
    """Refuse, in one line, to evaluate a cell under settings other than those its manifest (`path`) recorded.

    Every parameter that decides which questions were asked and how they were answered must
    match (`max_iterations` only where the strategy iterates, `vote_k` and `vote_temperature`
    only for `vote`); a cell without a manifest has recorded nothing to check against.
    """
    if not path.is_file():
        return
    manifest = read_json(path)
    recorded = params_from_dict(manifest.get("parameters", {}), source=str(path))
    skip = set(NOT_INFERENCE_SETTINGS) | {"run_id"} | set(others_options(cell.strategy))
    if not strategy_spec(cell.strategy).reads_max_iterations:
        skip.add("max_iterations")
    differ = [
        f"{key} {getattr(recorded, key)!r} there, {getattr(params, key)!r} here"
        for key in recorded.to_dict()
        if key not in skip and getattr(recorded, key) != getattr(params, key)
    ]
    if differ:
        raise EvaluationSettingsDiffer(
            f"{path.parent}: its inference recorded other settings than this evaluation's ({'; '.join(differ)}); "
            "evaluate with the recorded ones (notebook 02: -p NAME VALUE; or `t2c evaluate --run-id`, which reads them)"
        )


NOT_AFFECTING_ANSWERS = (
    "description",
    "limit",
    "workers",
    "requests_per_minute",
    "prompt_types",
    "schema_formats",
    "modes",
    "strategies",
    "weights",
    "scoring",
    "sample_seed",
)
"""Parameters that change which questions run or how fast, not what a question's attempts are."""


def others_options(strategy: str | None) -> tuple[str, ...]:
    """The options only other strategies declare (vote's `vote_k` for every strategy but vote): they cannot change
    what this strategy's cell asked. The `feedback` loop's options are not among them: the thesis cells' manifests
    were compared on them before strategies declared options, and still are."""
    own = set(strategy_spec(strategy).options) if strategy else set()
    return tuple(k for k in option_defaults() if k not in own and k not in OPTION_KEYS)


def _comparable(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest keys that decide answers; a pre-strategy manifest (`mode: agentic`) reads as `feedback`."""
    data = {k: v for k, v in manifest.items() if k not in ("git_commit", "signature", "mode", "loop")}
    if "mode" in manifest or "strategy" in manifest:
        data["strategy"] = canonical_strategy(manifest["strategy"] if "strategy" in manifest else manifest["mode"])
    skip = NOT_AFFECTING_ANSWERS + others_options(data.get("strategy"))
    data["parameters"] = {k: v for k, v in manifest.get("parameters", {}).items() if k not in skip}
    data["parameters"].setdefault("decoding", "free")  # runs started before the setting existed decoded freely
    data["parameters"].setdefault("split", "test")  # runs started before dev splits asked the test questions
    return data


def run_manifest(params: StudyParams, run_dir: Path, grid: list[Cell] | None = None) -> dict[str, Any]:
    """The run-level manifest: parameters plus the signature of each cell of the grid (the parameters' unless given)."""
    cells = {}
    for cell in grid if grid is not None else expand_grid(params):
        path = cell.directory(run_dir) / MANIFEST_FILE
        if path.is_file():
            cells[f"{cell.strategy}/{cell.configuration}"] = read_json(path)["signature"]
    return {"run_id": params.run_id, "parameters": params.to_dict(), "cells": cells}


def recorded_models(run_dir: Path) -> list[str]:
    """The model ids that answered in a run, from its cells' manifests (which model answered, not which is set now)."""
    return sorted({read_json(path).get("model_id", "") for path in run_dir.glob(f"*/*/{MANIFEST_FILE}")} - {""})


def recorded_cells(run_id: str, results_dir: Path | None = None) -> list[tuple[Cell, StudyParams]]:
    """The started cells of a run's recorded grid (`run.json`, `study.run_record`), each with the run's recorded
    parameters (so `--run-id` needs no params file); a cell folder the record's grid does not name is left out."""
    from t2c_lib.study.run_record import read_record

    run_dir = Path(results_dir or config.RESULTS_DIR) / run_id
    record = read_record(run_dir)
    if record is None:
        raise MissingResults(
            f"{run_dir}: no run {run_id!r} found (no cell manifests); start it with `t2c run --run-id {run_id}`"
        )
    params = dataclasses.replace(record.params, run_id=run_id)  # a run moved aside keeps its folder's name
    found = [(cell, params) for cell in record.grid() if (cell.directory(run_dir) / MANIFEST_FILE).is_file()]
    if not found:
        raise MissingResults(f"{run_dir}: no cell of the run's recorded grid has started; run it with `t2c run`")
    return found


def recorded_grid(pairs: list[tuple[Cell, StudyParams]]) -> list[Cell]:
    """The grid a run was made for: every cell of the parameters its cells' manifests record (`recorded_cells`).

    A cell started from parameters whose grid lacks it (a notebook's default cell, say) is not
    in it, though its folder is in the run.
    """
    grid: dict[Cell, None] = {}
    for _, params in pairs:
        grid.update(dict.fromkeys(expand_grid(params)))
    return list(grid)
