"""`t2c chat` with the feedback loop's options (`--repair-turns`, `--repeat-guard`, `--repeat-guard-retries`,
`--corrector`): the same options as `t2c ask`, recorded with the session, applied to modifications as to questions.

Unit tests of the loop inside a chat: the model is the scripted LLM stand-in of `tests.chat.test_chat_unit` (named as
such); the store is the real embedded curriculum graph and every query goes through the real validator chain.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from t2c_lib.agent.options import LoopOptions
from t2c_lib.chat import ChatSettings, Session, TurnStatus
from t2c_lib.chat.engine import ChatEngine
from t2c_lib.chat.session import SESSION_FILE
from t2c_lib.cli import main
from t2c_lib.errors import InvalidValue, SessionError
from tests.chat.test_chat_unit import GOLD1, Q1, ScriptedModelStandIn

REVISING = {"repair_turns": "fresh", "repeat_guard": True, "repeat_guard_retries": 2, "corrector": "schema"}
"""The revising loop's frozen options (params/thesis-revise.yaml)."""
BROKEN = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.sks DESC, m.nama ORDER BY m.sks DESC"
SORTED = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama, m.sks ORDER BY m.sks DESC"


def engine(kurikulum, store, replies, **settings):
    model = ScriptedModelStandIn(replies)
    chosen = ChatSettings(
        **{"max_iterations": 2, "timeout_s": 5.0, "follow_up": "rewrite", "strategy": "feedback", **settings}
    )  # the model rewrites; the loop options are the feedback strategy's
    return ChatEngine.open(chosen, dataset=kurikulum, store=store, model=model), model


def test_a_modification_meets_the_repeat_guard_and_fresh_repairs(kurikulum, kurikulum_store, tmp_path):
    built, model = engine(
        kurikulum,
        kurikulum_store,
        [
            "EXECUTE_QUERY",
            f"<cypher>{GOLD1}</cypher>",
            "Ada {rows} mata kuliah.",
            "REQUEST_MODIFICATION",
            f"<cypher>{BROKEN}</cypher>",  # does not parse
            f"<cypher>{BROKEN}</cypher>",  # the same failed query again: the guard does not accept it
            f"<cypher>{SORTED}</cypher>",  # the guard's retry
            "Ada {rows} mata kuliah.",
        ],
        **REVISING,
    )
    attempts = []
    session = Session.start(session_id="opt", directory=tmp_path / "opt", engine=built, on_attempt=attempts.append)
    try:
        assert session.ask(Q1).status is TurnStatus.ANSWERED
        second = session.ask("Urutkan dari SKS terbesar.")
    finally:
        session.close()
    assert second.status is TurnStatus.ANSWERED and second.query == SORTED and not model.replies
    kinds = [(a.kind, a.ok) for a in attempts[1:]]
    assert ("rejected_repeat", False) in kinds and kinds[-1] == ("generate", True), kinds
    # the refinement is a fresh attempt (`--repair-turns fresh`): the modification request again with the feedback
    # and the fresh-attempt line, not the thesis loop's "the query failed, fix it" message
    refinement = model.requests[5][-1].content
    assert refinement.startswith(model.requests[4][-1].content) and "Tulis query baru dari awal" in refinement
    # the options are the session's settings (a resume keeps them) and the loop's signature names them
    state = json.loads((tmp_path / "opt" / SESSION_FILE).read_text(encoding="utf-8"))
    assert {k: state["settings"][k] for k in REVISING} == REVISING
    assert built.signature()["loop"]["strategy"]["options"] == LoopOptions(**REVISING).signature()
    with pytest.raises(SessionError, match=r"other settings \(corrector, repair_turns, repeat_guard differ\)"):
        Session.start(
            session_id="opt", directory=tmp_path / "opt", repair_turns="single", repeat_guard=False, corrector="none"
        )


def test_the_docs_chat_example_second_turn_is_repaired_by_the_syntax_corrector_without_a_model_call(
    kurikulum, kurikulum_store, tmp_path
):
    # docs/chat.md's third command: the options it prints, the reply the 1.5B gave there (DESC inside the RETURN)
    options = {"repair_turns": "fresh-strict", "repeat_guard": True, "corrector": "schema+syntax"}
    replies = ["EXECUTE_QUERY", f"<cypher>{GOLD1}</cypher>", "Ada {rows} mata kuliah."]
    replies += ["REQUEST_MODIFICATION", f"<cypher>{BROKEN}</cypher>", "Ada {rows} mata kuliah."]
    built, model = engine(kurikulum, kurikulum_store, replies, **options)
    session = Session.start(session_id="docs", directory=tmp_path / "docs", engine=built)
    try:
        assert session.ask(Q1).status is TurnStatus.ANSWERED
        second = session.ask("Urutkan dari SKS terbesar.")
    finally:
        session.close()
    assert second.status is TurnStatus.ANSWERED and not model.replies
    assert second.query == "MATCH (m:MK) WHERE m.semester = 3 RETURN m.sks, m.nama ORDER BY m.sks DESC"


def test_without_options_the_chat_loop_is_the_thesis_loop(kurikulum, kurikulum_store):
    built, _ = engine(kurikulum, kurikulum_store, [])
    loop = built.loop()
    assert built.settings.loop_options.is_default and loop.strategy.name == "feedback"
    assert "options" not in loop.signature()["strategy"]


def test_bad_options_are_one_line_errors(kurikulum, kurikulum_store):
    with pytest.raises(InvalidValue, match=r"^repair_turns='twice': valid: single, conversation, fresh, fresh-strict$"):
        ChatSettings(repair_turns="twice")
    with pytest.raises(InvalidValue, match="repeat_guard_retries=0: a positive integer"):
        ChatSettings(repeat_guard=True, repeat_guard_retries=0)
    with pytest.raises(InvalidValue, match="options of the feedback strategy, not of single-pass"):
        engine(kurikulum, kurikulum_store, [], max_iterations=1, strategy=None, corrector="schema")
    with pytest.raises(InvalidValue, match="options of the feedback strategy, not of vote"):
        engine(kurikulum, kurikulum_store, [], strategy="vote", corrector="schema")


def test_t2c_chat_takes_the_options_of_t2c_ask_and_refuses_them_for_single_pass():
    runner = CliRunner()
    helps = runner.invoke(main, ["chat", "--help"]).output
    for option in ("--repair-turns", "--repeat-guard / --no-repeat-guard", "--repeat-guard-retries", "--corrector"):
        assert option in helps and option in runner.invoke(main, ["ask", "--help"]).output
    out = runner.invoke(main, ["chat", "-n", "1", "--corrector", "schema"], input="")
    assert out.exit_code == 2 and "options of the feedback strategy, not of single-pass" in out.output
    assert "--strategy feedback" in out.output
    out = runner.invoke(main, ["chat", "--strategy", "vote", "--repeat-guard"], input="")
    assert out.exit_code == 2 and "not of vote" in out.output


def test_chat_answers_by_self_consistency_unless_told_otherwise(kurikulum, kurikulum_store):
    """Issue 53's fifth candidate: a new session votes over max_iterations samples; a session saved with no strategy
    (null) keeps the thesis loop, and `t2c chat -n 1` or a loop option picks single-pass or feedback."""
    from t2c_lib.cli.chat import _implied_strategy

    assert ChatSettings().strategy == "vote"
    built = ChatEngine.open(ChatSettings(), dataset=kurikulum, store=kurikulum_store, model=ScriptedModelStandIn([]))
    loop = built.loop()
    assert loop.strategy.name == "vote" and loop.strategy.samples(loop) == ChatSettings().max_iterations == 3
    assert ChatSettings.from_dict({"strategy": None}).strategy is None
    unset = {"repair_turns": None, "repeat_guard": None, "repeat_guard_retries": None, "corrector": None}
    assert _implied_strategy(None, unset) is None
    assert _implied_strategy(1, unset) == "single-pass"
    assert _implied_strategy(3, {**unset, "repeat_guard": True}) == "feedback"
