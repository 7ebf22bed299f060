"""The notebooks' small table: the rows and columns asked for, HTML and text views, the same data as pandas."""

from __future__ import annotations

from t2c_lib.study.table_view import table

RECORDS = [
    {
        "question_id": "q2",
        "status": "SUCCESS",
        "success": True,
        "score": 0.0555555555,
        "final_query": "MATCH (n) RETURN n",
    },
    {"question_id": "q1", "status": "FAILED", "success": False, "score": None, "final_query": "<b>" + "x" * 80},
    {"question_id": "q3", "status": "SUCCESS", "success": True, "score": 1.0},
]


def test_rows_are_sorted_cut_and_keep_the_columns_asked_for() -> None:
    t = table(RECORDS, ["question_id", "score", "final_query"], sort_by="question_id", limit=2)
    assert t.columns == ("question_id", "score", "final_query")
    assert [r[0] for r in t.rows] == ["q1", "q2"]
    assert t.index is None
    assert table(RECORDS, ["final_query"]).rows[2] == (None,)  # a missing column shows empty


def test_html_escapes_and_text_view_aligns_and_cuts_long_values() -> None:
    t = table(RECORDS, ["question_id", "score", "final_query"], sort_by="question_id")
    page = t._repr_html_()
    assert "&lt;b&gt;" in page and "<b>" not in page
    assert "<td>0.055556</td>" in page and "<td></td>" in page
    text = repr(t).splitlines()
    assert text[0].split() == ["question_id", "score", "final_query"]
    assert text[1].startswith("q1") and text[1].endswith("...") and len(text[1]) < 100
    assert text[0].index("final_query") == text[1].index("<b>") == text[2].index("MATCH")  # columns line up


def test_a_mapping_gives_labelled_rows_and_frame_matches_pandas() -> None:
    by_preset = {"t2c": {"bleu": 0.25, "llmetric": 0.5}, "kg-axel": {"bleu": 0.125, "llmetric": 0.75}}
    t = table(by_preset, ["bleu", "llmetric"])
    assert t.index == ("t2c", "kg-axel")
    assert "<th>t2c</th><td>0.25</td><td>0.5</td>" in t._repr_html_()
    import pandas as pd

    expected = pd.DataFrame(by_preset).T[["bleu", "llmetric"]]
    pd.testing.assert_frame_equal(t.frame(), expected, check_dtype=False)
