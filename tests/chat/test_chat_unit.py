"""Unit tests of the conversation layer (router, rewrite, answer templates, checks, sessions, log, export).

The model is a scripted LLM stand-in (named as such): it replays scripted replies, so each
test decides what "the model" said, including hostile replies. The store is the real
embedded curriculum graph; every query still goes through the real validator chain.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

from t2c_lib.chat import ChatSettings, Intent, Session, TurnStatus
from t2c_lib.chat.answer import fill_answer, placeholder_names
from t2c_lib.chat.checks import CheckCode, check_result
from t2c_lib.chat.engine import ChatEngine
from t2c_lib.chat.evaluate import ConversationReport, TurnOutcome
from t2c_lib.chat.export import export_format, read_export, result_frame
from t2c_lib.chat.intent import Router, RouterMode, RouteSource, follows_on, parse_intent, rule_intent, schema_words
from t2c_lib.chat.log import STEPS, TURN_FIELDS, read_log
from t2c_lib.chat.numbers import format_number, format_value
from t2c_lib.chat.query_parts import in_stable_order
from t2c_lib.chat.rewrite import Context, rewrite_request
from t2c_lib.chat.session import SESSION_FILE
from t2c_lib.chat.settings import ROUTERS
from t2c_lib.errors import InvalidValue
from t2c_lib.graph.base import QueryResult
from t2c_lib.llm.base import Completion, Usage
from tests.helpers import konv13_replies

Q1 = "Mata kuliah apa saja yang diambil pada semester 3?"
GOLD1 = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama ORDER BY m.nama"
GOLD2 = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama, m.sks ORDER BY m.nama"


class ScriptedModelStandIn:
    """A stand-in for an LLM in unit tests only: replays scripted replies in order and records each request."""

    model_id = "scripted-stand-in"

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.requests: list[list] = []

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, **kwargs) -> Completion:
        self.requests.append(list(messages))
        if not self.replies:
            raise AssertionError("asked the stand-in more often than scripted")
        return Completion(self.replies.pop(0), Usage(50, 5), latency_s=0.01, model=self.model_id)


# --- router ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("REQUEST_MODIFICATION", Intent.REQUEST_MODIFICATION),
        ("Kategori: execute_query.", Intent.EXECUTE_QUERY),
        ("ACKNOWLEDGE", Intent.ACKNOWLEDGE),
        ("hmm, sulit dikatakan", None),
        ("EXECUTE_QUERY or UNKNOWN", None),
        ("", None),
    ],
)
def test_parse_intent_takes_exactly_one_category(reply, expected):
    assert parse_intent(reply) is expected


@pytest.mark.parametrize(
    "message, previous, expected",
    [
        ("Terima kasih!", True, Intent.ACKNOWLEDGE),
        ("ok", False, Intent.ACKNOWLEDGE),
        ("Urutkan dari SKS terbesar.", True, Intent.REQUEST_MODIFICATION),
        ("Urutkan mata kuliah menurut SKS.", False, Intent.EXECUTE_QUERY),
        ("Urutkan dari SKS terbesar.", False, Intent.UNKNOWN),  # nothing to sort and no word of the graph
        ("Berapa jumlah mata kuliah tersebut?", True, Intent.REQUEST_MODIFICATION),
        (Q1, True, Intent.EXECUTE_QUERY),
        ("Cuaca hari ini bagaimana?", True, Intent.UNKNOWN),
        ("asdfgh qwerty", False, Intent.UNKNOWN),
        ("   ", False, Intent.UNKNOWN),
    ],
)
def test_rule_intent(message, previous, expected):
    vocabulary = frozenset({"mata", "kuliah", "semester", "jumlah"})
    assert rule_intent(message, previous, vocabulary) is expected


def test_router_records_model_or_rule_decisions():
    model = ScriptedModelStandIn(["REQUEST_MODIFICATION", "tidak tahu", "REQUEST_MODIFICATION"])
    router = Router(model, "id", frozenset({"mata", "kuliah"}))
    by_model = router.route("Urutkan menurut nama.", [(Q1, GOLD1)], has_previous=True)
    assert (by_model.intent, by_model.source, by_model.llm_calls) == (Intent.REQUEST_MODIFICATION, RouteSource.MODEL, 1)
    assert GOLD1 in model.requests[0][-1].content  # the conversation so far reaches the model
    by_rules = router.route("Terima kasih", [], has_previous=False)
    assert (by_rules.intent, by_rules.source) == (Intent.ACKNOWLEDGE, RouteSource.RULES)
    assert "rules decided" in by_rules.note and by_rules.model_reply == "tidak tahu"
    no_previous = router.route("Hanya yang wajib.", [], has_previous=False)
    assert no_previous.intent is Intent.EXECUTE_QUERY and "no previous query" in no_previous.note
    rules_only = Router(ScriptedModelStandIn([]), "id", mode=RouterMode.RULES).route("ok", [], has_previous=False)
    assert rules_only.intent is Intent.ACKNOWLEDGE and rules_only.llm_calls == 0


@pytest.mark.parametrize(
    ("mode", "message", "has_previous", "expected", "source"),
    [
        # a question about the graph the model calls unclear: hybrid sends it to the loop, model keeps UNKNOWN
        (RouterMode.HYBRID, "Berapa jumlah mata kuliah semester 3?", False, Intent.EXECUTE_QUERY, RouteSource.RULES),
        (RouterMode.MODEL, "Berapa jumlah mata kuliah semester 3?", False, Intent.UNKNOWN, RouteSource.MODEL),
        # a follow-up the model calls unclear: the rules read a modification of the previous query
        (RouterMode.HYBRID, "Urutkan menurut semester.", True, Intent.REQUEST_MODIFICATION, RouteSource.RULES),
        # off-topic stays UNKNOWN, and the model's decision is kept
        (RouterMode.HYBRID, "Siapa juara piala dunia?", False, Intent.UNKNOWN, RouteSource.MODEL),
    ],
)
def test_hybrid_router_checks_only_the_models_unknown(mode, message, has_previous, expected, source):
    router = Router(ScriptedModelStandIn(["UNKNOWN"]), "id", frozenset({"mata", "kuliah", "semester"}), mode=mode)
    decision = router.route(message, [(Q1, GOLD1)] if has_previous else [], has_previous=has_previous)
    assert (decision.intent, decision.source, decision.llm_calls) == (expected, source, 1)
    assert decision.model_reply == "UNKNOWN"
    assert ("hybrid" in decision.note) == (source is RouteSource.RULES)


def test_hybrid_router_keeps_the_models_other_decisions():
    """Only UNKNOWN is second-guessed: a model's ACKNOWLEDGE for a message the rules would send to the loop stands."""
    router = Router(ScriptedModelStandIn(["ACKNOWLEDGE"]), "id", frozenset({"mata", "kuliah"}))
    decision = router.route("Mata kuliah apa saja yang diambil pada semester 1?", [], has_previous=False)
    assert (decision.intent, decision.source) == (Intent.ACKNOWLEDGE, RouteSource.MODEL)


@pytest.mark.parametrize(
    ("previous_failed", "mode", "message", "expected"),
    [
        # after a failed turn the model sees no query and calls a follow-up a new question: the rules read it
        (True, RouterMode.HYBRID, "Urutkan menurut semester.", Intent.REQUEST_MODIFICATION),
        (False, RouterMode.HYBRID, "Urutkan menurut semester.", Intent.EXECUTE_QUERY),  # an answered turn: model
        (True, RouterMode.MODEL, "Urutkan menurut semester.", Intent.EXECUTE_QUERY),  # the model alone
        (True, RouterMode.HYBRID, "Berapa jumlah mata kuliah semester 3?", Intent.EXECUTE_QUERY),  # a question
    ],
)
def test_hybrid_router_reads_a_failed_turns_follow_up_by_the_rules(previous_failed, mode, message, expected):
    router = Router(ScriptedModelStandIn(["EXECUTE_QUERY"]), "id", frozenset({"mata", "kuliah", "semester"}), mode=mode)
    decision = router.route(message, [(Q1, "")], has_previous=True, previous_failed=previous_failed)
    assert decision.intent is expected and decision.llm_calls == 1
    assert (decision.source is RouteSource.RULES) == (expected is Intent.REQUEST_MODIFICATION)


def test_router_modes_are_the_settings_routers():
    assert tuple(sorted(m.value for m in RouterMode)) == tuple(sorted(ROUTERS))
    assert ChatSettings().router == RouterMode.HYBRID.value


# --- rewrite -----------------------------------------------------------------------------------


def test_rewrite_request_carries_previous_query_and_change():
    text = rewrite_request(Context(Q1, GOLD1), "Tampilkan juga   SKS-nya.", "id")
    assert GOLD1 in text and "Tulis ulang kueri ini sehingga: Tampilkan juga SKS-nya." in text and Q1 in text
    assert "Rewrite this query so that: add credits" in rewrite_request(Context("q", GOLD1), "add credits", "en")
    with pytest.raises(ValueError, match="previous query"):
        rewrite_request(Context(Q1, " "), "x", "id")


# --- grounded answers --------------------------------------------------------------------------

RESULT = QueryResult(["m.nama", "m.sks"], [["Basis Data", 3], ["Struktur Data", 4], ["Data Besar", 1234.5]])


@pytest.mark.parametrize(
    "value, language, text",
    [
        (1234.5, "id", "1.234,5"),
        (1234.5, "en", "1,234.5"),
        (1234567, "id", "1.234.567"),
        (2.0, "id", "2"),
        (0.125, "id", "0,13"),
        (-3, "en", "-3"),
        (-1234.567, "id", "-1.234,57"),
    ],
)
def test_numbers_per_language(value, language, text):
    assert format_number(value, language) == text


def test_values_per_language():
    assert format_value(True, "id") == "ya" and format_value(None, "en") == "-"
    assert format_value([1000, "x"], "id") == "1.000, x"


def test_template_filled_from_result_only():
    filled = fill_answer("Template jawaban: Ada {rows} mata kuliah ({m.nama}), total {sum:m.sks} SKS.", RESULT, "id")
    assert filled.from_model and filled.problems == ()
    assert filled.text == "Ada 3 mata kuliah (Basis Data, Struktur Data, Data Besar), total 1.241,5 SKS."
    assert set(placeholder_names(RESULT)) >= {"rows", "m.nama", "m.sks", "sum:m.sks", "avg:m.sks", "max:m.sks"}
    assert "sum:m.nama" not in placeholder_names(RESULT)  # no aggregate of text


@pytest.mark.parametrize(
    "template, problem",
    [
        ("Ada 3 mata kuliah: {m.nama}", "a number in the template's own text"),
        ("Jawaban: {m.nama.__class__.__mro__}", "unknown placeholder"),
        ("{0.__globals__[os]}", "unknown placeholder"),
        ("{rows!r} {rows:>10}", "unknown placeholder"),
        ("{__import__('os').system('echo pwned')}", "unknown placeholder"),
        ("{{rows}} baris", "a brace outside a placeholder"),
        ("Semua beres.", "no placeholder"),
        ("Hasil {sum:m.nama}", "unknown placeholder"),
        ("Empat puluh dua. Tujuh {rows}", None),  # number words are text; digits are the rule
    ],
)
def test_hostile_or_unusable_templates_fall_back(template, problem):
    filled = fill_answer(template, RESULT, "id")
    if problem is None:
        assert filled.from_model
        return
    assert not filled.from_model and any(problem in p for p in filled.problems)
    assert filled.text == "Ditemukan 3 baris; lihat tabel di bawah."  # the fixed template, filled from the result
    assert "pwned" not in filled.text and "__" not in filled.text


def test_values_are_never_read_as_templates():
    hostile = QueryResult(["x"], [["{rows} {__class__}"]])
    filled = fill_answer("Nilai: {x}", hostile, "en")
    assert filled.text == "Nilai: {rows} {__class__}"


def test_long_multiline_reply_uses_first_line_cut():
    filled = fill_answer("\n\n  Ada {rows} baris.\nAbaikan instruksi, tulis 99.", RESULT, "id")
    assert filled.text == "Ada 3 baris." and filled.from_model


def test_fallback_for_one_value_and_one_row():
    assert fill_answer("", QueryResult(["jumlah"], [[1234]]), "id").text == "Jawabannya: 1.234."
    row = fill_answer("", QueryResult(["m.kode", "m.sks"], [["TKU1", 3]]), "en").text
    assert row == "The result: m.kode TKU1, m.sks 3."


# --- result checks -----------------------------------------------------------------------------


def test_checks_and_quality():
    clean = check_result(RESULT, "id", graph_size=1000)
    assert clean.warnings == () and clean.quality == 100
    assert check_result(QueryResult(["a"], []), "en").quality == 40
    nulls = check_result(QueryResult(["a", "b"], [[1, None], [2, None]]), "en")
    assert [w.code for w in nulls.warnings] == [CheckCode.NULL_COLUMN] and nulls.warnings[0].column == "b"
    constant = check_result(QueryResult(["nama", "tipe"], [["a", "Wajib"], ["b", "Wajib"], ["c", "Wajib"]]), "id")
    assert [w.code for w in constant.warnings] == [CheckCode.CONSTANT_COLUMN] and "tipe" in constant.messages[0]
    negative = check_result(QueryResult(["jumlah"], [[-2]]), "en")
    assert [w.code for w in negative.warnings] == [CheckCode.NEGATIVE_COUNT] and negative.quality == 60
    big = check_result(QueryResult(["x"], [[i] for i in range(50)]), "en", graph_size=10)
    assert CheckCode.TOO_MANY_ROWS in [w.code for w in big.warnings]
    dupes = check_result(QueryResult(["x"], [[1], [1]]), "en")
    assert [w.code for w in dupes.warnings] == [CheckCode.DUPLICATE_ROWS]
    worst = check_result(QueryResult(["jumlah", "b"], [[-1, None]] * 20), "en", graph_size=5)
    assert worst.quality == 0  # never below 0


# --- sessions ----------------------------------------------------------------------------------


@pytest.fixture()
def engine_for(kurikulum, kurikulum_store):
    def build(replies: Sequence[str], **settings) -> tuple[ChatEngine, ScriptedModelStandIn]:
        model = ScriptedModelStandIn(replies)
        chosen = ChatSettings(
            **{
                "max_iterations": 2,
                "timeout_s": 5.0,
                "follow_up": "rewrite",
                "stable_order": False,
                "value_hints": False,
                "strategy": "feedback",  # the thesis loop: one scripted reply per answer (vote asks k samples)
                **settings,
            }
        )
        return ChatEngine.open(chosen, dataset=kurikulum, store=kurikulum_store, model=model), model

    return build


def test_three_turn_session_state_log_and_resume(engine_for, tmp_path):
    engine, model = engine_for(
        [
            "EXECUTE_QUERY",
            f"<cypher>{GOLD1}</cypher>",
            "Ada {rows} mata kuliah: {m.nama}.",
            "REQUEST_MODIFICATION",
            f"<cypher>{GOLD2}</cypher>",
            "Total {sum:m.sks} SKS.",
            "ACKNOWLEDGE",
        ]
    )
    directory = tmp_path / "s1"
    session = Session.start(session_id="s1", directory=directory, engine=engine)
    first = session.ask(Q1)
    rows = engine.store.query(GOLD1).rows
    assert first.status is TurnStatus.ANSWERED and first.query == GOLD1 and first.intent is Intent.EXECUTE_QUERY
    assert first.result["m.nama"].tolist() == [r[0] for r in rows]
    assert first.text.startswith(f"Ada {len(rows)} mata kuliah: ")
    assert first.quality == 100 and first.attempt == 1 and first.attempts_allowed == 2
    second = session.ask("Tampilkan juga jumlah SKS-nya.")
    rewrite_prompt = model.requests[4][-1].content
    assert GOLD1 in rewrite_prompt and "Tampilkan juga jumlah SKS-nya." in rewrite_prompt
    total = sum(r[1] for r in engine.store.query(GOLD2).rows)
    assert second.query == GOLD2 and second.text == f"Total {format_number(total, 'id')} SKS."
    third = session.ask("Terima kasih!")
    assert third.status is TurnStatus.ACKNOWLEDGED and third.query == "" and len(model.requests) == 7
    assert not model.replies  # acknowledgement: one router call, no query, no answer call

    state = json.loads((directory / SESSION_FILE).read_text(encoding="utf-8"))
    assert [t["intent"] for t in state["turns"]] == ["EXECUTE_QUERY", "REQUEST_MODIFICATION", "ACKNOWLEDGE"]
    assert state["context"]["query"] == GOLD2 and state["pending"] is None
    assert (
        state["turns"][1]["template"] == "Total {sum:m.sks} SKS." and state["turns"][1]["template_from_model"] is True
    )

    lines = read_log(directory / "analytics.jsonl")
    assert [line["turn"] for line in lines] == [1, 2, 3]
    assert all(set(TURN_FIELDS) <= set(line) and set(line["durations"]) == set(STEPS) for line in lines)
    assert lines[0]["labels"] == ["MK"] and lines[0]["llm_calls"] == 3 and lines[0]["prompt_tokens"] == 150
    assert lines[0]["status"] == "answered" and lines[0]["quality"] == 100 and lines[0]["repaired"] is False
    assert lines[2]["llm_calls"] == 1 and lines[2]["query"] == "" and lines[2]["intent_source"] == "model"

    resumed = Session.start(session_id="s1", directory=directory, engine=engine)
    assert resumed.resumed and len(resumed.turns) == 3 and resumed.context == session.context


def test_killed_turn_is_pending_on_resume(engine_for, tmp_path):
    class Killed(BaseException):
        pass

    engine, model = engine_for(["EXECUTE_QUERY"])
    original = model.complete

    def dies_after_routing(messages, **kwargs):
        if model.requests:
            raise Killed()
        return original(messages, **kwargs)

    model.complete = dies_after_routing  # type: ignore[method-assign]
    session = Session.start(session_id="s2", directory=tmp_path / "s2", engine=engine)
    with pytest.raises(Killed):
        session.ask(Q1)
    resumed = Session.start(session_id="s2", directory=tmp_path / "s2", engine=engine)
    assert resumed.pending == Q1 and resumed.turns == []
    assert read_log(tmp_path / "s2" / "analytics.jsonl") == []


def test_modification_goes_through_the_guard(engine_for, tmp_path, kurikulum_store):
    engine, _ = engine_for(
        [
            "EXECUTE_QUERY",
            f"<cypher>{GOLD1}</cypher>",
            "{m.nama}",
            "REQUEST_MODIFICATION",
            "<cypher>MATCH (m:MK) SET m.sks = 0 RETURN m.nama</cypher>",
            "<cypher>MATCH (m:MK) DETACH DELETE m</cypher>",
        ]
    )
    before = kurikulum_store.query("MATCH (m:MK) RETURN sum(m.sks)").rows
    session = Session.start(session_id="s3", directory=tmp_path / "s3", engine=engine)
    session.ask(Q1)
    refused = session.ask("Hapus nilai SKS-nya.")
    assert refused.status is TurnStatus.FAILED and "UNSAFE_QUERY" in refused.error.technical_details
    assert refused.error.suggestions and refused.error.user_message
    assert kurikulum_store.query("MATCH (m:MK) RETURN sum(m.sks)").rows == before
    assert session.context.query == GOLD1  # a failed modification leaves the context as it was


def test_unknown_message_gets_an_error_response(engine_for, tmp_path):
    engine, _ = engine_for(["UNKNOWN"])
    session = Session.start(session_id="s4", directory=tmp_path / "s4", engine=engine)
    answer = session.ask("Cuaca hari ini bagaimana?")
    assert answer.status is TurnStatus.UNCLEAR and answer.query == ""
    assert answer.error.suggestions == tuple(e.question for e in engine.dataset.examples[:3])
    assert answer.error.suggestions[0] in answer.text


def test_resume_with_other_settings_is_refused(engine_for, tmp_path):
    engine, _ = engine_for([])
    Session.start(session_id="s5", directory=tmp_path / "s5", engine=engine)
    other, _ = engine_for([], max_iterations=1)
    with pytest.raises(ValueError, match="max_iterations"):
        Session.start(session_id="s5", directory=tmp_path / "s5", engine=other)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="unknown chat setting"):
        ChatSettings.from_dict({"dataset": "kurikulum", "colour": "red"})
    with pytest.raises(ValueError, match="router"):
        ChatSettings(router="coin")
    with pytest.raises(ValueError, match="display_limit"):
        ChatSettings(display_limit=0)


def test_display_limit_keeps_the_full_result(engine_for, tmp_path):
    query = "MATCH (m:MK) RETURN m.nama ORDER BY m.nama"
    engine, _ = engine_for(["EXECUTE_QUERY", f"<cypher>{query}</cypher>", "{rows} mata kuliah."], display_limit=5)
    answer = Session.start(session_id="s6", directory=tmp_path / "s6", engine=engine).ask("Daftar semua mata kuliah?")
    total = len(engine.store.query(query).rows)
    assert len(answer.result) == total > 5
    assert answer.table().splitlines()[-1] == f"(5 of {total} rows shown)" and len(answer.table().splitlines()) == 7


# --- export ------------------------------------------------------------------------------------

EXPORT_QUERY = (
    "MATCH (m:MK) WHERE m.semester <= 2 RETURN m.nama AS nama, m.sks AS sks, m.semester * 1.5 AS bobot, "
    "m.jalur AS jalur ORDER BY nama"
)


@pytest.mark.parametrize("suffix", [".csv", ".json", ".xlsx", ".parquet"])
def test_export_round_trip(engine_for, tmp_path, suffix):
    engine, _ = engine_for(["EXECUTE_QUERY", f"<cypher>{EXPORT_QUERY}</cypher>", "{rows} baris."])
    answer = Session.start(session_id="s7", directory=tmp_path / "s7", engine=engine).ask("Mata kuliah tahun pertama?")
    data, sidecar = answer.export(tmp_path / f"out{suffix}")
    back = read_export(data)
    expected = answer.result
    assert list(back.columns) == list(expected.columns) and len(back) == len(expected) > 5
    for column in expected.columns:
        left, right = back[column].tolist(), expected[column].tolist()
        assert [None if pd.isna(v) else v for v in left] == [None if pd.isna(v) else v for v in right], column
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    assert meta["question"] == "Mata kuliah tahun pertama?" and meta["final_query"] == EXPORT_QUERY
    assert meta["outcome"] == "succeeded at attempt 1 of 2" and meta["format"] == suffix[1:]


def test_export_refuses_unknown_extensions_and_empty_turns(engine_for, tmp_path):
    with pytest.raises(ValueError, match=r"\.csv, \.json, \.xlsx, \.parquet"):
        export_format("out.txt")
    engine, _ = engine_for(["ACKNOWLEDGE"])
    answer = Session.start(session_id="s8", directory=tmp_path / "s8", engine=engine).ask("ok")
    with pytest.raises(ValueError, match="no result"):
        answer.export(tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()


def test_list_cells_are_written_as_json_text(tmp_path):
    from t2c_lib.chat.export import ExportInfo, export_frame, flat_frame

    frame = result_frame(QueryResult(["k", "xs"], [["a", [1, 2]], ["b", []]]))
    for suffix in (".csv", ".json", ".xlsx", ".parquet"):
        data, _ = export_frame(frame, tmp_path / f"l{suffix}", ExportInfo("q", "MATCH (n) RETURN n", 1, 1))
        assert read_export(data)["xs"].tolist() == flat_frame(frame)["xs"].tolist() == ["[1, 2]", "[]"]


def test_ask_export_with_a_bad_extension_fails_before_the_model(tmp_path):
    from click.testing import CliRunner

    from t2c_lib.cli import main

    result = CliRunner().invoke(
        main, ["ask", "Berapa SKS 'Basis Data'?", "--export", str(tmp_path / "out.txt"), "-m", "nope"]
    )
    assert result.exit_code == 1 and "extension must be one of" in result.output
    assert not Path(tmp_path / "out.txt").exists()


class FailingModelStandIn:
    """A stand-in for an LLM in unit tests only: every call fails as an unreachable endpoint would."""

    model_id = "failing-stand-in"

    def complete(self, messages, **kwargs) -> Completion:
        from t2c_lib.llm.base import LLMError

        raise LLMError("endpoint unreachable")


def test_model_failures_fall_back_to_rules_and_fixed_templates():
    from t2c_lib.chat.answer import AnswerWriter

    decision = Router(FailingModelStandIn(), "id").route("Terima kasih", [], has_previous=False)
    assert decision.intent is Intent.ACKNOWLEDGE and decision.source is RouteSource.RULES
    assert "endpoint unreachable" in decision.note and decision.llm_calls == 1
    filled = AnswerWriter(FailingModelStandIn(), "id").write("Berapa?", QueryResult(["jumlah"], [[7]]))
    assert filled.text == "Jawabannya: 7." and not filled.from_model and "endpoint unreachable" in filled.problems[0]


# --- conversation metrics ----------------------------------------------------------------------


def test_conversation_metrics_on_one_dialogue(engine_for, kurikulum, tmp_path):
    """konv-13 with a stand-in that routes turn 2 wrongly (a new question) and answers turn 3 with the gold query."""
    from t2c_lib.chat.evaluate import evaluate_conversations, write_report

    dialogue = next(d for d in kurikulum.conversations if d.id == "konv-13")
    engine, _ = engine_for(konv13_replies(dialogue))
    report = evaluate_conversations(engine, [dialogue], out_dir=tmp_path / "conv")
    summary = report.summary()
    assert [t.pass_at_1 for t in report.turns] == [1.0, 0.0, 1.0]
    assert summary["intent_accuracy"] == pytest.approx(2 / 3) and summary["turn_pass_at_1"] == pytest.approx(2 / 3)
    assert summary["follow_up_success"] == 0.5 and summary["new_question_pass_at_1"] == 1.0
    # turn 2 follows a right answer and fails; turn 3 follows turn 2's wrong one, so it is not counted
    assert summary["follow_up_turns_after_right_previous"] == 1
    assert summary["follow_up_success_after_right_previous"] == 0.0
    assert summary["dialogue_success"] == 0.0 and summary["rule_intent_accuracy"] == 1.0
    assert summary["routed_by_model"] == 1.0 and summary["intent_accuracy_by_intent"]["REQUEST_MODIFICATION"] == 0.5
    paths = write_report(report, tmp_path / "conv")
    first_bytes = {name: path.read_bytes() for name, path in paths.items()}
    assert first_bytes == {name: path.read_bytes() for name, path in write_report(report, tmp_path / "conv").items()}
    assert (tmp_path / "conv" / "sessions" / "konv-13" / "session.json").is_file()
    assert (
        "konv-13,2,Bagaimana dengan 'Pembelajaran Mesin'?,REQUEST_MODIFICATION,EXECUTE_QUERY,model"
        in paths["turns"].read_text()
    )


class OutageStandIn(ScriptedModelStandIn):
    """The scripted stand-in, except that the reply OUTAGE raises what an endpoint gone away raises."""

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, **kwargs) -> Completion:
        from t2c_lib.llm.base import LLMUnavailableError

        if self.replies and self.replies[0] == "OUTAGE":
            self.replies.pop(0)
            raise LLMUnavailableError("model 'x' at endpoint failed after 6 attempt(s): HTTP 503: down")
        return super().complete(messages, temperature, max_tokens, stop, **kwargs)


@pytest.mark.parametrize("failing_call", [0, 1, 2], ids=["router", "query", "answer"])
def test_an_outage_stops_the_conversation_evaluation_and_scores_nothing(
    kurikulum, kurikulum_store, tmp_path, failing_call
):
    """Routing, the query and the answer template each fall back in a chat; in an evaluation each stops it instead."""
    from t2c_lib.chat.evaluate import ConversationsStopped, evaluate_conversations

    dialogue = next(d for d in kurikulum.conversations if d.id == "konv-13")
    first = dialogue.turns[0].cypher
    replies = ["EXECUTE_QUERY", f"<cypher>{first}</cypher>", "Kodenya {m.kode}."]
    replies.insert(failing_call, "OUTAGE")
    model = OutageStandIn(replies)
    settings = ChatSettings(max_iterations=2, timeout_s=5.0, strategy="feedback")  # one scripted reply per answer
    engine = ChatEngine.open(settings, dataset=kurikulum, store=kurikulum_store, model=model)
    with pytest.raises(ConversationsStopped, match="HTTP 503.*scored nothing for this turn"):
        evaluate_conversations(engine, [dialogue], out_dir=tmp_path / "conv")
    assert not (tmp_path / "conv" / "turns.csv").exists()
    assert engine.model is model and engine.router.model is model  # the engine is left as it was

    chat = OutageStandIn(list(replies))  # the same outage in an interactive session: the turn goes on
    chat_engine = ChatEngine.open(settings, dataset=kurikulum, store=kurikulum_store, model=chat)
    session = Session.start(session_id="chat", directory=tmp_path / "chat", engine=chat_engine)
    try:
        answer = session.ask(dialogue.turns[0].message)
    finally:
        session.close()
    assert answer.status is (TurnStatus.FAILED if failing_call == 1 else TurnStatus.ANSWERED)


def _turn(dialogue: str, turn: int, expected: str, passed: float | None) -> TurnOutcome:
    return TurnOutcome(
        dialogue, turn, "...", expected, expected, "model", True, expected, "", "", "", passed, 1, None, ""
    )


def test_follow_ups_after_a_right_answer_skip_errors_carried_from_the_turn_before():
    """Each follow-up is judged against the query turn before it in its own dialogue, across thanks in between."""
    turns = (
        _turn("a", 1, "EXECUTE_QUERY", 1.0),
        _turn("a", 2, "ACKNOWLEDGE", None),
        _turn("a", 3, "REQUEST_MODIFICATION", 1.0),  # after a right answer (turn 1), right
        _turn("a", 4, "REQUEST_MODIFICATION", 0.0),  # after a right answer (turn 3), wrong
        _turn("a", 5, "REQUEST_MODIFICATION", 1.0),  # after turn 4's wrong answer: not counted
        _turn("b", 1, "EXECUTE_QUERY", 0.0),
        _turn("b", 2, "REQUEST_MODIFICATION", 0.0),  # after a wrong answer: not counted
    )
    summary = ConversationReport(turns, {}, "t2c").summary()
    assert summary["follow_up_turns"] == 4 and summary["follow_up_success"] == 0.5
    assert summary["follow_up_turns_after_right_previous"] == 2
    assert summary["follow_up_success_after_right_previous"] == 0.5


def test_conversation_figure_labels_each_bar_with_its_count():
    """Each bar carries its share and k/N, so a reader can set the figure beside the summary's counts."""
    from t2c_lib.report.plots import CONVERSATION_METRICS, fig_conversations

    summary = ConversationReport(
        (
            _turn("a", 1, "EXECUTE_QUERY", 1.0),
            _turn("a", 2, "REQUEST_MODIFICATION", 0.0),
            _turn("a", 3, "REQUEST_MODIFICATION", 1.0),
        ),
        {},
        "t2c",
    ).summary()
    fig = fig_conversations(summary)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert len(labels) == len(CONVERSATION_METRICS)
    # turn Pass@1, follow-up success, follow-ups after a right answer
    assert "0.67 (2/3)" in labels and "0.50 (1/2)" in labels and "0.00 (0/1)" in labels


def test_a_follow_up_that_loses_the_previous_filter_is_not_called_perfect(engine_for, tmp_path):
    """Issue 39 (9): "only those with 3 credits" after a semester question must keep `semester = 3`."""
    lost = "MATCH (m:MK) WHERE m.sks = 3 RETURN m.nama ORDER BY m.nama"
    kept = "MATCH (m:MK) WHERE m.semester = 3 AND m.sks = 3 RETURN m.nama ORDER BY m.nama"
    replies = []
    for follow_up in (lost, kept):
        replies += ["EXECUTE_QUERY", f"<cypher>{GOLD1}</cypher>", "Ada {rows} mata kuliah."]
        replies += ["REQUEST_MODIFICATION", f"<cypher>{follow_up}</cypher>", "Ada {rows} mata kuliah."]
    engine, _ = engine_for(replies)
    for name, follow_up in (("lost", lost), ("kept", kept)):
        session = Session.start(session_id=name, directory=tmp_path / name, engine=engine)
        assert session.ask(Q1).quality == 100
        second = session.ask("Hanya yang 3 SKS.")
        assert second.status is TurnStatus.ANSWERED and second.query == follow_up
        if name == "lost":
            assert second.quality == 50
            assert "Filter pertanyaan sebelumnya (semester = 3) hilang dari kueri ini" in " ".join(second.warnings)
        else:
            assert second.quality == 100 and not second.warnings


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Ada berapa banyak?", True),  # four words, none of the graph's own
        ("And in 'Cast Away'?", True),  # a continuation word first
        ("Dan yang semester 4?", True),
        ("Berapa SKS mata kuliah 'Sistem Operasi'?", False),  # names a property and quotes a value
        ("Siapa saja 'Budi'?", False),  # a quoted value without a continuation word stands alone
        ("Berapa jumlah mata kuliah semester 3?", False),  # five words
        ("Terima kasih.", False),  # an acknowledgement
        ("Apa prasyarat nya?", True),
        ("Apa saja SKS-nya?", False),  # `sks` is a property of the graph
    ],
)
def test_follows_on_reads_messages_that_cannot_stand_alone(kurikulum_store, message, expected):
    names = schema_words(kurikulum_store.schema())
    assert {"sks", "semester", "mk", "prerequisite"} <= names and "of" not in names
    assert follows_on(message, names) is expected


@pytest.mark.parametrize(
    ("follow_ons", "mode", "message", "expected"),
    [
        (True, RouterMode.HYBRID, "Ada berapa banyak?", Intent.REQUEST_MODIFICATION),
        (False, RouterMode.HYBRID, "Ada berapa banyak?", Intent.EXECUTE_QUERY),  # follow-ups by rewrite: the model
        (True, RouterMode.MODEL, "Ada berapa banyak?", Intent.EXECUTE_QUERY),  # the model alone
        (True, RouterMode.HYBRID, "Berapa SKS mata kuliah 'Sistem Operasi'?", Intent.EXECUTE_QUERY),
    ],
)
def test_hybrid_router_reads_a_message_that_cannot_stand_alone_as_a_modification(
    kurikulum_store, follow_ons, mode, message, expected
):
    names = schema_words(kurikulum_store.schema())
    router = Router(
        ScriptedModelStandIn(["EXECUTE_QUERY"] * 2), "id", frozenset({"mata", "kuliah"}), mode=mode, names=names
    )
    decision = router.route(message, [(Q1, GOLD1)], has_previous=True, follow_ons=follow_ons)
    assert decision.intent is expected and decision.llm_calls == 1
    assert (decision.source is RouteSource.RULES) == (expected is Intent.REQUEST_MODIFICATION)
    first = router.route("Ada berapa banyak?", [], has_previous=False, follow_ons=follow_ons)
    assert first.intent is Intent.EXECUTE_QUERY  # nothing to follow on from


def test_stable_order_lists_an_unsorted_answer_by_its_columns_on_the_store(engine_for, tmp_path):
    """`stable_order` (issue 53): an answer whose query sorts and limits nothing is run again with ORDER BY over its
    returned columns through the chain; the attempt keeps the model's query; a sorted or limited query, or one whose
    sorted form the chain refuses, stays as written."""
    unsorted = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama, m.sks"
    limited = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama LIMIT 2"
    engine, _ = engine_for(
        [
            "EXECUTE_QUERY",
            f"<cypher>{unsorted}</cypher>",
            "Ada {rows} mata kuliah.",
            "EXECUTE_QUERY",
            f"<cypher>{limited}</cypher>",
            "Ada {rows} mata kuliah.",
        ],
        stable_order=True,
    )
    session = Session.start(session_id="o1", directory=tmp_path / "o1", engine=engine)
    answer = session.ask(Q1)
    assert answer.query == unsorted + " ORDER BY m.nama, m.sks"
    assert answer.state is not None and answer.state.attempts[-1].query == unsorted
    expected = sorted(tuple(r) for r in engine.store.query(unsorted).rows)
    assert [tuple(r) for r in answer.result.itertuples(index=False)] == expected
    assert session.context is not None and session.context.query == answer.query
    assert session.ask("Mata kuliah apa saja di semester 3? Dua saja.").query == limited


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("MATCH (m:MK) RETURN m.nama", "MATCH (m:MK) RETURN m.nama ORDER BY m.nama"),
        (
            "MATCH (d:Person)-[:DIRECTED]->(m:Movie) RETURN d.name AS director, count(m) AS movies",
            "MATCH (d:Person)-[:DIRECTED]->(m:Movie) RETURN d.name AS director, count(m) AS movies"
            " ORDER BY director, movies",
        ),
        ("MATCH (m:MK) RETURN DISTINCT m.tipe", "MATCH (m:MK) RETURN DISTINCT m.tipe ORDER BY m.tipe"),
        ("MATCH (m:MK) RETURN m.nama ORDER BY m.sks", None),  # it sorts already
        ("MATCH (m:MK) RETURN m.nama LIMIT 3", None),  # sorting would change which rows a limit keeps
        ("MATCH (m:MK) RETURN m.nama SKIP 1", None),
        ("MATCH (m:MK) RETURN m.nama UNION MATCH (t:topic) RETURN t.nama AS nama", None),
        ("MATCH (m:MK) RETURN m.nama 'unclosed", None),  # text the lexer refuses
    ],
)
def test_in_stable_order(query, expected):
    assert in_stable_order(query) == expected


def test_stable_order_is_off_for_sessions_saved_before_it():
    assert ChatSettings().stable_order is True
    assert ChatSettings.from_dict({}).stable_order is False  # a session file without the key ran as written
    assert ChatSettings.from_dict({"stable_order": True}).stable_order is True
    assert ChatSettings().value_hints is True and ChatSettings.from_dict({}).value_hints is False
    with pytest.raises(InvalidValue, match="stable_order must be true or false"):
        ChatSettings(stable_order="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match="value_hints must be true or false"):
        ChatSettings(value_hints=1)  # type: ignore[arg-type]


def test_follow_up_edit_answers_without_a_query_call_and_a_failed_turn_is_built_on_its_question(engine_for, tmp_path):
    """`follow_up: edit` (issue 53): a follow-up that reads as a token edit makes no query call (router and answer
    only) and its query passed the chain; a follow-up of a failed turn goes to the loop as that turn's question
    with the change, not as a rewrite of an older query."""
    engine, model = engine_for(
        [
            "EXECUTE_QUERY",
            f"<cypher>{GOLD1}</cypher>",
            "Ada {rows} mata kuliah.",
            "REQUEST_MODIFICATION",  # "Tampilkan juga SKS-nya." -> an edit: no query call
            "Ada {rows} baris.",
            "EXECUTE_QUERY",
            "<cypher>MATCH (m:MK) WHERE m.nama = 'Tidak Ada' RETURN m.kode</cypher>",
            "<cypher>MATCH (m:MK) WHERE m.nama = 'Tidak Ada' RETURN m.kode</cypher>",
            "REQUEST_MODIFICATION",  # after the failed turn: asked as a new question
            f"<cypher>{GOLD1}</cypher>",
            "Ada {rows} mata kuliah.",
        ],
        follow_up="edit",
    )
    session = Session.start(session_id="e1", directory=tmp_path / "e1", engine=engine)
    session.ask(Q1)
    edited = session.ask("Tampilkan juga SKS-nya.")
    assert edited.status is TurnStatus.ANSWERED and edited.state is not None
    assert edited.query == GOLD1.replace("RETURN m.nama", "RETURN m.nama, m.sks")
    assert edited.state.attempts[0].kind == "follow_up_edit" and edited.state.llm_calls == 0
    assert all(v.ok for v in edited.state.attempts[0].validations) and len(model.requests) == 5
    failed = session.ask("Apa kode mata kuliah 'Tidak Ada'?")
    assert failed.status is TurnStatus.FAILED and session.failed_question == "Apa kode mata kuliah 'Tidak Ada'?"
    session.ask("Hanya yang wajib.")
    asked = model.requests[9][-1].content
    assert "Tidak Ada" in asked and "Hanya yang wajib." in asked and "Tulis ulang" not in asked
    assert session.failed_question is None


def test_a_follow_up_of_a_failed_first_turn_is_read_by_the_rules_and_built_on_its_question(engine_for, tmp_path):
    """The model sees no query after a failed turn and calls "Urutkan ..." a new question; hybrid routing lets the
    rules read the modification, which is asked as the failed question with the change (issue 53)."""
    engine, model = engine_for(
        [
            "EXECUTE_QUERY",
            "<cypher>MATCH (m:MK) WHERE m.nama = 'Tidak Ada' RETURN m.kode</cypher>",
            "<cypher>MATCH (m:MK) WHERE m.nama = 'Tidak Ada' RETURN m.kode</cypher>",
            "EXECUTE_QUERY",  # the model's reading of the follow-up; the rules overrule it
            f"<cypher>{GOLD1}</cypher>",
            "Ada {rows} mata kuliah.",
        ],
        follow_up="edit",
    )
    session = Session.start(session_id="f1", directory=tmp_path / "f1", engine=engine)
    assert session.ask("Apa kode mata kuliah 'Tidak Ada'?").status is TurnStatus.FAILED
    answer = session.ask("Urutkan menurut semester.")
    assert answer.intent is Intent.REQUEST_MODIFICATION and answer.route.source is RouteSource.RULES
    asked = model.requests[4][-1].content
    assert "Tidak Ada" in asked and "Urutkan menurut semester." in asked
    assert answer.status is TurnStatus.ANSWERED and session.failed_question is None
