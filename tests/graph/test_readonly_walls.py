"""Issue 12's bypasses as regression fixtures: every wall refuses them on its own, and nothing happens.

Each case of tests/fixtures/guard/bypasses.yaml goes (1) to the guard, (2) to the embedded
database with the guard skipped (wall 1 alone: one prepared statement, a read plan), and
(3) through the whole validator chain; then its consequence is checked on disk and in the
store. A last test sends hostile replies through a loopback OpenAI-compatible server into
`t2c ask`, and one bounds a runaway result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from t2c_lib.agent import ErrorType
from t2c_lib.graph.base import QueryError, ResultTooLarge, UnsafeQuery
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.validation import build_chain, make_context
from t2c_lib.validation.guard import check_read_only
from tests.helpers import FIXTURES, ROOT

FIXTURE = FIXTURES / "guard" / "bypasses.yaml"
CASES = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))["cases"]
SECRET_MARKER = "t2c-secret-line-4711"


@pytest.fixture()
def sandbox(tmp_path: Path) -> dict[str, Path]:
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET_MARKER}:x:0:0\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "ext.so").write_bytes(b"not an extension")
    return {"secret": secret, "out": out}


def _fill(query: str, sandbox: dict[str, Path]) -> str:
    return query.replace("{secret}", str(sandbox["secret"])).replace("{out}", str(sandbox["out"]))


def _untouched(sandbox: dict[str, Path]) -> None:
    assert sorted(p.name for p in sandbox["out"].iterdir()) == ["ext.so"], "a file was written"
    assert not (ROOT / "leak-relative.csv").exists(), "a file was written in the project root"


def test_fixture_covers_both_classes_and_every_consequence() -> None:
    assert len(CASES) >= 15
    assert {c["effect"] for c in CASES} == {"read", "write", "graph", "store"}
    assert {c["db"] for c in CASES} == {"several", "plan", "error"}
    assert any("\r" in c["query"] for c in CASES) and any("1LOAD" in c["query"] for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["title"] for c in CASES])
def test_the_guard_refuses_each_bypass(case: dict, sandbox) -> None:
    verdict = check_read_only(_fill(case["query"], sandbox))
    assert not verdict.ok and verdict.error_type is ErrorType.UNSAFE_QUERY, verdict.message


@pytest.mark.parametrize("case", CASES, ids=[c["title"] for c in CASES])
def test_the_database_wall_alone_refuses_each_bypass(case: dict, sandbox, kurikulum_store: LadybugStore) -> None:
    before = kurikulum_store.counts()
    query = _fill(case["query"], sandbox)
    with pytest.raises(UnsafeQuery, match="refused before the database"):  # the gate in front of every store query
        kurikulum_store.query(query, timeout_s=5)
    with pytest.raises(UnsafeQuery):  # the query process with the gate skipped: its word check refuses too
        kurikulum_store._worker().call(
            {"op": "run", "text": query, "max_rows": 100, "max_bytes": 1 << 20}, time.perf_counter(), 5.0
        )
    with pytest.raises(QueryError) as caught:  # gate, word check and session skipped: prepare and plan alone
        kurikulum_store._worker().call(
            {
                "op": "run",
                "text": query,
                "max_rows": 100,
                "max_bytes": 1 << 20,
                "word_check": False,
                "session_check": False,
            },
            time.perf_counter(),
            5.0,
        )
    if case["db"] in ("several", "plan"):
        assert isinstance(caught.value, UnsafeQuery), str(caught.value)
        # a text the database's tokens cannot split (a lone CR in a comment) is refused before it is prepared
        expected = ("more than one statement" if case["db"] == "several" else "not a read", "cannot split")
        assert any(e in str(caught.value) for e in expected), str(caught.value)
    assert SECRET_MARKER not in str(caught.value)
    reading = kurikulum_store.inspect(query)
    assert not reading.is_one_read or reading.error
    _untouched(sandbox)
    assert kurikulum_store.counts() == before
    assert kurikulum_store.query("MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks").rows == [[3]]


def test_the_chain_stops_each_bypass_at_the_guard(kurikulum_store: LadybugStore, sandbox) -> None:
    chain = build_chain(kurikulum_store)
    for case in CASES:
        ctx = make_context(kurikulum_store)
        verdicts = []
        for step in chain:
            verdict = step.validate(_fill(case["query"], sandbox), ctx)
            verdicts.append(verdict)
            if not verdict.ok:
                break
        assert [v.validator for v in verdicts] == ["guard"], case["title"]
        assert verdicts[-1].error_type is ErrorType.UNSAFE_QUERY
    _untouched(sandbox)


def test_the_store_still_opens_after_every_bypass(kurikulum, sandbox, tmp_path) -> None:
    """CHECKPOINT once left the store unopenable for every later command: a fresh store must open."""
    store = LadybugStore(kurikulum, root=tmp_path / "lb")
    for case in CASES:
        try:
            store.query(_fill(case["query"], sandbox))
        except QueryError:
            pass
    store.close()
    again = LadybugStore(kurikulum, root=tmp_path / "lb", auto_load=False)
    assert again.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]
    again.close()


def test_every_gold_query_and_example_passes_both_walls(kurikulum, kurikulum_store) -> None:
    for item in kurikulum.questions:
        assert check_read_only(item.cypher).ok, item.cypher
        kurikulum_store.query(item.cypher)
    for example in kurikulum.examples:
        assert check_read_only(example.cypher).ok, example.cypher
        kurikulum_store.explain(example.cypher)


def test_a_runaway_result_is_refused_before_a_row_is_fetched(kurikulum_store) -> None:
    started = time.perf_counter()
    with pytest.raises(ResultTooLarge, match=r"53,582,633 rows, more than the limit of 10,000"):
        kurikulum_store.query("MATCH (a:topic),(b:topic),(c:topic) RETURN a.nama, b.nama, c.nama", timeout_s=2)
    assert time.perf_counter() - started < 10


def test_a_runaway_result_fails_the_execution_step_with_feedback(kurikulum_store) -> None:
    ctx = make_context(kurikulum_store)
    execution = [step for step in build_chain(kurikulum_store) if step.name == "execution"][0]
    verdict = execution.validate("MATCH (a:topic),(b:topic) RETURN a.nama, b.nama", ctx)
    assert not verdict.ok and verdict.error_type is ErrorType.RESOURCE_LIMIT
    assert "more than the limit" in verdict.message and verdict.details["kind"] == "too_large"


def test_the_row_cap_is_a_setting(kurikulum, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("T2C_MAX_ROWS", "5")
    store = LadybugStore(kurikulum, root=tmp_path / "cap")
    assert store.max_rows == 5
    assert len(store.query("MATCH (m:MK) RETURN m.nama LIMIT 5").rows) == 5
    with pytest.raises(ResultTooLarge):
        store.query("MATCH (m:MK) RETURN m.nama LIMIT 6")
    store.close()
    monkeypatch.setenv("T2C_MAX_ROWS", "many")
    with pytest.raises(ValueError, match="T2C_MAX_ROWS must be a positive integer"):
        LadybugStore(kurikulum, root=tmp_path / "cap")


@pytest.mark.slow
def test_hostile_model_replies_through_t2c_ask_run_nothing(tmp_path, sandbox) -> None:
    """A loopback OpenAI-compatible server answers with hostile Cypher: each attempt is UNSAFE_QUERY, the loop goes on."""
    from tests.helpers.fault_server import FaultServer, ok

    hostile = [_fill(c["query"], sandbox) for c in CASES if c["effect"] in ("read", "write")][:3]
    env = {**os.environ, "T2C_CACHE_DIR": str(tmp_path / "cache"), "T2C_LLM_BASE_URL": "", "T2C_MODEL": ""}
    with FaultServer() as server:
        server.queue(*(ok(f"<cypher>{q}</cypher>") for q in hostile))
        env.update({"T2C_LLM_BASE_URL": server.base_url, "T2C_LLM_API_KEY": "test-key"})
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "t2c_lib.cli",
                "ask",
                "--json",
                "--model",
                "loopback-model",
                "--no-cache",
                "--max-iterations",
                "3",
                "Berapa SKS mata kuliah 'Basis Data'?",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=600,
        )
        requests = list(server.requests)
    assert done.returncode == 1, done.stderr
    state = json.loads(done.stdout)
    assert [a["error_type"] for a in state["attempts"]] == ["UNSAFE_QUERY"] * 3
    assert len(requests) == 3  # the loop went on after each refusal, with feedback
    assert SECRET_MARKER not in done.stdout + done.stderr
    _untouched(sandbox)


def test_every_movies_gold_query_and_example_passes_the_guard() -> None:
    from t2c_lib.datasets import load_dataset

    movies = load_dataset("movies")
    refused = [q.id for q in movies.questions if not check_read_only(q.cypher).ok]
    refused += [e.cypher for e in movies.examples if not check_read_only(e.cypher).ok]
    assert refused == []
