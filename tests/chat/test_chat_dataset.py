"""The conversational test set: every gold query passes the validator chain on the embedded store and
returns rows; the file's shape is checked strictly; the file stays outside the dataset hash."""

from __future__ import annotations

import shutil

import pytest

from t2c_lib.chat.intent import Intent
from t2c_lib.datasets import INTENTS, DatasetError, dataset_hash, read_conversations
from t2c_lib.validation import build_chain, make_context
from t2c_lib.validation.chain import run_chain
from tests.helpers import FIXTURES


def test_intent_names_agree():
    assert INTENTS == tuple(i.value for i in Intent)


def test_kurikulum_has_enough_dialogues_of_three_to_four_turns(kurikulum):
    dialogues = kurikulum.conversations
    assert len(dialogues) >= 15
    assert all(3 <= len(d.turns) <= 4 for d in dialogues)
    assert all(any(t.intent == "REQUEST_MODIFICATION" for t in d.turns) for d in dialogues)
    intents = {t.intent for d in dialogues for t in d.turns}
    assert intents == set(INTENTS)


def test_every_gold_query_passes_the_chain_and_returns_rows(kurikulum, kurikulum_store):
    """Through the whole validator chain (read-only guard first, then the store): valid, and not empty."""
    assert _check_gold(kurikulum.conversations, kurikulum_store) >= 40


@pytest.mark.parametrize(
    "name,split,dialogues,follow_ups",
    [
        ("kurikulum", "dev", 15, 30),
        ("movies", "test", 12, 22),
        ("movies", "dev", 12, 22),
    ],
)
def test_the_issue_53_dialogue_sets_cover_every_follow_up_kind(name, split, dialogues, follow_ups, tmp_path_factory):
    """The development sets and the movies test set: enough dialogues, every follow-up labelled with a kind, every
    kind present, every gold query valid and not empty on the embedded store; no dev message repeats a test one."""
    from t2c_lib.datasets import FOLLOW_UP_KINDS, load_dataset
    from t2c_lib.graph.ladybug import LadybugStore

    dataset = load_dataset(name, split)
    turns = [t for d in dataset.conversations for t in d.turns if t.intent == "REQUEST_MODIFICATION"]
    assert len(dataset.conversations) >= dialogues and len(turns) >= follow_ups
    assert all(t.kind for t in turns) and {t.kind for t in turns} == set(FOLLOW_UP_KINDS)
    if split == "dev":
        test_messages = {t.message.lower() for d in load_dataset(name).conversations for t in d.turns}
        assert not [
            t.message
            for d in dataset.conversations
            for t in d.turns
            if t.message.lower() in test_messages and t.intent in ("EXECUTE_QUERY", "REQUEST_MODIFICATION")
        ]
    store = LadybugStore(load_dataset(name), root=tmp_path_factory.mktemp(f"ladybug-{name}-{split}"))
    try:
        assert _check_gold(dataset.conversations, store) >= follow_ups
    finally:
        store.close()


def _check_gold(dialogues, store) -> int:
    ctx = make_context(store, timeout_s=10.0)
    chain = build_chain(store)
    checked = 0
    for dialogue in dialogues:
        previous = None
        for index, turn in enumerate(dialogue.turns, start=1):
            if not turn.cypher:
                continue
            verdicts = run_chain(turn.cypher, chain, ctx)
            failed = [v for v in verdicts if not v.ok]
            assert not failed and len(verdicts) == len(chain), (
                f"{dialogue.id} turn {index}: {failed[0].message if failed else ''}"
            )
            assert ctx.result is not None and ctx.result.rows, f"{dialogue.id} turn {index}: empty result"
            if turn.intent == "REQUEST_MODIFICATION":
                assert previous is not None and turn.cypher != previous, f"{dialogue.id} turn {index} changes nothing"
            previous = turn.cypher
            checked += 1
    return checked


BAD_FILES = {
    "not a list": ("id: x\n", "expected a list of dialogues"),
    "no id": ("- turns: [{message: hi, intent: ACKNOWLEDGE}]\n", "without an 'id'"),
    "duplicate id": (
        "- {id: a, turns: [{message: ok, intent: ACKNOWLEDGE}]}\n- {id: a, turns: [{message: ok, intent: ACKNOWLEDGE}]}\n",
        "duplicate dialogue id 'a'",
    ),
    "unknown key": (
        "- {id: a, speaker: x, turns: [{message: ok, intent: ACKNOWLEDGE}]}\n",
        "unknown key(s) ['speaker']",
    ),
    "no turns": ("- {id: a, turns: []}\n", "'turns' must be a non-empty list"),
    "bad intent": ("- {id: a, turns: [{message: ok, intent: THANKS}]}\n", "intent 'THANKS' is not one of"),
    "query without cypher": (
        "- {id: a, turns: [{message: 'Berapa?', intent: EXECUTE_QUERY}]}\n",
        "needs a gold 'cypher'",
    ),
    "cypher on thanks": (
        "- {id: a, turns: [{message: ok, intent: ACKNOWLEDGE, cypher: 'MATCH (n) RETURN n'}]}\n",
        "has no query; remove its 'cypher'",
    ),
    "orphan modification": (
        "- {id: a, turns: [{message: 'Urutkan', intent: REQUEST_MODIFICATION, cypher: 'MATCH (n) RETURN n'}]}\n",
        "REQUEST_MODIFICATION with no earlier query turn",
    ),
    "empty message": ("- {id: a, turns: [{message: '  ', intent: UNKNOWN}]}\n", "empty 'message'"),
    "turn key typo": ("- {id: a, turns: [{mesage: ok, intent: ACKNOWLEDGE}]}\n", "unknown key(s) ['mesage']"),
    "not yaml": ("- {id: a, turns: [\n", "not valid YAML"),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_malformed_files_fail_clearly(tmp_path, name):
    text, needle = BAD_FILES[name]
    path = tmp_path / "conversations.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        read_conversations(path)
    assert needle in str(info.value) and "conversations.yaml" in str(info.value)


def test_missing_file_means_no_conversations(tmp_path):
    assert read_conversations(tmp_path / "conversations.yaml") == []


def test_conversations_do_not_change_the_dataset_hash(tmp_path):
    root = tmp_path / "tiny"
    shutil.copytree(FIXTURES / "tiny", root)
    before = dataset_hash(root)
    (root / "conversations.yaml").write_text(
        "- {id: a, turns: [{message: ok, intent: ACKNOWLEDGE}]}\n", encoding="utf-8"
    )
    assert dataset_hash(root) == before
    (root / "examples.yaml").write_text("[]\n", encoding="utf-8")
    assert dataset_hash(root) != before  # every other file still counts
