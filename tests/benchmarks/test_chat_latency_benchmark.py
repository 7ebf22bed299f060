"""benchmarks/chat_latency.py: seconds per kind of chat turn, from a run's records; cached turns left out."""

from __future__ import annotations

import importlib.util
import json
import sys

from tests.helpers import ROOT

spec = importlib.util.spec_from_file_location("chat_latency", ROOT / "benchmarks" / "chat_latency.py")
chat_latency = importlib.util.module_from_spec(spec)
sys.modules["chat_latency"] = chat_latency
spec.loader.exec_module(chat_latency)


def _turn(turn, intent, query, generate, calls, total=1.0):
    steps = {"route": 0.0, "generate": generate, "validate": 0.0, "execute": 0.0, "answer": total - generate}
    return {"session_id": "d1", "turn": turn, "intent": intent, "query": query, "durations": steps, "llm_calls": calls}


def test_turns_are_timed_by_kind_and_a_turn_with_a_cached_request_is_left_out(tmp_path):
    calls = [
        {"dialogue": "d1", "turn": turn, "model_id": "local/m", "key": f"{turn:064x}", "cached": cached}
        for turn, cached in ((1, False), (2, False), (3, True))
    ]
    (tmp_path / "model_calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls), encoding="utf-8")
    turns = [
        _turn(1, "EXECUTE_QUERY", "MATCH (m) RETURN m", 9.0, 5, total=12.0),
        _turn(2, "REQUEST_MODIFICATION", "MATCH (m) RETURN m LIMIT 3", 0.0, 2, total=4.0),
        _turn(3, "EXECUTE_QUERY", "MATCH (m) RETURN m", 1.0, 5, total=2.0),
        _turn(4, "ACKNOWLEDGE", None, 0.0, 0, total=0.5),
    ]
    session = tmp_path / "sessions" / "d1"
    session.mkdir(parents=True)
    lines = [json.dumps(t) for t in turns] + ["{torn", "[1]"]
    (session / "analytics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = {row["kind"]: row for row in chat_latency.rows(tmp_path)}
    assert found["new question"] == {
        "kind": "new question", "turns": 1, "median_s": 12.0, "slowest_s": 12.0, "median_model_requests": 5,
    }  # fmt: skip
    assert found["follow-up by token edit"]["median_s"] == 4.0
    assert found["no query"]["turns"] == 1
    assert found["left out: a request came from the cache"]["turns"] == 1
    assert "follow-up written by the model" not in found
