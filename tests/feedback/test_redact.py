"""`feedback/redact.without_queries`: a parser message's quote of the failed query goes, what it says of the token stays."""

from __future__ import annotations

from t2c_lib.feedback.redact import HIDDEN, without_queries

QUERY = "MATCH (m:MK) WHERE m.semester = 3 RETURN m.sks DESC, m.nama ORDER BY m.sks DESC"
PARSER = (
    "Query memiliki kesalahan sintaks: Parser exception: Invalid input < DESC>: expected rule iC_Statements "
    f'(line: 1, offset: 47)\n"{QUERY}"\n                                               ^^^^\nPeriksa tanda kurung.\n'
)


def test_the_quoted_query_line_and_its_carets_are_dropped():
    out = without_queries(PARSER, [QUERY])
    assert QUERY not in out and "^" not in out
    assert "Invalid input < DESC>" in out and out.endswith("Periksa tanda kurung.\n")


def test_a_query_quoted_inside_a_sentence_is_replaced_and_short_names_stay():
    out = without_queries(f"The query {QUERY} failed; `m.sks` is fine.", [QUERY, "m.sks"])
    assert out == f"The query {HIDDEN} failed; `m.sks` is fine."


def test_one_line_of_a_multi_line_query_is_dropped_too():
    query = "MATCH (m:MK)\nWHERE m.semester = 3\nRETURN m.sks DESC"
    out = without_queries('Invalid input < DESC>\n"RETURN m.sks DESC"\n          ^^^^\nend', [query])
    assert out == "Invalid input < DESC>\nend"


def test_feedback_without_any_query_is_unchanged():
    assert without_queries(PARSER, []) == PARSER and without_queries("No rows.", [QUERY]) == "No rows."
