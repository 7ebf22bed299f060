"""Feedback texts from real validator failures on the kurikulum graph, in both languages."""

from __future__ import annotations

import pytest

from t2c_lib.agent import ErrorType, ValidationResult
from t2c_lib.feedback import FeedbackBuilder, feedback_template_hashes
from t2c_lib.feedback.templates import TEMPLATE_DIR
from t2c_lib.validation import build_chain, make_context, run_chain


@pytest.fixture(scope="module")
def setup(kurikulum_store):
    ctx = make_context(kurikulum_store, timeout_s=1.0)
    return build_chain(kurikulum_store), ctx


def failure(setup, query):
    chain, ctx = setup
    last = run_chain(query, chain, ctx)[-1]
    assert not last.ok
    return last


def test_every_error_type_has_a_template_in_each_language():
    for lang in ("id", "en"):
        for error in ErrorType:
            assert (TEMPLATE_DIR / lang / f"{error.value}.txt").is_file()
        assert len(feedback_template_hashes(lang)) == len(ErrorType) + 1


def test_property_feedback_suggests_the_closest_name(setup):
    last = failure(setup, "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.semster")
    text = FeedbackBuilder(setup[1].schema, "id").build(last, "MATCH ...")
    assert "mungkin maksud Anda `semester`?" in text
    assert "- MK: " in text and "semester (INTEGER)" in text
    english = FeedbackBuilder(setup[1].schema, "en").build(last)
    assert "did you mean `semester`?" in english and "mungkin" not in english


def test_schema_feedback_lists_labels_patterns_and_direction(setup):
    last = failure(setup, "MATCH (m:MK)-[:PURSUED_IN]->(t:topic) RETURN t.nama")
    text = FeedbackBuilder(setup[1].schema, "id").build(last)
    assert "tulis (:topic)-[:PURSUED_IN]->(:MK), bukan (:MK)-[:PURSUED_IN]->(:topic)" in text
    assert "Label yang valid: LG, LO, MK, SO, topic" in text
    assert "- (:topic)-[:PART_OF]->(:LO)" in text


def test_unknown_label_feedback(setup):
    last = failure(setup, "MATCH (t:Topik) RETURN t.nama")
    text = FeedbackBuilder(setup[1].schema, "en").build(last)
    assert "`Topik` does not exist; did you mean `topic`?" in text


def test_property_of_another_label(setup):
    last = failure(setup, "MATCH (s:SO) RETURN s.nama")
    text = FeedbackBuilder(setup[1].schema, "en").build(last)
    assert "`SO` has no property `nama`, but `LG`, `LO`, `MK` or `topic` has it." in text


def test_empty_result_feedback_shows_stored_values(setup):
    last = failure(setup, "MATCH (m:MK {nama: 'basis data'}) RETURN m.sks")
    text = FeedbackBuilder(setup[1].schema, "id").build(last)
    assert "nilai tersimpan yang paling mirip: 'Basis Data'" in text


def test_unsafe_and_no_query_feedback(setup):
    schema = setup[1].schema
    unsafe = failure(setup, "MATCH (m:MK) DETACH DELETE m")
    assert "DETACH DELETE" in FeedbackBuilder(schema, "id").build(unsafe)
    none = ValidationResult("guard", False, ErrorType.NO_QUERY, "no <cypher> tag")
    text = FeedbackBuilder(schema, "id").build(none)
    assert "tidak berisi query Cypher" in text and "<cypher></cypher>" in text
    assert "no <cypher> tag" not in text  # the parse note is recorded, not echoed (a weak model copies it)


@pytest.mark.slow  # waits out the store's time limit twice (the timeout retry): `make test` runs it
def test_timeout_feedback_names_the_limit(setup):
    last = failure(setup, "MATCH p = (a)-[*1..12]-(b) RETURN count(p)")
    assert last.error_type is ErrorType.TIMEOUT
    assert "(batas 1 detik)" in FeedbackBuilder(setup[1].schema, "id").build(last)


def test_feedback_for_a_pass_is_an_error(setup):
    with pytest.raises(ValueError, match="nothing to feed back"):
        FeedbackBuilder(setup[1].schema, "id").build(ValidationResult("guard", True))


def test_no_unfilled_placeholders(setup):
    queries = [
        "MATCH (m:MK {nama: 'Basis Data' RETURN m",
        "MATCH (m:MK) WHERE m.nama = 3 RETURN m",
        "MATCH (m:Matkul) RETURN m",
        "MATCH (m:MK) RETURN m.x",
        "MATCH (m:MK {nama: 'x'}) RETURN m",
    ]
    for query in queries:
        last = failure(setup, query)
        for lang in ("id", "en"):
            text = FeedbackBuilder(setup[1].schema, lang).build(last, query)
            assert "$" not in text and "{" not in text.replace(query, "").replace("{nama", ""), text
            assert "\n\n\n" not in text


ENGLISH_MARKERS = (
    "the query",
    "returned",
    "row(s)",
    "does not exist",
    "did you mean",
    "closest stored values",
    "refused",
    "ran longer",
    "has no property",
    "direction",
    "is not allowed",
    "cannot be read",
)
FAILING = [
    "MATCH (m:MK {nama: 'basis data'}) RETURN m.sks",  # EMPTY_RESULT
    "MATCH (m:MK)-[:PURSUED_IN]->(t:topic) RETURN t.nama",  # SCHEMA_ERROR (direction)
    "MATCH (t:Topik) RETURN t.nama",  # SCHEMA_ERROR (unknown label)
    "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.semster",  # PROPERTIES_ERROR
    "MATCH (s:SO) RETURN s.nama",  # PROPERTIES_ERROR (another label's)
    "MATCH (m:MK) DETACH DELETE m",  # UNSAFE_QUERY
    pytest.param(  # TIMEOUT; waits out the store's time limit twice (the timeout retry): `make test` runs it
        "MATCH p = (a)-[*1..12]-(b) RETURN count(p)", marks=pytest.mark.slow
    ),
    "MATCH (m:MK {nama: 'Basis Data' RETURN m",  # SYNTAX_ERROR (store's parser)
    "MATCH (m:MK) WHERE m.nama = 'x RETURN m",  # SYNTAX_ERROR (guard's lexer)
]


@pytest.mark.parametrize("query", FAILING)
def test_indonesian_feedback_says_everything_in_indonesian(setup, query):
    last = failure(setup, query)
    text = FeedbackBuilder(setup[1].schema, "id").build(last, query)
    first_line = text.splitlines()[0]
    quoted = "pesan asli dari database (tidak diterjemahkan): "
    own_words = first_line.split(quoted)[0] if quoted in first_line else first_line
    body = "\n".join(line for line in text.splitlines()[1:] if query not in line)
    for marker in ENGLISH_MARKERS:
        assert marker not in own_words.lower() and marker not in body.lower(), (marker, text)
    assert last.message.strip().rstrip(".") not in own_words
    if quoted in first_line:  # only the database's own words are quoted, and labelled as such
        assert last.error_type is ErrorType.SYNTAX_ERROR and "offset" not in (last.details or {})
