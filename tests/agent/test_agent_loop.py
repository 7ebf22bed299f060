"""Unit tests of the agentic loop with a scripted model stand-in (named as such) on the real embedded store."""

from __future__ import annotations

import pytest

from t2c_lib.agent import AgentLoop, AgentStatus, Attempt, ErrorType
from t2c_lib.feedback import FeedbackBuilder
from t2c_lib.llm.base import ChatModel, LLMError
from t2c_lib.prompts import Configuration, PromptBuilder
from t2c_lib.records import revisions
from t2c_lib.validation import build_chain, make_context
from tests.helpers import ScriptedModelStandIn

GOOD = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks"
QUESTION = "Berapa SKS mata kuliah 'Basis Data'?"


@pytest.fixture(scope="module")
def parts(kurikulum_store, kurikulum):
    ctx = make_context(kurikulum_store, timeout_s=1.0)
    chain = build_chain(kurikulum_store)
    config = Configuration.from_name("Zero-Shot_Full")
    prompts = PromptBuilder(config, ctx.schema.render(config.schema_format), kurikulum.language, kurikulum.examples)
    return chain, ctx, prompts, FeedbackBuilder(ctx.schema, kurikulum.language, ctx.timeout_s)


def make_loop(parts, model, **kwargs):
    chain, ctx, prompts, feedback = parts
    return AgentLoop(model, chain, ctx, prompts, feedback, **kwargs)


def test_stand_in_satisfies_the_protocol():
    assert isinstance(ScriptedModelStandIn([]), ChatModel)


def test_first_attempt_success(parts):
    model = ScriptedModelStandIn([f"<cypher>{GOOD}</cypher>"])
    state = make_loop(parts, model).run(QUESTION, "kurikulum-001")
    assert state.success and state.status is AgentStatus.SUCCESS and state.iterations == 1
    assert state.final_query == GOOD and state.kg_valid
    assert state.result is not None and state.result.rows == parts[1].store.query(GOOD).rows
    attempt = state.attempts[0]
    assert attempt.ok and attempt.feedback is None and attempt.status == "SUCCESS"
    assert [v.validator for v in attempt.validations] == [
        "guard",
        "syntax",
        "schema",
        "properties",
        "execution",
        "non_empty",
    ]
    assert model.requests[0]["temperature"] == 0.0


BAD_QUERIES = {
    ErrorType.NO_QUERY: "Maaf, saya tidak tahu jawabannya.",
    ErrorType.UNSAFE_QUERY: "<cypher>MATCH (m:MK {nama: 'Basis Data'}) SET m.sks = 0 RETURN m.sks</cypher>",
    ErrorType.SYNTAX_ERROR: "<cypher>MATCH (m:MK {nama: 'Basis Data' RETURN m.sks</cypher>",
    ErrorType.SCHEMA_ERROR: "<cypher>MATCH (m:Matkul {nama: 'Basis Data'}) RETURN m.sks</cypher>",
    ErrorType.PROPERTIES_ERROR: "<cypher>MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kredit</cypher>",
    ErrorType.EXECUTION_ERROR: "<cypher>MATCH (m:MK) WHERE m.nama = 3 RETURN m.sks</cypher>",
    ErrorType.TIMEOUT: "<cypher>MATCH p = (a)-[*1..12]-(b) RETURN count(p)</cypher>",
    ErrorType.RESOURCE_LIMIT: "<cypher>RETURN " + "(" * 40 + "1" + ")" * 40 + "</cypher>",
    ErrorType.EMPTY_RESULT: "<cypher>MATCH (m:MK {nama: 'basis data'}) RETURN m.sks</cypher>",
}


@pytest.mark.parametrize(
    "error_type",
    # TIMEOUT waits out the store's time limit twice (the timeout retry): `make test` runs it
    [pytest.param(e, marks=pytest.mark.slow) if e is ErrorType.TIMEOUT else e for e in ErrorType],
    ids=lambda e: e.value,
)
def test_recovers_from_each_error_type(parts, error_type):
    model = ScriptedModelStandIn([BAD_QUERIES[error_type], f"<cypher>{GOOD}</cypher>"])
    seen: list[Attempt] = []
    state = make_loop(parts, model, on_attempt=seen.append).run(QUESTION, "q1")
    assert state.success and state.iterations == 2 and state.final_query == GOOD
    first, second = state.attempts
    assert seen == state.attempts
    assert not first.ok and first.error_type is error_type and first.status == "REFINING"
    assert first.feedback and second.feedback is None and second.status == "SUCCESS"
    # the refinement request: same system message, question + failed query + feedback, refinement temperature
    refine = model.requests[1]
    assert refine["temperature"] == 0.1 and second.temperature == 0.1 and first.temperature == 0.0
    assert refine["messages"][0] == model.requests[0]["messages"][0]
    assert len(refine["messages"]) == 2
    body = refine["messages"][1].content
    assert QUESTION in body and first.feedback.strip() in body
    if first.query:
        assert first.query in body
    assert first.prompt_hash != second.prompt_hash


def test_stops_at_max_iterations_with_failed(parts):
    bad = BAD_QUERIES[ErrorType.SCHEMA_ERROR]
    model = ScriptedModelStandIn([bad, bad, bad], prompt_tokens=111, completion_tokens=7)
    statuses: list[AgentStatus] = []
    state = make_loop(parts, model, max_iterations=3, on_status=lambda s: statuses.append(s.status)).run(QUESTION)
    assert not state.success and state.status is AgentStatus.FAILED
    assert state.iterations == 3 and [a.iteration for a in state.attempts] == [1, 2, 3]
    assert [a.status for a in state.attempts] == ["REFINING", "REFINING", "FAILED"]
    assert all(a.feedback for a in state.attempts)  # the last attempt's feedback is recorded though never sent
    assert state.error_type is ErrorType.SCHEMA_ERROR and not state.kg_valid
    assert (state.prompt_tokens, state.completion_tokens, state.total_tokens) == (333, 21, 354)
    assert state.model_time_s == pytest.approx(0.75)
    assert state.validation_time_s == pytest.approx(sum(a.validation_s for a in state.attempts))
    assert statuses[0] is AgentStatus.GENERATING and statuses[-1] is AgentStatus.FAILED
    assert AgentStatus.REFINING in statuses and AgentStatus.VALIDATING in statuses
    assert not model.responses


def test_kg_valid_but_empty_is_not_success(parts):
    bad = BAD_QUERIES[ErrorType.EMPTY_RESULT]
    state = make_loop(parts, ScriptedModelStandIn([bad]), max_iterations=1).run(QUESTION)
    assert not state.success and state.kg_valid and state.error_type is ErrorType.EMPTY_RESULT


def test_single_pass_first_request_equals_agentic_first_request(parts):
    agentic = ScriptedModelStandIn([BAD_QUERIES[ErrorType.SCHEMA_ERROR], f"<cypher>{GOOD}</cypher>"])
    single = ScriptedModelStandIn([BAD_QUERIES[ErrorType.SCHEMA_ERROR]])
    a = make_loop(parts, agentic).run(QUESTION, "q")
    s = make_loop(parts, single, max_iterations=1).run(QUESTION, "q")
    assert single.requests[0] == agentic.requests[0]
    assert s.strategy == "single-pass" and a.strategy == "feedback"  # the thesis's "agentic" is the feedback strategy
    assert s.iterations == 1 and s.status is AgentStatus.FAILED
    first_a, first_s = a.attempts[0].to_dict(), s.attempts[0].to_dict()
    for key in ("mode", "status", "validation_s", "validations"):
        first_a.pop(key), first_s.pop(key)
    assert first_a == first_s


def test_attempt_round_trips_through_json(parts):
    import json

    state = make_loop(
        parts, ScriptedModelStandIn([BAD_QUERIES[ErrorType.PROPERTIES_ERROR], f"<cypher>{GOOD}</cypher>"])
    ).run(QUESTION, "q")
    for attempt in state.attempts:
        again = Attempt.from_dict(json.loads(json.dumps(attempt.to_dict())))
        assert again == attempt
    assert json.loads(json.dumps(state.to_dict()))["iterations"] == 2


def test_cot_reasoning_is_recorded(parts, kurikulum):
    chain, ctx, _, feedback = parts
    config = Configuration.from_name("CoT_Only-Paths")
    prompts = PromptBuilder(config, ctx.schema.render(config.schema_format), "id", kurikulum.examples)
    model = ScriptedModelStandIn([f"<think>Cari MK lalu sks.</think><cypher>{GOOD}</cypher>"])
    state = AgentLoop(model, chain, ctx, prompts, feedback).run(QUESTION)
    assert state.success and state.attempts[0].reasoning == "Cari MK lalu sks."
    assert state.config == "CoT_Only-Paths"


def test_model_error_propagates(parts):
    class FailingModelStandIn(ScriptedModelStandIn):
        def complete(self, messages, temperature=0.0, max_tokens=512, stop=None):
            raise LLMError("endpoint http://127.0.0.1:1 refused the connection")

    seen: list[Attempt] = []
    with pytest.raises(LLMError, match="refused"):
        make_loop(parts, FailingModelStandIn([]), on_attempt=seen.append).run(QUESTION)
    assert seen == []


def test_invalid_max_iterations(parts):
    with pytest.raises(ValueError, match="at least 1"):
        make_loop(parts, ScriptedModelStandIn([]), max_iterations=0)


def test_signature_records_settings(parts):
    sig = make_loop(parts, ScriptedModelStandIn([]), max_iterations=3).signature()
    assert sig["model"] == "scripted-stand-in" and sig["max_iterations"] == 3
    assert sig["validators"] == ["guard", "syntax", "schema", "properties", "execution", "non_empty"]
    assert sig["temperature"] == 0.0 and sig["refine_temperature"] == 0.1
    assert "prompts/id/zero_shot.txt" in sig["templates"] and len(sig["schema_hash"]) == 16


def test_repeated_query_is_named_in_the_feedback(parts):
    bad = BAD_QUERIES[ErrorType.PROPERTIES_ERROR]
    model = ScriptedModelStandIn([bad, bad, f"<cypher>{GOOD}</cypher>"])
    state = make_loop(parts, model).run(QUESTION)
    first, second, third = state.attempts
    assert "sudah dicoba" not in first.feedback
    assert second.feedback.startswith("Query ini sama dengan query yang sudah dicoba")
    # so the third request differs from the second although the failed query is the same
    assert second.prompt_hash != third.prompt_hash and state.success


def test_repeated_empty_answer_changes_the_next_request(parts):
    model = ScriptedModelStandIn(["tidak tahu", "masih tidak tahu", f"<cypher>{GOOD}</cypher>"])
    state = make_loop(parts, model).run(QUESTION)
    first, second, _ = state.attempts
    assert first.error_type is second.error_type is ErrorType.NO_QUERY
    assert second.feedback.startswith("Lagi-lagi jawaban Anda tidak berisi query Cypher.")
    assert model.requests[1]["messages"] != model.requests[2]["messages"]


def test_each_refinement_records_its_change_and_whether_it_repeats_a_failed_query(parts):
    """Scripted stand-in: a schema error, the same query again (other whitespace, a `;`), no query, an edit that passes."""
    bad = "MATCH (m:Matkul {nama: 'Basis Data'}) RETURN m.sks"
    again = "MATCH (m:Matkul {nama: 'Basis Data'})\n   RETURN m.sks;"
    model = ScriptedModelStandIn(
        [f"<cypher>{bad}</cypher>", f"<cypher>{again}</cypher>", "tidak tahu", f"<cypher>{GOOD}</cypher>"]
    )
    seen: list[Attempt] = []
    state = make_loop(parts, model, max_iterations=4, on_attempt=seen.append).run(QUESTION, "q1")
    assert state.success and state.iterations == 4 and seen == state.attempts
    assert [(a.change, a.repeats_failed) for a in state.attempts] == [
        ("", None),  # a first attempt revises nothing
        ("none", True),  # the failed query again, whitespace and the semicolon aside
        ("no_query", False),
        ("new", False),  # after no query, any query is new
    ]
    # what the loop wrote is what the pure rule derives from the recorded queries alone
    derived = [(r.change.value, r.repeats_failed) if r else ("", None) for r in revisions(state.attempts)]
    assert derived == [(a.change, a.repeats_failed) for a in state.attempts]
    written = state.to_dict()["attempts"]
    assert [(a["change"], a["repeats_failed"]) for a in written] == derived


def test_an_edited_refinement_is_an_edit_and_not_a_repeat(parts):
    model = ScriptedModelStandIn([BAD_QUERIES[ErrorType.PROPERTIES_ERROR], f"<cypher>{GOOD}</cypher>"])
    first, second = make_loop(parts, model).run(QUESTION, "q1").attempts
    assert (first.change, first.repeats_failed) == ("", None)
    assert (second.change, second.repeats_failed) == ("edit", False)  # m.kredit -> m.sks
