"""Unit tests of each strategy's control flow, with a scripted model stand-in (named as such) on the real embedded store."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from t2c_lib.agent import AgentLoop, AgentStatus, ErrorType
from t2c_lib.agent.strategies import (
    MAX_CORRECTIONS,
    STRATEGY_NAMES,
    Strategy,
    Vote,
    get_strategy,
    parse_verdict,
    result_key,
    vote_k_from_calls,
)
from t2c_lib.feedback import FeedbackBuilder
from t2c_lib.llm.base import Completion, Usage
from t2c_lib.prompts import Configuration, PromptBuilder
from t2c_lib.validation import build_chain, make_context

GOOD = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks"
GOOD_AGAIN = "MATCH (m:MK) WHERE m.nama = 'Basis Data' RETURN m.sks"  # same rows, other text
OTHER = "MATCH (m:MK) RETURN count(m)"  # valid, other rows
SCHEMA_BAD = "MATCH (m:Matkul {nama: 'Basis Data'}) RETURN m.sks"
PROPS_BAD = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kredit"
QUESTION = "Berapa SKS mata kuliah 'Basis Data'?"


def tag(query: str) -> str:
    return f"<cypher>{query}</cypher>"


def audit(approved: bool, corrected: str = "", issues: Sequence[str] = ()) -> str:
    return json.dumps({"approved": approved, "issues": list(issues), "corrected_query": corrected})


class ScriptedModelStandIn:
    """A stand-in for an LLM in strategy unit tests only: replays scripted responses and records each request."""

    model_id = "scripted-stand-in"
    seed = 42

    def __init__(self, responses: Sequence[str]) -> None:
        self.responses = list(responses)
        self.requests: list[dict] = []

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, seed=None) -> Completion:
        self.requests.append({"messages": list(messages), "temperature": temperature, "seed": seed})
        if not self.responses:
            raise AssertionError("the strategy asked the stand-in more often than scripted")
        return Completion(self.responses.pop(0), Usage(100, 10), latency_s=0.5, model=self.model_id)


@pytest.fixture(scope="module")
def parts(kurikulum_store, kurikulum):
    ctx = make_context(kurikulum_store, timeout_s=1.0)
    config = Configuration.from_name("Zero-Shot_Full")
    prompts = PromptBuilder(config, ctx.schema.render(config.schema_format), kurikulum.language, kurikulum.examples)
    return build_chain(kurikulum_store), ctx, prompts, FeedbackBuilder(ctx.schema, kurikulum.language, ctx.timeout_s)


def run(parts, strategy, responses, **kwargs):
    chain, ctx, prompts, feedback = parts
    model = ScriptedModelStandIn(responses)
    state = AgentLoop(model, chain, ctx, prompts, feedback, strategy=strategy, **kwargs).run(QUESTION, "q1")
    assert not model.responses, "the strategy asked fewer times than scripted"
    assert state.llm_calls == len(model.requests)
    assert state.prompt_tokens == 100 * len(model.requests) and state.completion_tokens == 10 * len(model.requests)
    assert state.model_time_s == pytest.approx(0.5 * len(model.requests))
    return state, model


def user_text(request: dict) -> str:
    return request["messages"][-1].content


# --- registry ------------------------------------------------------------------------------------


def test_registry_names_and_protocol():
    assert STRATEGY_NAMES == ("single-pass", "feedback", "history", "raw-error", "verifier", "vote")
    for name in STRATEGY_NAMES:
        assert isinstance(get_strategy(name), Strategy) and get_strategy(name).name == name


def test_agentic_is_the_feedback_strategy_and_unknown_names_list_the_valid_ones():
    assert get_strategy("agentic").name == "feedback"
    with pytest.raises(ValueError, match="unknown strategy 'reflexion'.*single-pass, feedback"):
        get_strategy("reflexion")


def test_default_strategy_follows_max_iterations(parts):
    chain, ctx, prompts, feedback = parts
    model = ScriptedModelStandIn([])
    assert AgentLoop(model, chain, ctx, prompts, feedback, max_iterations=1).strategy.name == "single-pass"
    assert AgentLoop(model, chain, ctx, prompts, feedback).strategy.name == "feedback"
    assert AgentLoop(model, chain, ctx, prompts, feedback, strategy="agentic").strategy.name == "feedback"


# --- single-pass and the retry family -----------------------------------------------------------


def test_single_pass_stops_after_one_failed_attempt(parts):
    state, model = run(parts, "single-pass", [tag(SCHEMA_BAD)])
    assert state.iterations == 1 and not state.success and state.error_type is ErrorType.SCHEMA_ERROR
    assert (
        state.attempts[0].status == "FAILED"
        and state.strategy == "single-pass"
        and state.attempts[0].strategy == "single-pass"
    )


@pytest.mark.parametrize("name", ["single-pass", "feedback", "history", "raw-error", "verifier"])
def test_strategies_share_the_first_request(parts, name):
    baseline, base_model = run(parts, "single-pass", [tag(GOOD)])
    state, model = run(parts, name, [tag(GOOD)] + ([audit(True)] if name == "verifier" else []))
    assert model.requests[0] == base_model.requests[0]
    assert state.attempts[0].prompt_hash == baseline.attempts[0].prompt_hash


def test_feedback_retries_with_the_structured_feedback(parts):
    state, model = run(parts, "feedback", [tag(SCHEMA_BAD), tag(GOOD)])
    assert state.success and state.iterations == 2 and state.final_iteration == 2
    note = state.attempts[0].feedback
    assert note and note in user_text(model.requests[1]) and model.requests[1]["temperature"] == 0.1


def test_raw_error_retry_carries_only_the_validators_own_message(parts):
    state, model = run(parts, "raw-error", [tag(SCHEMA_BAD), tag(GOOD)])
    failed = next(v for v in state.attempts[0].validations if not v.ok)
    assert state.attempts[0].feedback == failed.message and failed.message
    retry = user_text(model.requests[1])
    assert failed.message in retry
    structured = FeedbackBuilder(parts[1].schema, "id", 1.0).build(failed, SCHEMA_BAD)
    assert structured != failed.message and structured not in retry
    assert state.success and state.llm_calls == 2


def test_history_shows_every_failed_attempt_and_the_schema(parts):
    state, model = run(parts, "history", [tag(SCHEMA_BAD), tag(PROPS_BAD), tag(GOOD)])
    assert state.success and state.iterations == 3
    third = user_text(model.requests[2])
    assert SCHEMA_BAD in third and PROPS_BAD in third
    assert "SCHEMA_ERROR" in third and "PROPERTIES_ERROR" in third
    assert "pelajari kesalahan" in third  # the Indonesian heading: "learn from these errors"
    assert parts[2].schema_text.strip().splitlines()[0] in third
    second = user_text(model.requests[1])
    assert SCHEMA_BAD in second and PROPS_BAD not in second


def test_retry_strategies_stop_at_max_iterations(parts):
    for name in ("feedback", "history", "raw-error"):
        state, _ = run(parts, name, [tag(SCHEMA_BAD)] * 2, max_iterations=2)
        assert state.iterations == 2 and state.status is AgentStatus.FAILED and state.attempts[-1].status == "FAILED"


# --- verifier -----------------------------------------------------------------------------------


def test_verifier_approval_keeps_the_query(parts):
    state, model = run(parts, "verifier", [tag(GOOD), audit(True)])
    assert [a.kind for a in state.attempts] == ["generate", "verify"]
    assert state.success and state.final_query == GOOD and state.llm_calls == 2
    assert state.attempts[1].verdict == {"approved": True, "issues": [], "corrected_query": ""}
    assert GOOD in user_text(model.requests[1]) and QUESTION in user_text(model.requests[1])


def test_verifier_correction_replaces_the_query_and_the_chain_judges_it(parts):
    state, _ = run(
        parts, "verifier", [tag(SCHEMA_BAD), audit(False, GOOD, ["label Matkul does not exist"]), audit(True)]
    )
    assert not state.attempts[0].ok and state.attempts[1].ok and state.attempts[1].query == GOOD
    assert state.success and state.final_query == GOOD and state.llm_calls == 3
    assert state.attempts[1].verdict["issues"] == ["label Matkul does not exist"]


def test_verifier_makes_at_most_two_corrections(parts):
    state, _ = run(parts, "verifier", [tag(GOOD), audit(False, PROPS_BAD), audit(False, SCHEMA_BAD)])
    assert MAX_CORRECTIONS == 2 and state.llm_calls == 3
    assert state.final_query == SCHEMA_BAD and not state.success  # the verifier can make things worse: recorded
    assert state.error_type is ErrorType.SCHEMA_ERROR


def test_verifier_unreadable_verdict_keeps_the_query(parts):
    state, _ = run(parts, "verifier", [tag(GOOD), "looks fine to me"])
    assert state.success and state.final_query == GOOD and state.attempts[1].verdict["approved"] is None


def test_verifier_has_nothing_to_audit_without_a_query(parts):
    state, _ = run(parts, "verifier", ["tidak tahu"])
    assert state.llm_calls == 1 and state.error_type is ErrorType.NO_QUERY


def test_parse_verdict_reads_json_inside_prose():
    v = parse_verdict('Here: {"approved": false, "issues": "bad label", "corrected_query": " MATCH (n) RETURN n "} ok')
    assert v["approved"] is False and v["issues"] == ["bad label"] and v["corrected_query"] == "MATCH (n) RETURN n"
    assert parse_verdict('{"approved": "yes"}')["approved"] is None
    nested = '{"approved": true, "issues": ' + "[" * 100_000 + "}"  # a hostile reply past the decoder's depth
    assert parse_verdict(nested)["approved"] is None


# --- vote ---------------------------------------------------------------------------------------


def test_vote_picks_the_most_frequent_valid_result(parts):
    state, model = run(parts, Vote(k=4), [tag(OTHER), tag(SCHEMA_BAD), tag(GOOD), tag(GOOD_AGAIN)])
    assert state.llm_calls == 4 and state.iterations == 4
    assert [r["seed"] for r in model.requests] == [42, 43, 44, 45]
    assert {r["temperature"] for r in model.requests} == {0.7}
    assert state.success and state.final_query == GOOD and state.final_iteration == 3
    assert state.attempts[-1].status == "SUCCESS"


def test_vote_ties_go_to_the_result_seen_first(parts):
    state, _ = run(parts, Vote(k=3), [tag(SCHEMA_BAD), tag(OTHER), tag(GOOD)])
    assert state.final_query == OTHER and state.final_iteration == 2


def test_vote_without_a_valid_sample_answers_with_the_first(parts):
    state, _ = run(parts, Vote(k=2), [tag(SCHEMA_BAD), tag(PROPS_BAD)])
    assert not state.success and state.final_iteration == 1 and state.error_type is ErrorType.SCHEMA_ERROR
    assert state.attempts[-1].status == "FAILED"


def test_vote_k_defaults_to_max_iterations_and_rounds_feedbacks_mean_up(parts):
    state, _ = run(parts, "vote", [tag(GOOD)] * 2, max_iterations=2)
    assert state.llm_calls == 2
    assert vote_k_from_calls(1.0) == 1 and vote_k_from_calls(1.31) == 2 and vote_k_from_calls(2.0000000001) == 2
    with pytest.raises(ValueError, match="positive"):
        vote_k_from_calls(0)


def test_result_key_ignores_row_order_and_column_names(kurikulum_store):
    a = kurikulum_store.query("MATCH (m:MK) RETURN m.nama AS x ORDER BY x")
    b = kurikulum_store.query("MATCH (m:MK) RETURN m.nama AS y ORDER BY y DESC")
    assert result_key(a) == result_key(b) != result_key(kurikulum_store.query(OTHER))


def test_state_json_has_strategy_and_budget(parts):
    state, _ = run(parts, "feedback", [tag(SCHEMA_BAD), tag(GOOD)])
    data = json.loads(json.dumps(state.to_dict()))
    assert data["strategy"] == "feedback" and data["llm_calls"] == 2 and data["final_iteration"] == 2


def test_vote_writes_the_final_status_before_handing_the_last_attempt_on(parts):
    chain, ctx, prompts, feedback = parts
    seen: list[str] = []
    for script, expected in (([tag(SCHEMA_BAD), tag(PROPS_BAD)], "FAILED"), ([tag(GOOD), tag(SCHEMA_BAD)], "SUCCESS")):
        model = ScriptedModelStandIn(script)
        AgentLoop(
            model, chain, ctx, prompts, feedback, strategy=Vote(k=2), on_attempt=lambda a: seen.append(a.status)
        ).run(QUESTION, "q")
        assert seen[-2:] == ["REFINING", expected]
