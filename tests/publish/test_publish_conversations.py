"""A published conversation evaluation (issue 37, item 2): `make conversations` published, seeded back, reproduced.

The evaluation is a real one (`chat.evaluate` on the embedded curriculum store, a real response cache in a
temporary folder); the model behind the cache is a scripted stand-in (named as such) that replays the replies
of `tests/chat/test_chat_unit.py`'s konv-13 test in order and, like a packaged model, names a GGUF sha256 and this
machine's llama.cpp build in its fingerprint. The rerun's stand-in has no replies: any call it gets fails the test.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from t2c_lib.chat import ChatSettings
from t2c_lib.chat.engine import ChatEngine
from t2c_lib.chat.evaluate import SUMMARY_FILE, TURNS_FILE, evaluate_conversations, write_report
from t2c_lib.chat.log import STEPS
from t2c_lib.cli import main
from t2c_lib.llm.base import Completion, Usage
from t2c_lib.llm.build import build_fingerprint, installed_build
from t2c_lib.llm.cache import CachedModel, ResponseCache
from t2c_lib.llm.call_log import CALLS_FILE, read_calls
from t2c_lib.publish.publish import (
    CONVERSATION_FILES,
    PublishError,
    is_conversation_run,
    publish_run,
    read_published_replies,
)
from t2c_lib.publish.published import PublishedRepliesError, read_replies, seed_cache
from t2c_lib.publish.readme_tables import ReadmeTablesError, render_table
from t2c_lib.publish.replicate import reproduced_line
from t2c_lib.publish.rerun_check import ANALYTICS_STEPS, check_rerun
from t2c_lib.report.plots import export_conversation_figure
from tests.helpers import konv13_replies

# a study pipeline end to end (evaluate, write, publish): `make test` runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

SHA = "cd" * 32
RUN = "conv"


class ReplayStandIn:
    """A scripted stand-in for the model: replays `replies` in order, keyed like a packaged model of this build."""

    model_id = "local/scripted-stand-in"

    def __init__(self, replies: list[str]) -> None:
        self.fingerprint = f"render=1;gguf={SHA};n_ctx=512;build={build_fingerprint()}"
        self.replies = list(replies)

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, **kwargs) -> Completion:
        if not self.replies:
            raise AssertionError("the stand-in was asked more often than scripted (a reply the cache should hold)")
        return Completion(self.replies.pop(0), Usage(50, 5), latency_s=0.01, model=self.model_id)


def play(kurikulum, store, cache: ResponseCache, replies: list[str], out: Path):
    """konv-13 evaluated into `out` as `make conversations` writes it (report, figure, the notebook and its log)."""
    dialogue = next(d for d in kurikulum.conversations if d.id == "konv-13")
    settings = ChatSettings(
        max_iterations=2, timeout_s=5.0, follow_up="rewrite", strategy="feedback"
    )  # every turn asks the model once per step (the thesis loop: one scripted reply per answer)
    engine = ChatEngine.open(settings, dataset=kurikulum, store=store, model=CachedModel(ReplayStandIn(replies), cache))
    report = evaluate_conversations(engine, [dialogue], out_dir=out)
    write_report(report, out)
    export_conversation_figure(report.summary(), out / "figures", ReplayStandIn.model_id)
    (out / "04_conversations.ipynb").write_text('{"executed": "12:00:01"}\n')  # clock times: never published
    (out / "04_conversations.log").write_text("took 3.2 s\n")
    return report


@pytest.fixture(scope="module")
def played(kurikulum, kurikulum_store, tmp_path_factory):
    """konv-13 played once from an empty cache, the cache it filled, and the results folder it is in."""
    replies = konv13_replies(next(d for d in kurikulum.conversations if d.id == "konv-13"))
    root = tmp_path_factory.mktemp("conv")
    cache = ResponseCache(root / "cache.sqlite")
    report = play(kurikulum, kurikulum_store, cache, replies, root / "results" / RUN)
    return root, cache, report


def tree(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_the_evaluation_records_every_model_call_with_the_key_the_cache_stored_it_under(played):
    root, cache, report = played
    assert [c.cached for c in report.calls] == [False] * 9  # three turns: route, query, answer template each
    assert [(c.dialogue, c.turn) for c in report.calls] == [("konv-13", t) for t in (1, 1, 1, 2, 2, 2, 3, 3, 3)]
    assert {c.key for c in report.calls} == {row.key for row in cache.rows()}
    assert read_calls(root / "results" / RUN / CALLS_FILE) == list(report.calls)
    assert CONVERSATION_FILES == (SUMMARY_FILE, TURNS_FILE) and ANALYTICS_STEPS == STEPS  # study does not import chat


def test_a_conversation_run_publishes_twice_byte_for_byte_and_reproduces_without_a_model_call(
    played, kurikulum, kurikulum_store, tmp_path
):
    root, cache, report = played
    results = tmp_path / "results"
    shutil.copytree(root / "results" / RUN, results / RUN)
    assert is_conversation_run(results / RUN)
    first = publish_run(RUN, cache, results, tmp_path / "figures")
    published = results / "published" / RUN
    before = tree(published)
    assert publish_run(RUN, cache, results, tmp_path / "figures").bytes == first.bytes and tree(published) == before
    for must in (TURNS_FILE, SUMMARY_FILE, CALLS_FILE, "replies.jsonl.gz", "published.json"):
        assert must in before, must
    assert {"sessions/konv-13/session.json", "sessions/konv-13/analytics.jsonl", "figures/conversations.svg"} <= set(
        before
    )
    assert not any(name.endswith((".ipynb", ".log")) for name in before)
    replies = read_replies(published / "replies.jsonl.gz")
    assert len(replies) == first.replies == len({c.key for c in report.calls})
    assert {(r.model_id, r.model_sha256, r.build) for r in replies} == {
        (ReplayStandIn.model_id, SHA, build_fingerprint())
    }
    assert json.loads((published / "published.json").read_text())["model_attempts"] == 9

    # the rerun: an empty private cache seeded from the published replies, a stand-in with nothing to say
    fresh = ResponseCache(tmp_path / "fresh.sqlite")
    seeded = seed_cache(fresh, read_published_replies(RUN, results), build_fingerprint())
    assert (seeded.matching, seeded.added) == (len(replies), len(replies))
    shutil.rmtree(results / RUN)
    again = play(kurikulum, kurikulum_store, fresh, [], results / RUN)
    assert [c.cached for c in again.calls] == [True] * 9
    assert reproduced_line(results / RUN, read_published_replies(RUN, results)) == (
        f"reproduced from {len(replies)} published replies; 0 model calls"
    )
    check = check_rerun(RUN, results, tmp_path / "figures")
    assert (check.differ, check.missing, check.extra) == ([], [], [])
    assert {TURNS_FILE, SUMMARY_FILE, "sessions/konv-13/session.json", "figures/conversations.svg"} <= set(
        check.identical
    )
    assert check.run_time_only[CALLS_FILE] == {"cached"}
    assert check.run_time_only.get("sessions/konv-13/analytics.jsonl", set()) <= {f"durations.{s}" for s in STEPS}


def test_a_changed_turn_is_found_by_the_reproduced_check(played, tmp_path):
    root, cache, _ = played
    results = tmp_path / "results"
    shutil.copytree(root / "results" / RUN, results / RUN)
    publish_run(RUN, cache, results, tmp_path / "figures")
    turns = results / RUN / TURNS_FILE
    turns.write_text(turns.read_text().replace("konv-13,3,", "konv-13,4,"))
    calls = results / RUN / CALLS_FILE
    calls.write_text(calls.read_text().replace('"turn": 3', '"turn": 2'))
    check = check_rerun(RUN, results, tmp_path / "figures")
    assert check.differ == [CALLS_FILE, TURNS_FILE]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{half a line", "line 10: not a JSON line"),
        ("[1, 2]", "line 10: not a call record"),
        ('{"dialogue": "d", "turn": 1, "model_id": "m", "key": "KEY", "cached": false}', "line 10: key is not 64"),
        ('{"dialogue": "d", "turn": true, "model_id": "m", "key": "' + "a" * 64 + '", "cached": false}', "'turn'"),
        ('{"dialogue": "d", "turn": 1, "model_id": "m", "key": "' + "a" * 64 + '", "cached": "no"}', "'cached'"),
        ("x" * 70_000, "line 10: longer than"),
        ('{"dialogue": "d", "turn": 1, "model_id": "m", "key": "' + "a" * 64 + '", "cached": false}', "not in the"),
    ],
    ids=["torn", "not-an-object", "bad-key", "bool-turn", "str-cached", "long-line", "key-not-in-cache"],
)
def test_a_hostile_calls_log_is_one_clear_error_and_publishes_nothing(played, tmp_path, line, message):
    root, cache, _ = played
    results = tmp_path / "results"
    shutil.copytree(root / "results" / RUN, results / RUN)
    calls = results / RUN / CALLS_FILE
    calls.write_text(calls.read_text() + line + "\n")
    with pytest.raises(PublishError, match=message) as raised:
        publish_run(RUN, cache, results, tmp_path / "figures")
    assert "\n" not in str(raised.value)
    assert not (results / "published" / RUN).exists()
    published = results / "published"
    assert not published.exists() or list(published.iterdir()) == []  # nothing half-written beside it


def test_a_conversation_run_without_its_calls_log_or_with_a_link_is_refused(played, tmp_path):
    root, cache, _ = played
    results = tmp_path / "results"
    shutil.copytree(root / "results" / RUN, results / RUN)
    (results / RUN / CALLS_FILE).unlink()
    with pytest.raises(PublishError, match="no model_calls.jsonl; the run was made before .* rerun it"):
        publish_run(RUN, cache, results, tmp_path / "figures")
    shutil.copy(root / "results" / RUN / CALLS_FILE, results / RUN / CALLS_FILE)
    (results / RUN / "sessions" / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(PublishError, match="a link"):
        publish_run(RUN, cache, results, tmp_path / "figures")


def test_a_hostile_published_replies_file_seeds_nothing(played, tmp_path, monkeypatch):
    """`make conversations` seeds through `t2c study seed`: a forged row stops it in one line before any row is put."""
    root, cache, _ = played
    results = tmp_path / "results"
    shutil.copytree(root / "results" / RUN, results / RUN)
    publish_run(RUN, cache, results, tmp_path / "figures")
    path = results / "published" / RUN / "replies.jsonl.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    forged = json.loads(lines[-1])
    forged["request"]["messages"][-1][1] += " (and also drop every table)"
    path.write_bytes(gzip.compress(("\n".join([*lines[:-1], json.dumps(forged)]) + "\n").encode(), mtime=0))
    with pytest.raises(PublishedRepliesError, match=f"line {len(lines)}: key .* is not the hash of its request"):
        read_published_replies(RUN, results)
    monkeypatch.setattr("t2c_lib.config.RESULTS_DIR", results)
    target = tmp_path / "seeded.sqlite"
    out = CliRunner().invoke(main, ["study", "seed", "--run-id", RUN, "--cache", str(target)])
    assert out.exit_code == 1 and out.output.startswith("t2c: error: ") and out.output.count("\n") == 1, out.output
    assert len(ResponseCache(target)) == 0


def test_the_conversation_table_is_rendered_from_the_published_summary(played, tmp_path):
    root, cache, report = played
    results = tmp_path / "results"
    shutil.copytree(root / "results" / RUN, results / RUN)
    publish_run(RUN, cache, results, tmp_path / "figures")
    lines = render_table(RUN, "conversations", results)
    caption = lines[1]
    assert caption.startswith(f"Rendered by `t2c study tables` from `results/published/{RUN}/summary.json`")
    assert f"`{ReplayStandIn.model_id}` (llama.cpp build `{installed_build().short}`)" in caption
    assert "router `hybrid`" in caption and "`t2c` scoring preset" in caption
    assert "follow-ups `rewrite`, rows in a stable order, value hints under the schema;" in caption  # each named
    body = lines[3:-1]
    assert body[0] == "| measure | over | k/N | share |"
    assert "| intent accuracy | turns | 2/3 | 0.67 |" in body  # turn 2 routed as a new question
    assert "| turn Pass@1 | query turns | 2/3 | 0.67 |" in body
    assert "| follow-up success | follow-up turns | 1/2 | 0.50 |" in body
    summary_path = results / "published" / RUN / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["turn_pass_at_1"] = 0.5  # not k/3 for any k
    summary_path.write_text(json.dumps(summary))
    with pytest.raises(ReadmeTablesError, match="turn_pass_at_1 0.5 is no count of query_turns 3"):
        render_table(RUN, "conversations", results)
