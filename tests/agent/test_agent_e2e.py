"""End to end: curriculum questions through the agentic loop with the real local model and the embedded store.

The smallest packaged model (Gemma 3 270M, a base model) runs it: this test does not ask it to be
right, only that the loop records what happened consistently: iterations, statuses,
temperatures, token counts, feedback present exactly when a validator failed, and that
each refinement request carried that feedback.
"""

from __future__ import annotations

import pytest

from t2c_lib.agent import AgentLoop, AgentStatus
from t2c_lib.feedback import FeedbackBuilder
from t2c_lib.llm import CachedModel, CacheMode, ResponseCache, make_model
from t2c_lib.prompts import Configuration, PromptBuilder, prompt_hash
from t2c_lib.validation import build_chain, make_context

pytestmark = pytest.mark.slow

QUESTION_IDS = ["kurikulum-001", "kurikulum-010", "kurikulum-020", "kurikulum-035", "kurikulum-050"]
MAX_TOKENS = 96


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """The packaged local model behind a fresh response cache (so the model really runs)."""
    cache = ResponseCache(tmp_path_factory.mktemp("e2e-cache") / "responses.sqlite")
    return CachedModel(make_model("local/gemma-3-270m"), cache=cache, mode=CacheMode.USE)


@pytest.fixture(scope="module")
def loop_parts(kurikulum_store, kurikulum):
    ctx = make_context(kurikulum_store, timeout_s=5.0)
    config = Configuration.from_name("Few-Shot_Only-Paths")
    prompts = PromptBuilder(config, ctx.schema.render(config.schema_format), kurikulum.language, kurikulum.examples)
    return build_chain(kurikulum_store), ctx, prompts, FeedbackBuilder(ctx.schema, kurikulum.language, ctx.timeout_s)


def test_five_questions_record_consistent_attempts(model, loop_parts, kurikulum):
    chain, ctx, prompts, feedback = loop_parts
    recorded = []
    loop = AgentLoop(
        model, chain, ctx, prompts, feedback, max_iterations=3, max_tokens=MAX_TOKENS, on_attempt=recorded.append
    )
    states = []
    for qid in QUESTION_IDS:
        item = kurikulum.question(qid)
        state = loop.run(item.question, qid)
        states.append(state)
        attempts = state.attempts
        for later in range(1, len(attempts)):
            if attempts[later].query and any(b.query == attempts[later].query for b in attempts[:later]):
                assert attempts[later].feedback.startswith("Query ini sama dengan query yang sudah dicoba")
        assert 1 <= state.iterations <= 3
        assert [a.iteration for a in attempts] == list(range(1, state.iterations + 1))
        assert all(
            a.question_id == qid and a.config == "Few-Shot_Only-Paths" and a.strategy == "feedback" for a in attempts
        )
        # statuses: refine until the last attempt, which decides
        assert all(a.status == "REFINING" for a in attempts[:-1])
        assert attempts[-1].status == ("SUCCESS" if state.success else "FAILED")
        assert state.status is (AgentStatus.SUCCESS if state.success else AgentStatus.FAILED)
        if not state.success:
            assert state.iterations == 3
        assert all(not a.ok for a in attempts[:-1])
        for a in attempts:
            failed = [v for v in a.validations if not v.ok]
            # feedback exactly when a validator failed; the chain stops at that validator
            assert (a.feedback is not None) == bool(failed) == (not a.ok)
            if failed:
                assert failed == [a.validations[-1]] and a.error_type is failed[0].error_type
            else:
                assert len(a.validations) == len(chain) and a.error_type is None
            assert a.temperature == (0.0 if a.iteration == 1 else 0.1)
            assert a.prompt_tokens > 0 and 0 < a.completion_tokens <= MAX_TOKENS
            assert a.model_latency_s > 0 and a.validation_s >= 0
            if a.cached:  # only a request this test already sent can come from its fresh cache
                earlier = [b for s in states for b in s.attempts if b is not a and b.prompt_hash == a.prompt_hash]
                assert earlier and earlier[0].raw_response == a.raw_response
        # each refinement request was built from the previous attempt's query and feedback
        assert attempts[0].prompt_hash == prompt_hash(prompts.initial(item.question))
        for before, after in zip(attempts, attempts[1:]):
            assert after.prompt_hash == prompt_hash(prompts.refinement(item.question, before.query, before.feedback))
        assert state.prompt_tokens == sum(a.prompt_tokens for a in attempts)
        assert state.completion_tokens == sum(a.completion_tokens for a in attempts)
        assert state.final_query == attempts[-1].query and state.kg_valid == attempts[-1].kg_valid
    assert recorded == [a for s in states for a in s.attempts]

    # Single-pass is the same loop with one iteration: its request is the agentic first
    # request, so the cache serves it with the very same response.
    single = AgentLoop(model, chain, ctx, prompts, feedback, max_iterations=1, max_tokens=MAX_TOKENS)
    first = states[0]
    again = single.run(kurikulum.question(QUESTION_IDS[0]).question, QUESTION_IDS[0])
    assert again.strategy == "single-pass" and again.iterations == 1
    assert again.attempts[0].cached
    assert again.attempts[0].raw_response == first.attempts[0].raw_response
    assert again.attempts[0].prompt_hash == first.attempts[0].prompt_hash
    assert again.attempts[0].error_type == first.attempts[0].error_type


def test_every_strategy_with_the_packaged_model_shares_the_first_attempt_and_counts_its_budget(
    model, loop_parts, kurikulum
):
    """Each strategy on one question with the real local model: the first request comes from the
    cache after `feedback` made it, and every state's budget adds up from its attempts."""
    from t2c_lib.agent.strategies import STRATEGY_NAMES, Vote

    chain, ctx, prompts, feedback = loop_parts
    item = kurikulum.question("kurikulum-010")
    states = {}
    for name in ("feedback", *[n for n in STRATEGY_NAMES if n != "feedback"]):
        strategy = Vote(k=2) if name == "vote" else name
        loop = AgentLoop(
            model, chain, ctx, prompts, feedback, max_iterations=2, max_tokens=MAX_TOKENS, strategy=strategy
        )
        states[name] = state = loop.run(item.question, item.id)
        assert state.strategy == name and state.llm_calls == len(state.attempts) >= 1
        assert state.prompt_tokens == sum(a.prompt_tokens for a in state.attempts) > 0
        assert state.completion_tokens == sum(a.completion_tokens for a in state.attempts)
        assert 1 <= state.final_iteration <= len(state.attempts)
        assert state.final_query == state.attempts[state.final_iteration - 1].query
        assert state.status is (AgentStatus.SUCCESS if state.success else AgentStatus.FAILED)
    first = states["feedback"].attempts[0]
    for name in ("single-pass", "history", "raw-error", "verifier"):
        shared = states[name].attempts[0]
        assert shared.cached and shared.raw_response == first.raw_response and shared.prompt_hash == first.prompt_hash
    assert states["single-pass"].llm_calls == 1 and states["vote"].llm_calls == 2
    assert [a.seed for a in states["vote"].attempts] == [model.seed, model.seed + 1]
    assert all(a.temperature == 0.7 for a in states["vote"].attempts)
    verifier = states["verifier"]
    if verifier.attempts[0].query:
        assert [a.kind for a in verifier.attempts][1:] and all(a.kind == "verify" for a in verifier.attempts[1:])
