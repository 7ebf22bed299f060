"""Follow-up edits (`chat/edits.py`, `chat/query_parts.py`): a follow-up read as a token edit of the previous query.

Checked on the real curriculum store (its schema and stored values); every edited query must still pass the whole
validator chain, and a message that does not read unambiguously makes no edit (the model's rewrite answers it).
"""

from __future__ import annotations

import pytest

from t2c_lib.chat.edits import edit_follow_up
from t2c_lib.chat.query_parts import split_query
from t2c_lib.graph.value_index import ValueIndex, store_loader
from t2c_lib.validation import build_chain, make_context
from t2c_lib.validation.chain import run_chain

BASE = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama ORDER BY m.nama"


@pytest.fixture(scope="module")
def editing(kurikulum_store):
    schema = kurikulum_store.schema()
    values = ValueIndex(schema, store_loader(kurikulum_store))

    def edit(query: str, message: str, language: str = "id"):
        return edit_follow_up(query, message, language, schema, values)

    return edit


def test_a_query_splits_at_its_return_and_renders_back_unchanged():
    query = "MATCH (m:MK) RETURN m.semester AS semester, count(m) AS jumlah ORDER BY jumlah DESC, semester LIMIT 3"
    parts = split_query(query)
    assert parts is not None and parts.render() == query
    assert [i.key for i in parts.items] == ["semester", "jumlah"] and parts.items[1].aggregate
    assert parts.order == ("jumlah DESC", "semester") and parts.limit == "3" and parts.bound("m") == "MK"


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (m:MK) RETURN m.nama UNION MATCH (s:SO) RETURN s.kode",
        "MATCH (m:MK) RETURN m.nama SKIP 2",
        "MATCH (m:MK) WITH m RETURN m.nama ORDER BY m.nama LIMIT $n",
        "MATCH (m:MK RETURN m.nama '",
    ],
)
def test_other_shapes_are_not_split(query):
    assert split_query(query) is None


@pytest.mark.parametrize(
    "message,expected,kinds",
    [
        (
            "Tampilkan juga SKS-nya.",
            "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama, m.sks ORDER BY m.nama",
            ("add_column",),
        ),
        (
            "Urutkan dari SKS terbesar.",
            "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama ORDER BY m.sks DESC, m.nama",
            ("sort",),
        ),
        ("Ambil dua saja yang teratas.", BASE + " LIMIT 2", ("limit",)),
        ("Berapa banyak?", "MATCH (m:MK) WHERE m.semester = 3 RETURN count(m) AS jumlah", ("count",)),
        ("Bagaimana dengan semester 5?", "MATCH (m:MK) WHERE m.semester = 5 RETURN m.nama ORDER BY m.nama", ("value",)),
        (
            "Hanya yang wajib.",
            "MATCH (m:MK) WHERE m.semester = 3 AND m.tipe = 'Wajib' RETURN m.nama ORDER BY m.nama",
            ("filter",),
        ),
    ],
)
def test_each_kind_of_edit_on_the_real_schema(editing, kurikulum_store, message, expected, kinds):
    edit = editing(BASE, message)
    assert edit is not None and edit.query == expected and edit.kinds == kinds
    ctx = make_context(kurikulum_store, timeout_s=10.0)
    chain = build_chain(kurikulum_store)
    assert all(v.ok for v in run_chain(edit.query, chain, ctx)) and ctx.result.rows


@pytest.mark.parametrize("message", ["Tampilkan juga nomor topiknya.", "Jelaskan lebih lanjut.", "Hitung per capaian."])
def test_a_message_that_does_not_read_as_an_edit_makes_none(editing, message):
    assert editing(BASE, message) is None


def test_a_quoted_value_is_written_as_one_escaped_literal(editing):
    """A hostile value stays text: one string literal in the edited query, no keyword escapes from it."""
    from t2c_lib.cypher.gate import gate_check
    from t2c_lib.cypher.lexer import Kind, tokenize

    for hostile in ('Bagaimana dengan "x\' OR 1=1 DETACH DELETE m //"?', "Bagaimana dengan 'x\\' OR 1=1 DELETE m //'?"):
        edit = editing("MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kode", hostile)
        assert edit is not None and edit.kinds == ("value",)
        words = {t.upper for t in tokenize(edit.query) if t.kind is Kind.WORD}
        assert "DELETE" not in words and "OR" not in words
        assert sum(t.kind is Kind.STRING for t in tokenize(edit.query)) == 1
        assert gate_check(edit.query).ok


def test_an_english_sort_keeps_the_previous_order_as_tie_break(kurikulum_store):
    schema = kurikulum_store.schema()
    query = "MATCH (m:MK) RETURN m.nama AS name, m.semester AS semester ORDER BY name"
    edit = edit_follow_up(query, "Sort by semester, highest first.", "en", schema)
    assert edit is not None and edit.query.endswith("ORDER BY semester DESC, name")
