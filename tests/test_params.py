"""Parameter files: shipped files load, unknown keys and values fail with the valid choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from t2c_lib.params import ParamsError, load_params, params_from_dict

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "params").glob("*.yaml")))
def test_shipped_parameter_files_load(name):
    params = load_params(ROOT / "params" / name)
    assert params.run_id and params.dataset


def test_thesis_grid_is_nine_configurations_by_two_modes():
    from t2c_lib.experiment import expand_grid

    params = load_params(ROOT / "params" / "thesis.yaml")
    cells = expand_grid(params)
    assert len(cells) == 18
    assert {c.configuration for c in cells} == {
        f"{p}_{s}" for p in ("Zero-Shot", "Few-Shot", "CoT") for s in ("Full", "Nodes+Paths", "Only-Paths")
    }
    assert cells[0].strategy == "feedback" and cells[-1].strategy == "single-pass"  # feedback fills the cache first
    assert params.max_iterations == 3


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"max_iteration": 3}, "unknown parameter(s) max_iteration (valid: run_id, dataset, store"),
        ({"prompt_types": ["Zero-Shot", "One-Shot"]}, "unknown value(s) One-Shot (valid: Zero-Shot, Few-Shot, CoT)"),
        ({"schema_formats": ["full"]}, "valid: full_schema, nodes_paths, only_paths"),
        ({"store": "postgres"}, "valid: ladybug, neo4j"),
        ({"modes": ["agentic", "twice"]}, "valid: single-pass, agentic"),
        ({"weights": "mine"}, "valid: kg-axel, agentic-doc"),
        ({"limit": 0}, "a positive integer or 'all'"),
        ({"max_iterations": "3"}, "a positive integer"),
        ({"run_id": "../escape"}, "names a folder"),
        ({"temperature_refine": 5}, "between 0 and 2"),
    ],
)
def test_bad_values_fail_with_the_valid_ones(raw, message):
    with pytest.raises(ParamsError) as info:
        params_from_dict(raw, source="test.yaml")
    assert message in str(info.value)
    assert str(info.value).startswith("test.yaml: ")


def test_overrides_are_checked_too():
    params = params_from_dict({"run_id": "x"})
    assert params.with_overrides(limit=5).limit == 5
    with pytest.raises(ParamsError, match="valid: ladybug, neo4j"):
        params.with_overrides(store="sqlite")


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ParamsError, match="parameter file not found"):
        load_params(tmp_path / "nope.yaml")
