"""Parameter files: shipped files load, unknown keys and values fail with the valid choices."""

from __future__ import annotations

import pytest

from t2c_lib.study.params import ParamsError, StudyParams, check_run_id, load_params, params_from_dict, valid_run_id
from tests.helpers import ROOT


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "params").glob("*.yaml")))
def test_shipped_parameter_files_load(name):
    params = load_params(ROOT / "params" / name)
    assert params.run_id and params.dataset


def test_thesis_grid_is_nine_configurations_by_two_modes():
    from t2c_lib.runs.layout import expand_grid

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
        ({"schema_formats": ["retreived"]}, "valid: full_schema, nodes_paths, only_paths, retrieved"),
        ({"schema_descriptions": "yes"}, "true or false"),
        ({"linking_ranking": "bm25"}, "valid: embedding, lexical, hybrid"),
        ({"linking_k": 0}, "a positive integer"),
        ({"linking_rel_k": -1}, "a non-negative integer"),
    ],
)
def test_bad_values_fail_with_the_valid_ones(raw, message):
    with pytest.raises(ParamsError) as info:
        params_from_dict(raw, source="test.yaml")
    assert message in str(info.value)
    assert str(info.value).startswith("test.yaml: ")


def test_linking_grid_puts_retrieved_beside_the_thesis_formats():
    from t2c_lib.runs.layout import expand_grid

    params = load_params(ROOT / "params" / "linking.yaml")
    configurations = {c.configuration for c in expand_grid(params)}
    assert len(configurations) == 12 and "CoT_Retrieved" in configurations and "CoT_Full" in configurations
    assert load_params(ROOT / "params" / "thesis.yaml").schema_formats == ("full_schema", "nodes_paths", "only_paths")


def test_overrides_are_checked_too():
    params = params_from_dict({"run_id": "x"})
    assert params.with_overrides(limit=5).limit == 5
    with pytest.raises(ParamsError, match="valid: ladybug, neo4j"):
        params.with_overrides(store="sqlite")


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ParamsError, match="parameter file not found"):
        load_params(tmp_path / "nope.yaml")


def test_strategies_replace_modes_and_the_old_key_is_mapped():
    assert params_from_dict({"modes": ["single-pass", "agentic"]}).strategies == ("single-pass", "feedback")
    assert params_from_dict({"strategies": ["agentic", "vote"]}).strategies == ("feedback", "vote")
    assert params_from_dict({}).strategies == ("single-pass", "feedback")
    assert "modes" not in params_from_dict({}).to_dict()
    assert params_from_dict({}).with_overrides(modes=["agentic"]).strategies == ("feedback",)
    with pytest.raises(ParamsError, match="not both"):
        params_from_dict({"modes": ["agentic"], "strategies": ["vote"]})
    with pytest.raises(ParamsError, match="valid: single-pass, feedback, history, raw-error, verifier, vote"):
        params_from_dict({"strategies": ["reflexion"]})
    with pytest.raises(ParamsError, match="vote_temperature"):
        params_from_dict({"vote_temperature": 0})


def test_grid_order_puts_feedback_first_and_vote_last():
    from t2c_lib.runs.layout import expand_grid

    params = params_from_dict(
        {
            "strategies": ["vote", "single-pass", "verifier", "history", "feedback", "raw-error"],
            "prompt_types": ["CoT"],
            "schema_formats": ["full_schema"],
        }
    )
    assert [c.strategy for c in expand_grid(params)] == [
        "feedback",
        "history",
        "raw-error",
        "verifier",
        "single-pass",
        "vote",
    ]


def test_shipped_params_files_keep_the_thesis_grid_and_add_the_strategies_grid():
    from t2c_lib.study.params import load_params

    assert load_params(ROOT / "params" / "thesis.yaml").strategies == ("single-pass", "feedback")
    assert set(load_params(ROOT / "params" / "strategies.yaml").strategies) == {
        "single-pass",
        "feedback",
        "history",
        "raw-error",
        "verifier",
        "vote",
    }


@pytest.mark.parametrize(
    "run_id",
    [
        "thesis\n",
        "thesis\r",
        "the\nsis",
        "a/b",
        "a\\b",
        "..",
        "a..b",
        "t\x00",
        "t\x1b[2J",
        ".hidden",
        "-x",
        "",
        "run id",
    ],
)
def test_a_run_id_that_is_no_single_folder_name_is_refused_in_one_line(run_id):
    with pytest.raises(ParamsError) as info:
        params_from_dict({"run_id": run_id}, source="test.yaml")
    message = str(info.value)
    assert "\n" not in message and "\r" not in message and "names a folder" in message
    with pytest.raises(ParamsError, match="names a folder"):
        StudyParams().with_overrides(run_id=run_id)  # `t2c run --run-id`
    with pytest.raises(ParamsError, match="names a folder"):
        StudyParams(run_id=run_id)  # a notebook builds one directly
    assert not valid_run_id(run_id)


def test_the_shipped_run_ids_stay_valid():
    for path in sorted((ROOT / "params").glob("*.yaml")):
        assert valid_run_id(load_params(path).run_id)
    assert check_run_id("thesis-constrained.v2_1") == "thesis-constrained.v2_1"
