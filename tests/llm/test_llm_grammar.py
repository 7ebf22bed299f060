"""`decoding: constrained`: the schema-built GBNF, checked by llama.cpp's own grammar engine and the packaged model."""

from __future__ import annotations

import ctypes
import math
import tempfile

import pytest

from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.llm.grammar import cypher_grammar, grammar_digest
from t2c_lib.llm.local import LocalModel, shared_llama
from t2c_lib.llm.parse import QuerySource, parse_response
from t2c_lib.prompts import Configuration, PromptBuilder

pytestmark = pytest.mark.slow  # runs the local model

GEMMA = "local/gemma-3-270m"  # the smallest packaged model: these tests are about the grammar, not the answers


@pytest.fixture(scope="module")
def kurikulum():
    dataset = load_dataset("kurikulum")
    with tempfile.TemporaryDirectory() as root:
        store = LadybugStore(dataset, root=root)
        schema = store.schema()
        store.close()
    return dataset, schema


@pytest.fixture(scope="module")
def grammar(kurikulum) -> str:
    return cypher_grammar(kurikulum[1])


@pytest.fixture(scope="module")
def model(grammar) -> LocalModel:
    return LocalModel(GEMMA, grammar=grammar).load()


def accepts(model: LocalModel, grammar: str, text: str) -> bool:
    """Whether llama.cpp's grammar sampler lets the model write exactly `text` (then end)."""
    import llama_cpp.llama_cpp as lc

    llama, lock = shared_llama(model.settings)
    vocab = llama._model.vocab
    sampler = lc.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
    assert sampler, "llama.cpp could not parse the grammar"

    def allowed(token: int) -> bool:
        data = (lc.llama_token_data * 1)(lc.llama_token_data(token, 0.0, 0.0))
        array = lc.llama_token_data_array(data, 1, -1, False)
        lc.llama_sampler_apply(sampler, ctypes.byref(array))
        return not math.isinf(array.data[0].logit)

    try:
        with lock:
            for token in llama.tokenize(text.encode("utf-8"), add_bos=False, special=False):
                if not allowed(token):
                    return False
                lc.llama_sampler_accept(sampler, token)
            return allowed(llama.token_eos())
    finally:
        lc.llama_sampler_free(sampler)


def test_terminals_come_from_the_schema(kurikulum, grammar) -> None:
    schema = kurikulum[1]
    assert all(f'"{label}"' in grammar for label in schema.labels)
    assert all(f'"{rel}"' in grammar for rel in schema.rel_types)
    assert '"sks"' in grammar and "CREATE" not in grammar and "MERGE" not in grammar
    assert grammar_digest(grammar) != grammar_digest(grammar.replace('"sks"', '"credits"'))


@pytest.mark.parametrize(
    "reply",
    [
        " <cypher>MATCH (m:MK) WHERE m.semester = 3 RETURN m.nama, m.sks ORDER BY m.nama</cypher>",
        "<cypher>MATCH (a:MK)-[:PREREQUISITE]->(b:MK {kode: 'IF123'}) RETURN count(*) AS n</cypher>",
        "<cypher>MATCH (m:MK) WITH m.semester AS s, count(m) AS n RETURN s, n ORDER BY n DESC LIMIT 3</cypher>",
        "<cypher>MATCH (a:MK)<-[:PREREQUISITE]-(b:MK)-[r]-(t:topic) RETURN a.nama, type(r)</cypher>",
    ],
)
def test_read_only_replies_are_accepted(model, grammar, reply) -> None:
    assert accepts(model, grammar, reply)


@pytest.mark.parametrize(
    "reply",
    [
        "<cypher>MATCH (m:MK) DETACH DELETE m</cypher>",
        "<cypher>CREATE (m:MK {nama: 'x'}) RETURN m</cypher>",
        "<cypher>MATCH (m:MK) SET m.sks = 0 RETURN m</cypher>",
        "<cypher>MERGE (m:MK {kode: 'x'}) RETURN m</cypher>",
        "<cypher>MATCH (m:MK) REMOVE m.sks RETURN m</cypher>",
        "<cypher>CALL db.labels() YIELD label RETURN label</cypher>",
        "<cypher>LOAD CSV FROM 'file:///x' AS row RETURN row</cypher>",
        "<cypher>MATCH (c:Course) RETURN c</cypher>",  # no such label
        "<cypher>MATCH (m:MK) RETURN m.credits</cypher>",  # no such property
        "<cypher>MATCH (a)<-->(b) RETURN a</cypher>",  # both arrows: LadybugDB refuses it
        "MATCH (m:MK) RETURN m",  # not in the tags parse.py reads first
    ],
)
def test_writes_and_unknown_names_are_rejected(model, grammar, reply) -> None:
    assert not accepts(model, grammar, reply)


def test_constrained_reply_of_the_packaged_model_parses(kurikulum, model) -> None:
    dataset, schema = kurikulum
    builder = PromptBuilder(
        Configuration.from_name("Few-Shot_Full"), schema.render("full_schema"), dataset.language, dataset.examples
    )
    completion = model.complete(builder.initial(dataset.questions[0].question), max_tokens=128)
    parsed = parse_response(completion.text)
    assert parsed.source is QuerySource.CYPHER_TAG, completion.text
    assert parsed.query.split()[0] in ("MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN"), completion.text
    assert "RETURN" in parsed.query


def test_grammar_changes_the_cache_fingerprint(grammar) -> None:
    free, constrained = LocalModel(GEMMA), LocalModel(GEMMA, grammar=grammar)
    assert free.fingerprint == LocalModel(GEMMA).fingerprint and "grammar" not in free.fingerprint
    assert constrained.settings_fingerprint == f"{free.settings_fingerprint};grammar={grammar_digest(grammar)}"
    assert constrained.fingerprint != free.fingerprint  # the cache key (settings, then the llama.cpp build)


def test_decoding_is_a_checked_study_setting(tmp_path) -> None:
    from t2c_lib.study.params import ParamsError, StudyParams

    assert StudyParams().decoding == "free"
    assert StudyParams().with_overrides(decoding="constrained").to_dict()["decoding"] == "constrained"
    with pytest.raises(ParamsError, match=r"decoding='guided': valid: free, constrained"):
        StudyParams().with_overrides(decoding="guided")


def test_signature_names_constrained_decoding() -> None:
    from t2c_lib.study.manifest import run_signature

    manifest = {
        "package_version": "0",
        "dataset": "d",
        "dataset_hash": "h" * 12,
        "store": "s",
        "model_id": "m",
        "validators": ["syntax"],
        "template_hashes": {},
        "parameters": {"max_iterations": 3, "temperature_first": 0.0, "temperature_refine": 0.1, "decoding": "free"},
    }
    assert "dec:" not in run_signature(manifest)
    manifest["parameters"]["decoding"] = "constrained"
    assert run_signature(manifest).endswith("|dec:constrained")


def test_an_endpoint_without_grammar_support_says_so(grammar) -> None:
    from t2c_lib.llm.base import LLMConfigError
    from t2c_lib.llm.factory import constrained
    from t2c_lib.llm.openai_compat import Endpoint, OpenAICompatModel, grammar_field_from

    remote = OpenAICompatModel("qwen", Endpoint("http://127.0.0.1:9/v1", "", "custom"))
    with pytest.raises(
        LLMConfigError,
        match=r"decoding: constrained needs an endpoint that takes a GBNF grammar; 'qwen[^']*' .* T2C_LLM_GRAMMAR_FIELD",
    ):
        constrained(remote, grammar)
    with pytest.raises(
        LLMConfigError, match=r"decoding: constrained needs a model that takes a GBNF grammar; 'scripted'"
    ):
        constrained(type("Scripted", (), {"model_id": "scripted"})(), grammar)
    with pytest.raises(LLMConfigError, match=r"T2C_LLM_GRAMMAR_FIELD='json_schema': valid: grammar, guided_grammar"):
        grammar_field_from({"T2C_LLM_GRAMMAR_FIELD": "json_schema"})
    held = constrained(
        OpenAICompatModel("qwen", Endpoint("http://127.0.0.1:9/v1", "", "custom", "guided_grammar")), grammar
    )
    assert held.grammar == grammar and held.fingerprint == f"grammar={grammar_digest(grammar)}"
    local = constrained(LocalModel(n_threads=1), grammar)
    assert local.grammar == grammar and local.n_threads == 1


def test_study_model_is_held_to_the_grammar_and_old_manifests_resume(grammar, tmp_path) -> None:
    import json

    from t2c_lib.study.manifest import check_same_settings
    from t2c_lib.study.params import StudyParams
    from t2c_lib.study.steps import make_chat_model

    params = StudyParams().with_overrides(decoding="constrained")
    chat = make_chat_model(params, "off", grammar)
    assert chat.model.grammar == grammar and "grammar=" in chat.model.fingerprint
    assert make_chat_model(StudyParams(), "off").model.grammar is None
    # a cell started before `decoding` existed decoded freely: it resumes under free, not under constrained
    old = {"model_id": "m", "parameters": {k: v for k, v in StudyParams().to_dict().items() if k != "decoding"}}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(old))
    check_same_settings(path, {"model_id": "m", "parameters": StudyParams().to_dict()})
    with pytest.raises(RuntimeError, match="parameters differ"):
        check_same_settings(path, {"model_id": "m", "parameters": params.to_dict()})


def test_clause_repetition_is_bounded(model, grammar) -> None:
    """A looping small model is steered into RETURN: four reading clauses pass, a fifth does not."""
    four = "<cypher>" + "MATCH (m:MK) " * 4 + "RETURN m</cypher>"
    assert accepts(model, grammar, four)
    assert not accepts(model, grammar, "<cypher>" + "MATCH (m:MK) " * 5 + "RETURN m</cypher>")
    assert not accepts(model, grammar, "<cypher>MATCH (a)-->(b)-->(c)-->(d)-->(e) RETURN a</cypher>")
    assert not accepts(model, grammar, "<cypher>MATCH (m:MK) RETURN '" + "x" * 81 + "'</cypher>")


def test_shortlist_mask_decodes_like_full_vocabulary_masking(kurikulum, model, grammar) -> None:
    """Greedy replies through GrammarMask equal llama-cpp-python's own (whole-vocabulary) grammar sampling."""
    from llama_cpp import LlamaGrammar

    from t2c_lib.llm import local

    dataset, schema = kurikulum
    llama, lock = shared_llama(model.settings)
    for name, index in (("Few-Shot_Full", 3), ("Zero-Shot_Nodes+Paths", 1)):
        config = Configuration.from_name(name)
        builder = PromptBuilder(config, schema.render(config.schema_format), dataset.language, dataset.examples)
        messages = builder.initial(dataset.questions[index].question)
        ours = model.complete(messages, max_tokens=40).text
        prefix_ids, suffix_ids = model.prompt_ids(messages)
        with lock:
            tokens = prefix_ids + suffix_ids
            local._evaluate(llama, prefix_ids, suffix_ids)
            theirs = llama.create_completion(
                tokens,
                max_tokens=40,
                temperature=0.0,
                top_p=1.0,
                top_k=0,
                min_p=0.0,
                repeat_penalty=1.0,
                stop=list(local.STOP_SEQUENCES),
                seed=model.seed,
                logits_processor=local._answer_on_same_line(llama, len(tokens)),
                stopping_criteria=local._answer_complete(llama, len(tokens)),
                grammar=LlamaGrammar.from_string(grammar, verbose=False),
            )["choices"][0]["text"]
        assert ours == theirs and ours.startswith(" <cypher>")


def test_zero_shot_constrained_reply_closes_before_max_tokens(kurikulum, model) -> None:
    """With the bounded grammar the looping Zero-Shot reply still ends in `</cypher>` within the study's 256 tokens."""
    dataset, schema = kurikulum
    config = Configuration.from_name("Zero-Shot_Full")
    builder = PromptBuilder(config, schema.render(config.schema_format), dataset.language, dataset.examples)
    completion = model.complete(builder.initial(dataset.questions[1].question), max_tokens=256)
    assert completion.text.rstrip().endswith("</cypher>"), completion.text
    assert completion.usage.completion_tokens < 256
    assert parse_response(completion.text).source is QuerySource.CYPHER_TAG


def test_an_unparsable_grammar_is_a_clear_error(model) -> None:
    from t2c_lib.llm.grammar_mask import GrammarError, GrammarMask

    llama, _ = shared_llama(model.settings)
    with pytest.raises(GrammarError, match="could not parse the GBNF grammar"):
        GrammarMask(llama, 'root ::= "a" undefined_rule', 0)
