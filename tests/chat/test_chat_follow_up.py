"""A follow-up keeps the conversation's filters (issue 39, item 9): the filters a query sets, and the ones a
follow-up's query lost although its message did not ask to lose them, read from the query text."""

from __future__ import annotations

import pytest

from t2c_lib.chat.checks import CheckCode, ResultCheck, follow_up_check
from t2c_lib.chat.constraints import Filter, filters, lost_filters

SEMESTER_3 = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama"


def test_filters_are_where_comparisons_and_pattern_maps_never_text_inside_strings():
    assert filters(SEMESTER_3) == [Filter("semester", "=", "3")]
    assert filters("MATCH (m:MK {semester: 3, tipe: 'Wajib'})-[:PREREQUISITE]->(n) RETURN n") == [
        Filter("semester", "=", "3"),
        Filter("tipe", "=", "'Wajib'"),
    ]
    assert filters("MATCH (m:MK) WHERE m.nama STARTS WITH 'Basis' AND m.sks >= 3 RETURN m") == [
        Filter("nama", "STARTS WITH", "'Basis'"),
        Filter("sks", ">=", "3"),
    ]
    assert filters("MATCH (m:MK) WHERE m.nama = 'a.b = 1' RETURN m") == [Filter("nama", "=", "'a.b = 1'")]
    assert filters("") == [] and filters("MATCH (n) RETURN n") == []


@pytest.mark.parametrize(
    "query, message, lost",
    [
        ("MATCH (m:MK) WHERE m.sks = 3 RETURN m.nama", "only those with 3 credits", ["semester = 3"]),
        ("MATCH (m:MK) WHERE m.sks = 3 RETURN m.nama", "Hanya yang 3 SKS.", ["semester = 3"]),
        ("MATCH (m:MK) WHERE m.semester = 3 AND m.sks = 3 RETURN m.nama", "only those with 3 credits", []),
        ("MATCH (m:MK {semester: 3}) WHERE m.sks = 3 RETURN m.nama", "only those with 3 credits", []),
        ("MATCH (m:MK) WHERE m.semester = 5 RETURN m.nama", "and for semester 5?", []),  # changed, as asked
        ("MATCH (m:MK) RETURN m.nama", "show me all courses instead", []),  # dropped, as asked
        ("MATCH (m:MK) RETURN m.nama", "tampilkan semua mata kuliah", []),
        ("MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama ORDER BY m.sks DESC", "Urutkan dari SKS terbesar.", []),
    ],
)
def test_a_filter_is_lost_only_when_the_message_did_not_ask_for_it(query, message, lost):
    assert [str(f) for f in lost_filters(SEMESTER_3, query, message)] == lost


def test_a_lost_filter_costs_the_quality_its_penalty_and_says_which():
    perfect = ResultCheck((), 100)
    checked = follow_up_check(perfect, SEMESTER_3, "MATCH (m:MK) WHERE m.sks = 3 RETURN m.nama", "only 3 credits")
    assert checked.quality == 50 and [w.code for w in checked.warnings] == [CheckCode.LOST_FILTER]
    assert checked.messages == [
        "The previous question's filter (semester = 3) is gone from this query; if that was meant, say so."
    ]
    assert follow_up_check(perfect, SEMESTER_3, SEMESTER_3 + " ORDER BY m.nama", "sorted by name") is perfect
