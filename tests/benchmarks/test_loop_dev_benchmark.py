"""benchmarks/loop_dev.py's numbers on two dev questions, the model a scripted stand-in (named as such)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from t2c_lib.config import PROJECT_ROOT
from tests.helpers import ScriptedModelStandIn

sys.path.insert(0, str(PROJECT_ROOT / "benchmarks"))
import loop_dev

DEV = PROJECT_ROOT / "data" / "kurikulum" / "dev" / "questions.csv"


def test_loop_dev_counts_repeats_repairs_pass_at_1_and_calls(kurikulum_store, kurikulum, tmp_path: Path):
    questions = [
        ("d1", "Berapa SKS mata kuliah 'Basis Data'?", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks"),
        ("d2", "Apa kode mata kuliah 'Basis Data'?", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kode"),
    ]
    wrong = "<cypher>MATCH (m:MK {nama: 'basis data'}) RETURN m.sks</cypher>"
    model = ScriptedModelStandIn([wrong, "<cypher>MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kode</cypher>"])
    args = argparse.Namespace(
        config="Zero-Shot_Full", max_iterations=3, refine_temperature=0.1, max_tokens=256, timeout=5.0
    )
    row = loop_dev.measure("corrector", {"corrector": "schema"}, questions, args, kurikulum_store, kurikulum, model)
    assert row["first_attempts_chain_invalid"] == 1 and row["made_valid"] == 1  # the corrector fixed the literal
    assert row["pass_at_1"] == 1.0 and row["llm_calls"] == 2 and row["refinements"] == 0
    assert "repeat 0/0 (n/a; accepted 0/0)" in loop_dev.line(row)
    assert len(loop_dev.read_questions(DEV)) >= 40
    assert loop_dev.parse_option("x:repeat_guard=true;repeat_guard_retries=3") == (
        "x",
        {"repeat_guard": True, "repeat_guard_retries": 3},
    )
