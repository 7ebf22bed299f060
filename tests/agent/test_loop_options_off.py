"""With every loop option off, the `feedback` loop asks and records exactly what it did before the options existed.

Scripted stand-in (named as such) on the real embedded curriculum store. The fixture
`tests/fixtures/loop_options/options_off.json` was written by `scenarios()` below from the loop
as it stood at commit 8c34d4d (before `repair_turns`, `repeat_guard` and `corrector`); a change to
any request or record of the thesis loop fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from t2c_lib.agent import AgentLoop
from t2c_lib.feedback import FeedbackBuilder
from t2c_lib.prompts import Configuration, PromptBuilder
from t2c_lib.validation import build_chain, make_context
from tests.helpers import FIXTURES, ScriptedModelStandIn

FIXTURE = FIXTURES / "loop_options" / "options_off.json"
GOOD = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks"
QUESTION = "Berapa SKS mata kuliah 'Basis Data'?"
SCRIPTS = {
    "repeats": [
        "<cypher>MATCH (m:MK)-[:PURSUED_IN]->(x:MK) RETURN x.nama</cypher>",
        "<cypher>MATCH (m:MK)-[:PURSUED_IN]->(x:MK) RETURN x.nama</cypher>",
        "<cypher>MATCH (m:MK)-[:PURSUED_IN]->(x:MK)   RETURN x.nama;</cypher>",
    ],
    "typo_then_good": [
        "<cypher>MATCH (m:Matkul {nama: 'Basis Data'}) RETURN m.sks</cypher>",
        "<cypher>MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kredit</cypher>",
        f"<cypher>{GOOD}</cypher>",
    ],
    "no_query_then_empty": [
        "tidak tahu",
        "<cypher>MATCH (m:MK {nama: 'basis data'}) RETURN m.sks</cypher>",
        "<think>nama persis</think><cypher>MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks</cypher>",
    ],
    "first_good": [f"<cypher>{GOOD}</cypher>"],
}
CONFIGURATIONS = ("Zero-Shot_Full", "Few-Shot_Nodes+Paths", "CoT_Only-Paths")
TIMING = ("validation_s", "elapsed_s", "model_latency_s", "validation_time_s", "model_time_s")
RAN_IN = re.compile(r"ran in [0-9.]+ s")


def _strip(value):
    """A record without its measured times (they differ run to run)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str):
        return RAN_IN.sub("ran in T s", value)
    return value


def scenarios(store, dataset, **options) -> dict:
    """Every request and record of the feedback loop over the scripted scenarios and configurations."""
    ctx = make_context(store, timeout_s=2.0)
    chain = build_chain(store)
    feedback = FeedbackBuilder(ctx.schema, dataset.language, ctx.timeout_s)
    out: dict = {}
    for name in CONFIGURATIONS:
        config = Configuration.from_name(name)
        prompts = PromptBuilder(config, ctx.schema.render(config.schema_format), dataset.language, dataset.examples)
        for scenario, script in SCRIPTS.items():
            model = ScriptedModelStandIn(script)
            loop = AgentLoop(model, chain, ctx, prompts, feedback, strategy="feedback", **options)
            state = loop.run(QUESTION, f"{scenario}-q")
            requests = [
                {
                    "messages": [[m.role, m.content] for m in r["messages"]],
                    "temperature": r["temperature"],
                    "max_tokens": r["max_tokens"],
                }
                for r in model.requests
            ]
            summary = state.to_dict()
            summary.pop("wall_time_s")
            out[f"{name}/{scenario}"] = {
                "requests": requests,
                "state": _strip(summary),
                "signature": {k: v for k, v in loop.signature().items() if k != "templates"},
            }
    return json.loads(json.dumps(out))


def test_the_feedback_loop_with_options_off_asks_and_records_as_before(kurikulum_store, kurikulum):
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert scenarios(kurikulum_store, kurikulum) == expected


if __name__ == "__main__":  # writes the fixture (only from the loop before the options, see the module note)
    import tempfile

    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph.ladybug import LadybugStore

    data = load_dataset("kurikulum")
    with tempfile.TemporaryDirectory() as tmp:
        store = LadybugStore(data, root=Path(tmp))
        try:
            FIXTURE.write_text(
                json.dumps(scenarios(store, data), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
        finally:
            store.close()
