"""Prompt configurations, templates and the message builder on the real kurikulum schema."""

from __future__ import annotations

import pytest

from t2c_lib.llm.base import Message
from t2c_lib.prompts import Configuration, PromptBuilder, PromptType, all_configurations, prompt_hash, template_hashes
from t2c_lib.prompts import templates as prompt_templates
from t2c_lib.schema import SchemaFormat


@pytest.fixture(scope="module")
def schema(kurikulum_store):
    return kurikulum_store.schema()


def test_configuration_names_round_trip():
    names = [c.name for c in all_configurations()]
    assert len(names) == 9 and len(set(names)) == 9
    assert "Zero-Shot_Full" in names and "Few-Shot_Nodes+Paths" in names and "CoT_Only-Paths" in names
    for name in names:
        assert Configuration.from_name(name).name == name
    assert Configuration.from_name("cot_only-paths") == Configuration(PromptType.COT, SchemaFormat.ONLY_PATHS)


def test_unknown_configuration_lists_valid_names():
    with pytest.raises(ValueError) as err:
        Configuration.from_name("Two-Shot_Full")
    assert "Two-Shot_Full" in str(err.value) and "Few-Shot_Nodes+Paths" in str(err.value)


def test_prompt_type_parse():
    assert PromptType.parse("few_shot") is PromptType.FEW_SHOT
    assert PromptType.parse("CoT") is PromptType.COT
    with pytest.raises(ValueError, match="Zero-Shot"):
        PromptType.parse("tree-of-thought")


@pytest.mark.parametrize("config", all_configurations(), ids=lambda c: c.name)
def test_system_message_is_a_stable_prefix(config, schema, kurikulum):
    builder = PromptBuilder(config, schema.render(config.schema_format), kurikulum.language, kurikulum.examples)
    first = builder.initial("Berapa SKS mata kuliah 'Basis Data'?")
    second = builder.initial("Apa kode mata kuliah 'Kecerdasan Buatan'?")
    refine = builder.refinement("Berapa SKS?", "MATCH (m:Mk) RETURN m", "Label salah.")
    assert first[0].role == "system" and first[0] == second[0] == refine[0]
    assert schema.render(config.schema_format).strip() in first[0].content
    assert "<cypher></cypher>" in first[0].content
    # everything but the last message is shared, so a KV cache reuses the whole prefix
    assert first[:-1] == second[:-1]
    assert first[-1] == Message("user", "Berapa SKS mata kuliah 'Basis Data'?")


def test_zero_shot_has_no_examples(schema, kurikulum):
    builder = PromptBuilder(
        Configuration.from_name("Zero-Shot_Full"), schema.render("full_schema"), "id", kurikulum.examples
    )
    assert [m.role for m in builder.initial("q")] == ["system", "user"]


def test_few_shot_examples_alternate(schema, kurikulum):
    builder = PromptBuilder(
        Configuration.from_name("Few-Shot_Full"), schema.render("full_schema"), "id", kurikulum.examples
    )
    messages = builder.initial("q")
    n = len(kurikulum.examples)
    assert [m.role for m in messages] == ["system"] + ["user", "assistant"] * n + ["user"]
    first = kurikulum.examples[0]
    assert messages[1].content == first.question
    assert messages[2].content == f"<cypher>{first.cypher}</cypher>"


def test_cot_examples_carry_reasoning(schema, kurikulum):
    builder = PromptBuilder(
        Configuration.from_name("CoT_Nodes+Paths"), schema.render("nodes_paths"), "id", kurikulum.examples
    )
    messages = builder.initial("q")
    first = kurikulum.examples[0]
    assert messages[2].content == f"<think>{first.reasoning}</think>\n<cypher>{first.cypher}</cypher>"
    assert "<think>" in messages[0].content


def test_refinement_carries_question_query_and_feedback(schema):
    builder = PromptBuilder(Configuration.from_name("Zero-Shot_Only-Paths"), schema.render("only_paths"), "id")
    messages = builder.refinement(
        "Berapa SKS 'Basis Data'?", "MATCH (m:Matkul) RETURN m.sks", "Label `Matkul` tidak ada."
    )
    assert [m.role for m in messages] == ["system", "user"]
    text = messages[1].content
    for part in ("Berapa SKS 'Basis Data'?", "MATCH (m:Matkul) RETURN m.sks", "Label `Matkul` tidak ada.", "<cypher>"):
        assert part in text
    assert "(kosong)" in builder.refinement("q", "", "f")[1].content


def test_few_shot_refinement_keeps_the_examples(schema, kurikulum):
    builder = PromptBuilder(
        Configuration.from_name("Few-Shot_Full"), schema.render("full_schema"), "id", kurikulum.examples
    )
    initial = builder.initial("q")
    refine = builder.refinement("q", "MATCH (m:Matkul) RETURN m", "Label `Matkul` tidak ada.")
    assert refine[:-1] == initial[:-1]  # same system and examples: the KV cache reuses them
    assert "Label `Matkul` tidak ada." in refine[-1].content


def test_english_templates(schema):
    builder = PromptBuilder(Configuration.from_name("Zero-Shot_Full"), schema.render("full_schema"), "en")
    assert builder.system.content.startswith("You are a Cypher expert")
    assert "Fix the query" in builder.refinement("q", "MATCH (n) RETURN n", "f")[1].content


def test_few_shot_without_examples_is_an_error(schema):
    with pytest.raises(ValueError, match="few-shot examples"):
        PromptBuilder(Configuration.from_name("Few-Shot_Full"), schema.render("full_schema"), "id", [])


def test_unknown_language_is_an_error(schema):
    with pytest.raises(ValueError, match="valid: id, en"):
        PromptBuilder(Configuration.from_name("Zero-Shot_Full"), schema.render("full_schema"), "fr")


def test_template_hashes_cover_every_file_and_follow_content(tmp_path, monkeypatch):
    hashes = template_hashes("id")
    assert {
        "prompts/id/zero_shot.txt",
        "prompts/id/few_shot.txt",
        "prompts/id/cot.txt",
        "prompts/id/refine.txt",
    } <= set(hashes)
    assert not any(key.startswith("feedback/") for key in hashes), "the feedback templates are hashed in feedback/"
    assert all(len(h) == 64 for h in hashes.values())
    assert template_hashes("id") == hashes and template_hashes("en") != hashes
    # a copy with one edited file hashes differently, only for that file
    copy = tmp_path / "templates"
    for lang in ("id", "en"):
        (copy / lang).mkdir(parents=True)
        for path in (prompt_templates.TEMPLATE_DIR / lang).glob("*.txt"):
            (copy / lang / path.name).write_bytes(path.read_bytes())
    (copy / "id" / "cot.txt").write_text("changed $schema", encoding="utf-8")
    monkeypatch.setattr(prompt_templates, "TEMPLATE_DIR", copy)
    changed = template_hashes("id")
    assert changed["prompts/id/cot.txt"] != hashes["prompts/id/cot.txt"]
    assert changed["prompts/id/zero_shot.txt"] == hashes["prompts/id/zero_shot.txt"]


def test_prompt_hash_is_content_addressed():
    a = [Message("system", "s"), Message("user", "q")]
    assert prompt_hash(a) == prompt_hash(list(a))
    assert prompt_hash(a) != prompt_hash([Message("system", "s"), Message("user", "q2")])


def test_history_and_verify_prompts_show_a_retrieved_schema_for_their_question():
    """A per-question schema (`retrieved`) reaches the history and verify prompts as the text retrieved for the
    question they are about (these used to call `.rstrip` on the retrieval function)."""
    from t2c_lib.prompts.strategies import FailedAttempt, history_messages, verification_messages

    asked: list[str] = []

    def retrieved(question: str) -> str:
        asked.append(question)
        return f"(:MK {{nama: STRING}}) for {question}"

    builder = PromptBuilder(Configuration.from_name("Zero-Shot_Retrieved"), retrieved, "id")
    history = history_messages(builder, " Apa saja? ", [FailedAttempt("MATCH (x) RETURN x", "bad")])
    verify = verification_messages(builder, "Apa saja?", "MATCH (m:MK) RETURN m.nama")
    assert "(:MK {nama: STRING}) for Apa saja?" in history[-1].content
    assert "(:MK {nama: STRING}) for Apa saja?" in verify[-1].content
    assert set(asked) == {"Apa saja?"}
