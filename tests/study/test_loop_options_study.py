"""A study cell with loop options on: parameters, manifest and signature name them; attempts and metrics hold the
extra attempts; a thesis cell's manifest does not mention them. The model is a scripted stand-in (named as such)."""

from __future__ import annotations

import json

import pytest

from t2c_lib.llm.base import Completion, Usage
from t2c_lib.study.params import params_from_dict
from t2c_lib.study.steps import evaluate, infer

# a study pipeline end to end (evaluate, write, publish): `make test` runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

BROKEN = "<cypher>MATCH (m:MKK) RETURN m.nama</cypher>"  # a label typo the corrector fixes


class AlwaysTheSameStandIn:
    """A scripted stand-in that answers every request with the same broken query (question order does not matter)."""

    model_id = "scripted-stand-in"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, seed=None) -> Completion:
        self.calls += 1
        return Completion(BROKEN, Usage(10, 5), latency_s=0.0, model=self.model_id)


def run_cell(tmp_path, **options):
    params = params_from_dict(
        {"run_id": "opts", "limit": 3, "test_suite_copies": 0, "strategies": ["feedback"], **options}
    )
    model = AlwaysTheSameStandIn()
    infer(params, "Zero-Shot", "full_schema", "feedback", model=model, results_dir=tmp_path, progress=False)
    cell = tmp_path / "opts" / "feedback" / "Zero-Shot_Full"
    return params, model, cell, json.loads((cell / "manifest.json").read_text(encoding="utf-8"))


def test_a_cell_with_the_corrector_records_it_everywhere(tmp_path):
    params, model, cell, manifest = run_cell(tmp_path, corrector="schema")
    assert manifest["parameters"]["corrector"] == "schema" and "repair_turns" not in manifest["parameters"]
    assert manifest["signature"].endswith("loop:corr-schema") or "|loop:corr-schema|" in manifest["signature"]
    assert manifest["strategy_settings"]["options"] == {"corrector": "schema"}
    records = [json.loads(line) for line in (cell / "attempts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert model.calls == 3  # one call per question: the corrector's query passes
    assert [r["kind"] for r in records] == ["generate", "corrector"] * 3
    assert all(r["ok"] and r["query"] == "MATCH (m:MK) RETURN m.nama" for r in records[1::2])
    summary = evaluate(params, "Zero-Shot", "full_schema", "feedback", results_dir=tmp_path)
    assert summary["agentic"]["n_recovered"] == 3 and summary["agentic"]["n_refinements"] == 0


def test_a_thesis_cell_manifest_names_no_option(tmp_path):
    _, _, _, manifest = run_cell(tmp_path)
    assert not {"repair_turns", "repeat_guard", "repeat_guard_retries", "corrector"} & set(manifest["parameters"])
    assert "strategy_settings" not in manifest and "loop:" not in manifest["signature"]
