"""Unit tests of the `feedback` loop's options with a scripted model stand-in (named as such) on the real embedded store."""

from __future__ import annotations

import pytest

from t2c_lib.agent import AgentLoop
from t2c_lib.agent.options import LoopOptions
from t2c_lib.agent.strategies import get_strategy
from t2c_lib.feedback import FeedbackBuilder
from t2c_lib.llm.base import Completion, Usage
from t2c_lib.metrics.agentic import agentic_metrics
from t2c_lib.prompts import Configuration, PromptBuilder
from t2c_lib.study.manifest import run_signature
from t2c_lib.study.params import StudyParams, params_from_dict
from t2c_lib.validation import build_chain, make_context
from tests.helpers import ScriptedModelStandIn

GOOD = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks"
QUESTION = "Berapa SKS mata kuliah 'Basis Data'?"
WRONG_WAY = "MATCH (m:MK)-[:PURSUED_IN]->(x:MK) RETURN x.nama"
SYNONYM = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kredit"


class SeededStandIn(ScriptedModelStandIn):
    """The scripted stand-in, taking a per-call seed as the packaged model and endpoints do."""

    seed = 42

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, seed=None) -> Completion:
        self.requests.append({"messages": list(messages), "temperature": temperature, "seed": seed})
        if not self.responses:
            raise AssertionError("the loop asked the stand-in more often than scripted")
        return Completion(self.responses.pop(0), Usage(100, 20), latency_s=0.25, model=self.model_id)


@pytest.fixture(scope="module")
def parts(kurikulum_store, kurikulum):
    ctx = make_context(kurikulum_store, timeout_s=2.0)
    feedback = FeedbackBuilder(ctx.schema, kurikulum.language, ctx.timeout_s)
    return build_chain(kurikulum_store), ctx, feedback, kurikulum


def make_loop(parts, model, config="Zero-Shot_Full", max_iterations=3, **options):
    chain, ctx, feedback, data = parts
    configuration = Configuration.from_name(config)
    prompts = PromptBuilder(configuration, ctx.schema.render(configuration.schema_format), data.language, data.examples)
    strategy = get_strategy("feedback", options=LoopOptions(**options))
    return AgentLoop(model, chain, ctx, prompts, feedback, max_iterations=max_iterations, strategy=strategy)


def cy(query: str) -> str:
    return f"<cypher>{query}</cypher>"


# --- repair as a conversation ---------------------------------------------------------------------


def test_conversation_keeps_each_failed_reply_as_the_assistants_turn_and_the_feedback_as_the_users(parts):
    model = SeededStandIn([cy(WRONG_WAY), cy(SYNONYM), cy(GOOD)])
    state = make_loop(parts, model, config="Few-Shot_Full", repair_turns="conversation").run(QUESTION, "q")
    assert state.success and state.llm_calls == 3 and len(state.attempts) == 3
    first, second, third = (r["messages"] for r in model.requests)
    assert second[: len(first)] == first  # the first request, unchanged, then the turns
    assert [m.role for m in second[len(first) :]] == ["assistant", "user"]
    assert second[len(first)].content == cy(WRONG_WAY)
    assert state.attempts[0].feedback in second[-1].content and "<cypher></cypher>" in second[-1].content
    assert third[: len(second)] == second  # history kept: turns alternate
    assert [m.role for m in third[len(first) :]] == ["assistant", "user", "assistant", "user"]
    assert third[-2].content == cy(SYNONYM) and state.attempts[1].feedback in third[-1].content
    assert [r["temperature"] for r in model.requests] == [0.0, 0.1, 0.1]


def test_conversation_in_cot_writes_the_reasoning_into_the_assistant_turn(parts):
    model = SeededStandIn([f"<think>cari MK</think>{cy(SYNONYM)}", cy(GOOD)])
    make_loop(parts, model, config="CoT_Full", repair_turns="conversation").run(QUESTION, "q")
    turn = model.requests[1]["messages"][-2]
    assert turn.role == "assistant" and turn.content == f"<think>cari MK</think>\n{cy(SYNONYM)}"
    assert "<think></think>" in model.requests[1]["messages"][-1].content


# --- repair as a fresh attempt --------------------------------------------------------------------


def test_fresh_asks_the_first_request_again_with_the_feedback_and_never_shows_the_failed_query(parts):
    model = SeededStandIn([cy(WRONG_WAY), cy(SYNONYM), cy(GOOD)])
    state = make_loop(parts, model, config="Few-Shot_Full", repair_turns="fresh").run(QUESTION, "q")
    assert state.success and state.llm_calls == 3
    first, second, third = (r["messages"] for r in model.requests)
    assert second[:-1] == first[:-1] and third[:-1] == first[:-1]  # system and examples as the first request's
    assert second[-1].role == "user" and second[-1].content.startswith(QUESTION)
    assert state.attempts[0].feedback.strip() in second[-1].content
    assert WRONG_WAY not in second[-1].content and "Tulis query baru dari awal" in second[-1].content
    told = third[-1].content  # every failure's feedback, oldest first, and no failed query
    assert told.index(state.attempts[0].feedback.strip()) < told.index(state.attempts[1].feedback.strip())
    assert SYNONYM not in told and WRONG_WAY not in told
    assert [r["temperature"] for r in model.requests] == [0.0, 0.1, 0.1]


def test_fresh_with_the_corrector_says_what_it_changed_without_the_corrected_query(parts):
    broken = "MATCH (m:MKK {nama: 'Basis Data'}) RETURN m.kredit"
    model = SeededStandIn([cy(broken), cy(GOOD)])
    state = make_loop(parts, model, repair_turns="fresh", corrector="schema").run(QUESTION, "q")
    assert state.success and [a.kind for a in state.attempts] == ["generate", "corrector", "generate"]
    asked = model.requests[1]["messages"][-1].content
    assert "label `MKK` -> `MK`" in asked and state.attempts[1].feedback.strip() in asked
    assert SYNONYM not in asked and broken not in asked


def test_fresh_is_named_in_the_options_tag_and_signature(parts):
    options = LoopOptions(repair_turns="fresh", corrector="schema")
    assert options.tag() == "fresh+corr-schema" and options.changed() == {
        "repair_turns": "fresh",
        "corrector": "schema",
    }
    signature = make_loop(parts, SeededStandIn([]), repair_turns="fresh").signature()["strategy"]
    assert "fresh" in str(signature)


UNPARSABLE = "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks DESC, m.nama ORDER BY m.sks DESC"


def test_fresh_quotes_the_failed_query_through_the_parser_message_as_it_ran_for_the_published_runs(parts):
    model = SeededStandIn([cy(UNPARSABLE), cy(GOOD)])
    make_loop(parts, model, repair_turns="fresh").run(QUESTION, "q")
    assert UNPARSABLE in model.requests[1]["messages"][-1].content  # the flaw fresh-strict fixes, kept for replays


def test_fresh_strict_takes_every_quote_of_a_failed_query_out_of_the_feedback(parts):
    model = SeededStandIn([cy(UNPARSABLE), cy(SYNONYM), cy(GOOD)])
    state = make_loop(parts, model, repair_turns="fresh-strict").run(QUESTION, "q")
    assert state.success and state.llm_calls == 3
    asked = [r["messages"][-1].content for r in model.requests[1:]]
    assert all(UNPARSABLE not in text and "m.sks DESC, m.nama" not in text for text in asked)
    assert "Invalid input < DESC>" in asked[0]  # what the parser said about the token stays
    assert "^" not in asked[0] and SYNONYM not in asked[1]
    assert state.attempts[0].feedback.strip() in asked[0]  # the record holds what the model was told


def test_fresh_strict_with_the_syntax_corrector_repairs_a_sort_direction_without_a_model_call(parts):
    model = SeededStandIn([cy(UNPARSABLE)])
    state = make_loop(parts, model, repair_turns="fresh-strict", corrector="schema+syntax").run(QUESTION, "q")
    assert state.success and state.llm_calls == 1
    assert [a.kind for a in state.attempts] == ["generate", "corrector"]
    assert state.final_query == "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks, m.nama ORDER BY m.sks DESC"
    assert state.attempts[1].verdict["changes"] == ["sort direction `DESC` moved out of RETURN `m.sks`"]


def test_the_schema_corrector_alone_leaves_a_syntax_error_to_the_model(parts):
    model = SeededStandIn([cy(UNPARSABLE), cy(GOOD)])
    state = make_loop(parts, model, repair_turns="fresh", corrector="schema").run(QUESTION, "q")
    assert state.llm_calls == 2 and [a.kind for a in state.attempts] == ["generate", "generate"]


def test_fresh_strict_and_the_syntax_corrector_are_named_in_the_tag_and_changed_options():
    options = LoopOptions(repair_turns="fresh-strict", repeat_guard=True, corrector="schema+syntax")
    assert options.fresh and options.hides_failed_queries and options.corrects_syntax
    assert options.tag() == "fresh-strict+guard2+corr-schema+syntax"
    assert options.changed() == {"repair_turns": "fresh-strict", "repeat_guard": True, "corrector": "schema+syntax"}
    assert options.guard_step(1).explicit is False  # fresh's schedule: never names the repeated query


# --- the repeat guard -----------------------------------------------------------------------------


def test_the_repeat_guard_asks_again_along_its_schedule_and_counts_every_call(parts):
    model = SeededStandIn([cy(SYNONYM), cy(SYNONYM), cy(SYNONYM + " "), cy(GOOD)])
    state = make_loop(parts, model, repeat_guard=True).run(QUESTION, "q")
    assert state.success and state.final_query == GOOD
    assert state.llm_calls == 4 and state.prompt_tokens == 400  # two extra calls, in the budget
    kinds = [a.kind for a in state.attempts]
    assert kinds == ["generate", "rejected_repeat", "rejected_repeat", "generate"]
    rejected = state.attempts[1:3]
    assert all(a.repeats_failed and not a.ok and a.status == "REFINING" for a in rejected)
    assert [a.verdict["guard_retry"] for a in rejected] == [1, 2]
    assert [a.verdict["repeats_iteration"] for a in rejected] == [1, 1]
    refine, retry1, retry2 = (model.requests[i] for i in (1, 2, 3))
    assert (refine["temperature"], refine["seed"]) == (0.1, None)
    assert retry1["messages"] == refine["messages"] and (retry1["temperature"], retry1["seed"]) == (0.7, 43)
    assert retry2["temperature"] == 0.7 and retry2["seed"] == 44
    assert retry2["messages"][:-1] == refine["messages"][:-1]
    assert retry2["messages"][-1].content.endswith(
        f"Query Anda `{SYNONYM}` gagal; jangan menulisnya lagi, tulis query yang berbeda."
    )
    assert state.attempts[3].seed == 44 and state.attempts[3].temperature == 0.7
    metrics = agentic_metrics(state.attempts, max_iterations=3)
    assert metrics.n_refinements == 3 and metrics.n_repeated_refinements == 2  # the rejected calls show as repeats


def test_the_repeat_guard_stops_after_its_retries_and_the_last_answer_stands(parts):
    model = SeededStandIn([cy(SYNONYM)] * 7)
    state = make_loop(parts, model, repeat_guard=True, repeat_guard_retries=2).run(QUESTION, "q")
    assert not state.success and state.llm_calls == 7 and not model.responses  # 3 answers + 2 x 2 retries
    assert [a.kind for a in state.attempts].count("rejected_repeat") == 4
    answers = [a for a in state.attempts if a.kind == "generate"]
    assert len(answers) == 3 and answers[-1].status == "FAILED" and state.final_iteration == len(state.attempts)
    assert agentic_metrics(state.attempts, max_iterations=3).n_repeated_refinements == 6


def test_a_first_attempt_or_a_new_query_is_never_guarded(parts):
    model = SeededStandIn([cy(WRONG_WAY), cy(SYNONYM), cy(GOOD)])
    state = make_loop(parts, model, repeat_guard=True).run(QUESTION, "q")
    assert [a.kind for a in state.attempts] == ["generate"] * 3 and state.llm_calls == 3


# --- the corrector --------------------------------------------------------------------------------


def test_the_corrector_repairs_before_the_model_is_asked_with_no_model_call(parts):
    broken = "MATCH (m:MK {nama: 'basis data'}) RETURN m.skss"
    model = SeededStandIn([cy(broken)])
    state = make_loop(parts, model, corrector="schema").run(QUESTION, "q")
    assert state.success and state.llm_calls == 1 and not model.responses
    first, fixed = state.attempts
    assert fixed.kind == "corrector" and fixed.ok and fixed.query == GOOD and fixed.raw_response == ""
    assert (fixed.prompt_tokens, fixed.completion_tokens, fixed.model_latency_s) == (0, 0, 0.0)
    assert fixed.verdict["corrected_from"] == broken and len(fixed.verdict["changes"]) == 2
    assert first.status == "REFINING" and fixed.status == "SUCCESS"
    metrics = agentic_metrics(state.attempts, max_iterations=1)  # a corrector attempt is no model answer
    assert metrics.n_recovered == 1 and metrics.n_refinements == 0


def test_the_model_is_told_what_the_corrector_changed_when_the_corrected_query_still_fails(parts):
    broken = "MATCH (m:MKK {nama: 'Basis Data'}) RETURN m.kredit"
    model = SeededStandIn([cy(broken), cy(GOOD)])
    state = make_loop(parts, model, corrector="schema").run(QUESTION, "q")
    assert state.success and state.llm_calls == 2
    assert [a.kind for a in state.attempts] == ["generate", "corrector", "generate"]
    corrected = state.attempts[1]
    assert not corrected.ok and corrected.query == SYNONYM and corrected.status == "REFINING"
    asked = model.requests[1]["messages"][-1].content
    assert "Korektor skema mengubah query yang gagal" in asked and "label `MKK` -> `MK`" in asked
    assert SYNONYM in asked and corrected.feedback in asked


def test_a_query_the_corrector_cannot_change_goes_to_the_model_as_before(parts):
    model = SeededStandIn([cy(SYNONYM), cy(GOOD)])
    state = make_loop(parts, model, corrector="schema").run(QUESTION, "q")
    assert [a.kind for a in state.attempts] == ["generate", "generate"] and state.llm_calls == 2


# --- how the options are named and recorded -------------------------------------------------------


def test_options_are_in_the_signature_when_on_and_absent_when_off(parts):
    off = make_loop(parts, SeededStandIn([])).signature()["strategy"]
    assert off == {"name": "feedback", "attempts": 3}
    on = make_loop(parts, SeededStandIn([]), repeat_guard=True, corrector="schema").signature()["strategy"]
    assert on["options"]["repeat_guard"] is True and on["options"]["corrector"] == "schema"
    assert len(on["options"]["repeat_guard_schedule"]) == 2
    assert "prompts/id/strategies/repeat_guard.txt" in on["templates"]


def test_params_name_the_options_only_when_on():
    assert not set(StudyParams().to_dict()) & {"repair_turns", "repeat_guard", "repeat_guard_retries", "corrector"}
    params = params_from_dict({"repair_turns": "conversation", "repeat_guard": True, "corrector": "schema"})
    assert params.to_dict()["repeat_guard_retries"] == 2 and params.loop_options.tag() == "conv+guard2+corr-schema"
    manifest = {
        "package_version": "x",
        "dataset": "kurikulum",
        "dataset_hash": "0" * 12,
        "store": "ladybug",
        "model_id": "m",
        "validators": ["guard"],
        "template_hashes": {},
        "parameters": params.to_dict(),
    }
    assert run_signature(manifest).endswith("loop:conv+guard2+corr-schema")
    manifest["parameters"] = StudyParams().to_dict()
    assert "loop:" not in run_signature(manifest)
    with pytest.raises(ValueError, match="valid: single, conversation"):
        params_from_dict({"repair_turns": "chat"})
    with pytest.raises(ValueError, match="positive integer"):
        params_from_dict({"repeat_guard_retries": 0})


def test_options_belong_to_the_feedback_strategy_only():
    with pytest.raises(TypeError):
        get_strategy("history", options=LoopOptions(repeat_guard=True))


def test_t2c_ask_refuses_loop_options_for_another_strategy_before_any_model_call():
    from click.testing import CliRunner

    from t2c_lib.cli import main

    result = CliRunner().invoke(
        main, ["ask", "Berapa SKS mata kuliah 'Basis Data'?", "-n", "1", "--corrector", "schema"]
    )
    assert result.exit_code == 2 and "options of the feedback strategy, not of single-pass" in result.output
    assert "--strategy feedback" in result.output
    result = CliRunner().invoke(main, ["ask", "q", "--strategy", "vote", "--repeat-guard"])
    assert result.exit_code == 2 and "not of vote" in result.output


def test_t2c_run_flags_override_the_parameter_files_options():
    from t2c_lib.study.steps import resolve_params

    params = resolve_params("params/thesis.yaml", repair_turns="conversation", repeat_guard=True, corrector=None)
    assert params.loop_options == LoopOptions(repair_turns="conversation", repeat_guard=True)
    assert resolve_params("params/thesis.yaml").loop_options.is_default
