"""Published runs (issue 37): publish a finished run twice byte for byte, seed a cache from it (this machine's
build only), the replication report, the size cap, and hostile published files.

The runs are real study runs (notebook steps `infer`, `evaluate`, `analyze` on the embedded curriculum store,
a real response cache in a temporary folder); the model behind the cache is a scripted stand-in (named as
such) that answers like a packaged model: its id starts with `local/` and its fingerprint names a GGUF
sha256 and this machine's llama.cpp build, so its replies are keyed and manifested like the real model's.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from t2c_lib.cli import main
from t2c_lib.llm.base import Completion, Message, Usage
from t2c_lib.llm.build import build_fingerprint
from t2c_lib.llm.cache import CachedModel, ResponseCache
from t2c_lib.publish.publish import PublishError, publish_run, read_published_replies
from t2c_lib.publish.published import PublishedRepliesError, read_replies, seed_cache
from t2c_lib.publish.replicate import replication_report, reproduced_line
from t2c_lib.publish.rerun_check import check_rerun
from t2c_lib.study.params import ParamsError, params_from_dict
from t2c_lib.study.steps import analyze, evaluate, infer

# runs, publishes and reruns a small study: `make test` runs it, `make test-fast` stays under a minute
pytestmark = pytest.mark.slow

SHA = "ab" * 32
OTHER_BUILD = "llama-cpp-python 0.0.0 x86-64-v4 [AVX512]"


class GoldOrBrokenStandIn:
    """A scripted stand-in: the gold query for every question except `wrong_on` (which gets a broken one)."""

    def __init__(self, gold: dict[str, str], wrong_on: frozenset[str] = frozenset(), build: str | None = None) -> None:
        self.model_id = "local/scripted-stand-in"
        self.fingerprint = f"render=1;gguf={SHA};n_ctx=512;build={build or build_fingerprint()}"
        self.gold, self.wrong_on, self.calls = gold, wrong_on, 0

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, seed=None) -> Completion:
        self.calls += 1
        text = messages[-1].content
        for question, cypher in self.gold.items():
            if question in text:
                query = "MATCH (m:MKK) RETURN m.nama" if question in self.wrong_on else cypher
                return Completion(f"<cypher>{query}</cypher>", Usage(10, 5), latency_s=0.0, model=self.model_id)
        return Completion("no idea", Usage(10, 2), latency_s=0.0, model=self.model_id)


def make_run(root: Path, run_id: str, cache: ResponseCache, wrong_on: frozenset[str] = frozenset()) -> Path:
    """A finished two-cell run (feedback and single-pass, 3 questions) under `root`/results, figures under `root`/figures."""
    from t2c_lib.datasets import load_dataset

    params = params_from_dict(
        {"run_id": run_id, "limit": 3, "test_suite_copies": 0, "strategies": ["feedback", "single-pass"]}
        | {"prompt_types": ["Zero-Shot"], "schema_formats": ["full_schema"]}
    )
    dataset = load_dataset(params.dataset)
    gold = {q.question: q.cypher for q in dataset.questions}
    wrong = frozenset(q.question for q in dataset.questions if q.id in wrong_on)
    stand_in = GoldOrBrokenStandIn(gold, wrong)
    model = CachedModel(stand_in, cache)
    results, figures = root / "results", root / "figures"
    for strategy in ("feedback", "single-pass"):
        infer(params, "Zero-Shot", "full_schema", strategy, model=model, results_dir=results, progress=False)
        evaluate(params, "Zero-Shot", "full_schema", strategy, results_dir=results)
    analyze(params, results_dir=results, figures_dir=figures / run_id)
    return results / run_id


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run `pub` and the cache it filled (built once: the runs take seconds)."""
    root = tmp_path_factory.mktemp("pub")
    cache = ResponseCache(root / "cache.sqlite")
    make_run(root, "pub", cache)
    return root, cache


def tree(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_publishing_twice_writes_the_same_bytes_and_every_reply_the_run_used(finished, tmp_path):
    root, cache = finished
    first = publish_run("pub", cache, root / "results", root / "figures")
    published = root / "results" / "published" / "pub"
    before = tree(published)
    second = publish_run("pub", cache, root / "results", root / "figures")
    assert tree(published) == before and first.bytes == second.bytes
    names = set(before)
    for must in (
        "replies.jsonl.gz",
        "published.json",
        "manifest.json",
        "feedback/Zero-Shot_Full/attempts.jsonl.gz",
        "feedback/Zero-Shot_Full/questions.jsonl",
        "feedback/Zero-Shot_Full/metrics.csv",
        "single-pass/Zero-Shot_Full/manifest.json",
    ):
        assert must in names, must
    assert any(n.startswith("analysis/") and n.endswith(".tex") for n in names)
    assert any(n.startswith("analysis/") and n.endswith(".csv") for n in names)
    assert any(n.startswith("figures/") and n.endswith(".txt") for n in names)  # captions beside the figures
    assert not any(n.startswith("notebooks/") or "/." in f"/{n}" for n in names)
    raw = (published / "replies.jsonl.gz").read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip mtime 0
    replies = read_replies(published / "replies.jsonl.gz")
    # every model reply of the run has its row, keyed like the cache: the published rows are the cache's rows
    attempts = [
        json.loads(line)
        for cell in ("feedback", "single-pass")
        for line in (root / "results/pub" / cell / "Zero-Shot_Full/attempts.jsonl").read_text().splitlines()
    ]
    assert {r.row.text for r in replies} == {a["raw_response"] for a in attempts}
    # the attempt logs are published gzipped (mtime 0), their content the run's log byte for byte
    for cell in ("feedback", "single-pass"):
        packed = (published / cell / "Zero-Shot_Full/attempts.jsonl.gz").read_bytes()
        assert packed[4:8] == b"\0\0\0\0" and "attempts.jsonl" not in names
        log = root / "results/pub" / cell / "Zero-Shot_Full/attempts.jsonl"
        assert gzip.decompress(packed) == log.read_bytes() and len(packed) < log.stat().st_size
    assert all(cache.get(r.row.key).text == r.row.text for r in replies)
    assert {(r.model_id, r.model_sha256, r.build) for r in replies} == {
        ("local/scripted-stand-in", SHA, build_fingerprint())
    }
    assert [r.row.key for r in replies] == sorted(r.row.key for r in replies)
    index = json.loads((published / "published.json").read_text())
    assert index["replies"] == len(replies) and index["files"]["replies.jsonl.gz"]["bytes"] == len(raw)


def test_a_run_whose_replies_left_the_cache_is_not_published(finished, tmp_path):
    root, _ = finished
    empty = ResponseCache(tmp_path / "empty.sqlite")
    before = tree(root / "results" / "published") if (root / "results" / "published").exists() else {}
    with pytest.raises(PublishError, match="not in the response cache"):
        publish_run("pub", empty, root / "results", root / "figures")
    after = tree(root / "results" / "published") if (root / "results" / "published").exists() else {}
    assert after == before


def test_the_size_cap_refuses_and_changes_nothing(finished):
    root, cache = finished
    publish_run("pub", cache, root / "results", root / "figures")
    published = root / "results" / "published"
    before = tree(published)
    with pytest.raises(PublishError, match="over the 0 MB cap; nothing was written"):
        publish_run("pub", cache, root / "results", root / "figures", cap_bytes=1000)
    assert tree(published) == before
    assert sorted(p.name for p in published.iterdir()) == ["pub"]  # no half-written folder left beside it


def test_seeding_adds_exactly_this_builds_rows_and_another_builds_row_is_never_served(finished, tmp_path):
    root, cache = finished
    publish_run("pub", cache, root / "results", root / "figures")
    published = read_published_replies("pub", root / "results")
    # the same replies as another build would key them: a packaged model's fingerprint names its build
    other = GoldOrBrokenStandIn({}, build=OTHER_BUILD)
    other_cache = ResponseCache(tmp_path / "other.sqlite")
    from t2c_lib.llm.cache import CacheRow, cache_key

    moved = []
    for reply in published:
        request = dict(reply.row.request, fingerprint=other.fingerprint)
        moved.append(CacheRow(cache_key(request), reply.row.model, "OTHER " + reply.row.text, 1, 1, 0.0, request))
    other_cache.put_rows(moved)
    from t2c_lib.publish.published import write_replies

    mixed_path = tmp_path / "mixed.jsonl.gz"
    write_replies(mixed_path, [r.row for r in published] + moved)
    mixed = read_replies(mixed_path)

    fresh = ResponseCache(tmp_path / "fresh.sqlite")
    report = seed_cache(fresh, mixed, build_fingerprint())
    assert (report.published, report.matching, report.added, report.other_build) == (
        2 * len(published),
        len(published),
        len(published),
        len(published),
    )
    assert {r.key for r in fresh.rows()} == {r.row.key for r in published}
    # a model of this build is served the published replies; one of the other build finds none of its rows
    this = CachedModel(GoldOrBrokenStandIn({}), fresh)
    that = CachedModel(other, fresh)
    request = published[0].row.request
    messages = [Message(role, content) for role, content in request["messages"]]
    kwargs = {"temperature": request["temperature"], "max_tokens": request["max_tokens"], "stop": request["stop"]}
    assert this.complete(messages, **kwargs).text == published[0].row.text and this.hits == 1
    assert that.complete(messages, **kwargs).text == "no idea" and that.hits == 0 and that.misses == 1
    # seeding again adds nothing
    assert seed_cache(fresh, mixed, build_fingerprint()).added == 0


@pytest.mark.slow  # two more runs (about 9 s)
def test_a_rerun_from_the_published_replies_calls_no_model_and_the_replication_report(finished, tmp_path):
    root, cache = finished
    publish_run("pub", cache, root / "results", root / "figures")
    published_dir = root / "results" / "published" / "pub"
    replies = read_published_replies("pub", root / "results")
    # reproduce: another machine, its cache seeded from the published replies only
    other = tmp_path / "machine"
    seeded = ResponseCache(other / "cache.sqlite")
    seed_cache(seeded, replies, build_fingerprint())
    shutil.copytree(published_dir, other / "results" / "published" / "pub")
    run_dir = make_run(other, "pub", seeded)
    assert reproduced_line(run_dir, replies) == f"reproduced from {len(replies)} published replies; 0 model calls"
    # checked file by file: the logs differ only in the rerun's clock and `cached`, and are said to
    check = check_rerun("pub", other / "results", other / "figures")
    assert not (check.differ or check.missing or check.extra) and check.identical
    assert check.run_time_only and all(name.endswith((".jsonl", ".jsonl.gz")) for name in check.run_time_only)
    assert "cached" in set().union(*check.run_time_only.values())
    # every table, figure, metric and manifest is the published one byte for byte; the logs differ only in
    # what they say of this rerun (every attempt `cached`, clock times)
    publish_run("pub", seeded, other / "results", other / "figures")
    again, before = tree(other / "results" / "published" / "pub"), tree(published_dir)
    assert set(again) == set(before)
    differ = sorted(name for name in before if again[name] != before[name])
    assert all(name.endswith((".jsonl", ".jsonl.gz")) or name == "published.json" for name in differ), differ
    assert any(name.startswith("figures/") for name in before) and "replies.jsonl.gz" not in differ
    # replicate: a fresh cache, a model that now gets the first question wrong
    first = sorted(
        json.loads(line)["question_id"] for line in (run_dir / "single-pass/Zero-Shot_Full/questions.jsonl").open()
    )[0]
    fresh_dir = make_run(tmp_path / "fresh", "pub-fresh", ResponseCache(tmp_path / "fresh.sqlite"), frozenset({first}))
    assert "model calls" in reproduced_line(fresh_dir, replies) and not reproduced_line(fresh_dir, replies).endswith(
        " 0 model calls"
    )
    report = replication_report(published_dir, fresh_dir)
    rows = {row["strategy"]: row for _, row in report.table.iterrows()}
    assert set(rows) == {"feedback", "single-pass"}
    sp = rows["single-pass"]
    assert sp["n"] == 3 and sp["flipped"] == first and sp["published_k"] == sp["fresh_k"] + 1
    assert sp["replies_paired"] == 3 and sp["replies_identical"] == 2
    assert 0 < sp["mcnemar_p"] <= 1
    paths = report.write()
    text = paths[0].read_text()
    assert f"| single-pass | Zero-Shot_Full | {sp['published_k']}/3 | {sp['fresh_k']}/3 | {first} |" in text
    assert "Replies identical in all:" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not gzip at all", "not a readable gzip file"),
        (gzip.compress(b'{"key": "x"}\n', mtime=0), "field 'model' missing"),
        (gzip.compress(b"[1, 2]\n", mtime=0), "not a JSON object"),
        (gzip.compress(b"{half a line\n", mtime=0), "not a JSON line"),
        (gzip.compress(b"x" * (9 * 1024 * 1024) + b"\n", mtime=0), "longer than"),
    ],
)
def test_a_hostile_replies_file_is_one_clear_error_and_seeds_nothing(finished, tmp_path, monkeypatch, content, message):
    root, cache = finished
    publish_run("pub", cache, root / "results", root / "figures")
    good = gzip.decompress((root / "results/published/pub/replies.jsonl.gz").read_bytes())
    results = tmp_path / "results"
    path = results / "published" / "evil" / "replies.jsonl.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(content if content[:2] != b"\x1f\x8b" else gzip.compress(good + gzip.decompress(content), mtime=0))
    with pytest.raises(PublishedRepliesError, match=message):
        read_published_replies("evil", results)
    # through the command `make all` runs: one line, exit 1, and the good rows before the bad one are not seeded
    monkeypatch.setattr("t2c_lib.config.RESULTS_DIR", results)
    target = tmp_path / "cache.sqlite"
    out = CliRunner().invoke(main, ["study", "seed", "--run-id", "evil", "--cache", str(target)])
    assert out.exit_code == 1 and out.output.startswith("t2c: error: ") and out.output.count("\n") == 1, out.output
    assert message.split()[0] in out.output
    assert len(ResponseCache(target)) == 0


def test_a_forged_row_whose_key_is_not_its_requests_hash_is_refused_before_any_row_is_seeded(finished, tmp_path):
    root, cache = finished
    publish_run("pub", cache, root / "results", root / "figures")
    good = (root / "results/published/pub/replies.jsonl.gz").read_bytes()
    lines = gzip.decompress(good).decode().splitlines()
    forged = json.loads(lines[-1])
    forged["request"]["temperature"] = 0.5  # the key no longer names this request
    path = tmp_path / "results/published/forged/replies.jsonl.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(("\n".join([*lines[:-1], json.dumps(forged)]) + "\n").encode(), mtime=0))
    with pytest.raises(PublishedRepliesError, match=f"line {len(lines)}: key .* is not the hash of its request"):
        read_published_replies("forged", tmp_path / "results")


@pytest.mark.parametrize("run_id", ["../pub", "/etc", "a/b", "..", "pub\n"])
def test_a_path_like_run_id_is_refused(finished, run_id):
    root, cache = finished
    with pytest.raises(ParamsError, match="run_id="):
        publish_run(run_id, cache, root / "results", root / "figures")
    with pytest.raises(ParamsError, match="run_id="):
        read_published_replies(run_id, root / "results")


def test_cli_publish_and_seed_say_what_they_did(finished, tmp_path, monkeypatch):
    root, cache = finished
    monkeypatch.setattr("t2c_lib.config.RESULTS_DIR", root / "results")
    monkeypatch.setattr("t2c_lib.config.FIGURES_DIR", root / "figures")
    runner = CliRunner()
    out = runner.invoke(main, ["publish", "--run-id", "pub", "--cache", str(cache.path)])
    assert out.exit_code == 0, out.output
    assert "published run pub:" in out.output and "MB cap" in out.output
    out = runner.invoke(main, ["study", "seed", "--run-id", "pub", "--cache", str(tmp_path / "c.sqlite")])
    assert out.exit_code == 0 and "match this machine's build" in out.output, out.output
    out = runner.invoke(main, ["study", "seed", "--run-id", "../x", "--cache", str(tmp_path / "c.sqlite")])
    assert out.exit_code == 1 and out.output.startswith("t2c: error: run_id=")
    out = runner.invoke(main, ["study", "seed", "--run-id", "nothing", "--cache", str(tmp_path / "other.sqlite")])
    assert out.exit_code == 0 and "is not published" in out.output, out.output
    assert (
        "seeding from every published run's replies" in out.output
        and "all published runs: 3 of 3 published replies match" in out.output
    )
    seeded = ResponseCache(tmp_path / "other.sqlite")
    assert seeded.texts(r.row.key for r in read_published_replies("pub", root / "results"))  # pub's replies serve it
    monkeypatch.setattr("t2c_lib.config.RESULTS_DIR", tmp_path / "empty")
    out = runner.invoke(main, ["study", "seed", "--run-id", "nothing", "--cache", str(tmp_path / "c.sqlite")])
    assert out.exit_code == 0 and "every reply comes from the model" in out.output, out.output


def test_the_forecast_before_the_first_notebook(finished, tmp_path):
    """Cells of this build and model come from the published replies; FRESH=1 or another build prices them from the
    published run's distinct requests (single-pass shares feedback's first requests: counted once)."""
    from t2c_lib.publish.forecast import forecast

    root, cache = finished
    publish_run("pub", cache, root / "results", root / "figures")
    published = root / "results" / "published" / "pub"
    params = params_from_dict(
        {"run_id": "pub", "limit": 3, "test_suite_copies": 0, "strategies": ["feedback", "single-pass"]}
        | {"prompt_types": ["Zero-Shot"], "schema_formats": ["full_schema"]}
    )
    here = forecast(params, published, build_fingerprint())
    assert (here.cells, here.from_published, here.calls) == (2, 2, 0)
    assert here.line() == "[forecast pub] 2 cells, all answered from the published replies: no model call"
    attempts = gzip.decompress((published / "feedback/Zero-Shot_Full/attempts.jsonl.gz").read_bytes()).splitlines()
    for other in (
        forecast(params, published, build_fingerprint(), fresh=True),
        forecast(params, published, OTHER_BUILD),
    ):
        assert (other.from_published, other.calls, other.unpriced) == (0, len(attempts), 0)
        assert other.line().startswith(
            f"[forecast pub] 2 cells: 0 from the published replies, 2 ask the model: about {len(attempts)} model calls"
        )
    wider = params_from_dict(params.to_dict() | {"prompt_types": ["Zero-Shot", "CoT"]})
    more = forecast(wider, published, build_fingerprint())
    assert (more.cells, more.from_published, more.unpriced) == (4, 2, 2)
    assert "2 cell(s) the published run lacks" in more.line()
    none = forecast(params, tmp_path / "nothing", build_fingerprint())
    assert none.line() == (
        "[forecast pub] 2 cells, none published under this run id: replies come from the model, except for requests "
        "another published run holds (seeded above); an estimate follows the first evaluated cell"
    )
