"""Seeding admits only the published replies the run's own attempt logs asked for (issue 55, item 4).

A published run is hostile input. `t2c study seed` once put every row of its `replies.jsonl.gz`
into the response cache, so a row keyed to a request the run never made (one of the user's own
`t2c ask`) answered that request with no model call. Now a row is admitted only when an attempt of
a cell the run's `manifest.json` names made its request (`publish.publish.own_replies`), and the
seed line counts the rest as refused. The committed published runs still seed every reply.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from t2c_lib.cli import main
from t2c_lib.llm.base import Message
from t2c_lib.llm.cache import CacheRow, ResponseCache, cache_key, request_payload
from t2c_lib.prompts.builder import prompt_hash
from t2c_lib.publish.publish import INDEX_FILE, own_replies, published_root, read_published_replies
from t2c_lib.publish.published import REPLIES_FILE, write_replies
from tests.helpers import ROOT

PUBLISHED = ROOT / "results" / "published"
ASK = [Message("system", "You write Cypher."), Message("user", "Mata kuliah apa saja yang wajib di semester 3?")]
"""A request of the user's own `t2c ask`: no attempt of the published run made it."""
ENDPOINT_MODEL = "qwen2.5-coder:1.5b"
"""An endpoint's model (no llama.cpp build in its key): this machine's build never filters its rows out."""


def _ask_request() -> dict:
    return request_payload(ENDPOINT_MODEL, ASK, 0.0, 512, [], None, "")


def _foreign_row() -> CacheRow:
    request = _ask_request()
    return CacheRow(cache_key(request), ENDPOINT_MODEL, "MATCH (n) DETACH DELETE n", 1, 1, 0.1, request)


@pytest.fixture
def poisoned(tmp_path: Path) -> Path:
    """results/ holding a copy of the published `quick` run whose replies file carries one foreign reply."""
    results = tmp_path / "results"
    run = published_root(results) / "quick"
    shutil.copytree(PUBLISHED / "quick", run)
    rows = [reply.row for reply in read_published_replies("quick", results)]
    write_replies(run / REPLIES_FILE, [*rows, _foreign_row()])
    return results


def test_a_reply_no_attempt_of_the_run_asked_for_is_refused(poisoned: Path) -> None:
    own = own_replies("quick", poisoned)
    published = {reply.row.key for reply in read_published_replies("quick", PUBLISHED.parent)}
    assert {reply.row.key for reply in own.admitted} == published and own.refused == 1


def test_an_attempt_in_a_cell_the_manifest_does_not_name_admits_nothing(poisoned: Path) -> None:
    """A cell folder added beside the run's own, whose attempt asks the foreign request, is not the run's."""
    run = published_root(poisoned) / "quick"
    cell = run / "feedback" / "Zero-Shot_Full"
    cell.mkdir()
    manifest = json.loads((run / "feedback/CoT_Nodes+Paths/manifest.json").read_text(encoding="utf-8"))
    manifest.update(model_id=ENDPOINT_MODEL, llama_build=None, configuration="Zero-Shot_Full")
    (cell / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    attempt = {"kind": "generate", "prompt_hash": prompt_hash(ASK), "raw_response": _foreign_row().text}
    attempt.update(temperature=0.0, seed=None, question_id="q", iteration=1, cached=False)
    (cell / "attempts.jsonl.gz").write_bytes(gzip.compress((json.dumps(attempt) + "\n").encode(), mtime=0))
    assert own_replies("quick", poisoned).refused == 1


def test_seeding_refuses_it_and_the_users_own_request_still_misses(poisoned, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("t2c_lib.config.RESULTS_DIR", poisoned)
    runner = CliRunner()
    for run_id in ("quick", "not-published"):  # its own replies, or every published run's
        target = tmp_path / f"{run_id}.sqlite"
        out = runner.invoke(main, ["study", "seed", "--run-id", run_id, "--cache", str(target)])
        assert out.exit_code == 0, out.output
        assert "1 refused: not a request of the run's own attempt logs" in out.output, out.output
        cache = ResponseCache(target)
        assert cache.get(cache_key(_ask_request())) is None  # what `t2c ask` looks up: a miss, the model is asked
        assert _foreign_row().key not in {row.key for row in cache.rows()}


@pytest.mark.parametrize(
    "run",
    [
        "quick",
        *[
            pytest.param(p.name, marks=pytest.mark.slow)
            for p in sorted(PUBLISHED.iterdir())
            if p.is_dir() and p.name != "quick"
        ],
    ],
)
def test_every_committed_published_reply_is_the_runs_own(run: str) -> None:
    """`make all` answers from the published replies with 0 model calls: seeding must admit every one of them."""
    own = own_replies(run, PUBLISHED.parent)
    index = json.loads((PUBLISHED / run / INDEX_FILE).read_text(encoding="utf-8"))
    assert own.refused == 0 and len(own.admitted) == index["replies"]
