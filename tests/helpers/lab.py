"""A small finished run (both modes, two configurations, scored for real on the tiny graph) for notebook tests."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.helpers import FIXTURES


def finished_run(base: Path) -> Path:
    """Write, evaluate and return the parameter file of run `lab` under `base/results` (attempts written by hand)."""
    from t2c_lib.agent import ErrorType
    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph.ladybug import LadybugStore
    from t2c_lib.runs.layout import Cell
    from t2c_lib.study.evaluation import evaluate_cell
    from tests.helpers import WRONG, recorded, write_cell

    dataset = load_dataset(FIXTURES / "tiny")
    run_dir = base / "results" / "lab"
    params = {
        "run_id": "lab",
        "dataset": str(FIXTURES / "tiny"),
        "prompt_types": ["Zero-Shot"],
        "schema_formats": ["full_schema", "only_paths"],
        "modes": ["single-pass", "agentic"],
    }
    params_file = base / "lab.yaml"
    params_file.write_text(yaml.safe_dump(params), encoding="utf-8")

    def single(item):
        if item.id == "tiny-001":
            return [recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR)]
        return [recorded(item.id, 1, item.cypher if item.id == "tiny-002" else WRONG, None)]

    def agentic(item):
        if item.id == "tiny-001":
            return [
                recorded(item.id, 1, "MATCH (p:Person RETURN p", ErrorType.SYNTAX_ERROR),
                recorded(item.id, 2, item.cypher, None),
            ]
        return single(item)

    with LadybugStore(dataset, root=base / "store") as store:
        for schema_format in params["schema_formats"]:
            for mode, plan in (("single-pass", single), ("agentic", agentic)):
                cell = Cell(mode, "Zero-Shot", schema_format)
                write_cell(run_dir, cell, dataset.questions, plan)
                evaluate_cell(
                    cell, run_dir, dataset.questions, dataset, store, "kg-axel", 1 if mode == "single-pass" else 3, 10.0
                )
    return params_file
