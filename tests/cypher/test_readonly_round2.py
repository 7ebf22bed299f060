"""Issue 29's classes: every path through one gate, linear rewrites, limits before parsing, a watched query
process, and messages that carry nothing from outside the graph.

Each case of tests/fixtures/guard/hostile_round2.yaml is refused by the gate, bounded while it runs, or
(for the false refusals it fixes) answered; every case ends within 20 s, leaves no file behind, changes
nothing in the store, and no message holds a byte of a local file or of an environment variable. Then the
other paths: `t2c db query` under a 4 GB address-space limit, a hostile predictions file through
`t2c score`, and a hostile attempt that `t2c evaluate` scores from its record without running it.
"""

from __future__ import annotations

import csv
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from t2c_lib.agent import ErrorType
from t2c_lib.cypher.dialect import normalise
from t2c_lib.cypher.gate import Refusal, gate_check
from t2c_lib.graph.base import QueryError, QueryTimeout, ResourceLimit, ResultTooLarge
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.graph.messages import safe_message
from t2c_lib.validation.guard import check_read_only
from tests.helpers import FIXTURES, ROOT

pytestmark = pytest.mark.slow  # hostile queries at their time and memory limits, the t2c command

CASES = yaml.safe_load((FIXTURES / "guard" / "hostile_round2.yaml").read_text(encoding="utf-8"))["cases"]
SECRET_MARKER = "t2c-secret-line-4711"
ENV_SECRET = "t2c-env-secret-0815-do-not-leak"
BOUND_S = 20.0


@pytest.fixture()
def sandbox(tmp_path: Path) -> dict[str, Path]:
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET_MARKER}:x:0:0\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "ext.so").write_bytes(b"not an extension")
    (out / "schema.cypher").write_text(f"// {SECRET_MARKER}\n", encoding="utf-8")
    return {"secret": secret, "out": out}


def text_of(case: dict, sandbox: dict[str, Path]) -> str:
    if "repeat" in case:
        prefix, unit, n, middle, closer, m = case["repeat"]
        return prefix + unit * n + middle + closer * m
    return (
        case["query"]
        .replace("{secret}", str(sandbox["secret"]))
        .replace("{out}", str(sandbox["out"]))
        .replace("{environ}", "/proc/self/environ")
    )


def untouched(sandbox: dict[str, Path]) -> None:
    assert sorted(p.name for p in sandbox["out"].iterdir()) == ["ext.so", "schema.cypher"], "a file was written"


@pytest.fixture()
def secret_env(monkeypatch):
    monkeypatch.setenv("T2C_TEST_API_KEY", ENV_SECRET)
    return ENV_SECRET


def test_fixture_covers_every_class() -> None:
    assert {c["expect"] for c in CASES} == {"gate", "bounded", "read"}
    assert len(CASES) >= 25


@pytest.mark.parametrize("case", CASES, ids=[c["title"] for c in CASES])
def test_each_case_is_refused_bounded_or_answered(case, sandbox, secret_env, kurikulum_store: LadybugStore) -> None:
    before = kurikulum_store.counts()
    text = text_of(case, sandbox)
    started = time.perf_counter()
    outcome, message = "read", ""
    try:
        kurikulum_store.query(text, timeout_s=2)
    except (QueryError, QueryTimeout) as exc:
        message = str(exc)
        outcome = "gate" if message.startswith("refused before the database") else "bounded"
        if outcome == "bounded":
            assert isinstance(exc, (QueryTimeout, ResourceLimit, ResultTooLarge)), f"{type(exc).__name__}: {message}"
    elapsed = time.perf_counter() - started
    assert outcome == case["expect"], message
    assert elapsed < BOUND_S
    assert SECRET_MARKER not in message and secret_env not in message
    untouched(sandbox)
    assert kurikulum_store.counts() == before


def test_the_guard_step_and_the_store_gate_agree(sandbox) -> None:
    for case in CASES:
        text = text_of(case, sandbox)
        verdict = gate_check(text)
        assert check_read_only(text).ok == verdict.ok
        assert verdict.ok == (case["expect"] != "gate"), case["title"]


def test_rewrites_grow_linearly_and_are_judged_again() -> None:
    for depth in (5, 10, 20):
        text = "RETURN " + "substring(" * depth + "'abc'" + ", 0)" * depth
        out = normalise(text).query
        assert len(out) <= len(text) + 30 * depth  # a constant per call, never a copy of an argument
    verdict = gate_check("MATCH (m:MK) RETURN substring(m.nama, 0, 3), type(m)")
    assert verdict.ok and verdict.rewrites == ("type_function", "substring_base")
    assert "(0) + 1" in verdict.query


def test_limits_refuse_before_parsing_with_a_resource_error() -> None:
    deep = gate_check("RETURN " + "(" * 40 + "1" + ")" * 40)
    assert deep.refusal is Refusal.TOO_LARGE and "nests" in deep.message
    assert check_read_only("RETURN " + "(" * 40 + "1" + ")" * 40).error_type is ErrorType.RESOURCE_LIMIT
    long = gate_check("RETURN '" + "a" * 9000 + "'")
    assert long.refusal is Refusal.TOO_LARGE and "characters" in long.message
    assert gate_check("RETURN " + "(" * 30 + "1" + ")" * 30).ok


def test_a_killed_query_process_is_replaced(kurikulum_store: LadybugStore) -> None:
    with pytest.raises(QueryTimeout, match=r"time limit 1 s"):
        kurikulum_store.query("RETURN size(repeat('ab', 150000000))", timeout_s=1)
    assert kurikulum_store.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]


def test_the_memory_budget_stops_a_query_and_says_so(kurikulum, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("T2C_QUERY_MEMORY_MB", "300")
    store = LadybugStore(kurikulum, root=tmp_path / "mem")
    try:
        with pytest.raises((ResourceLimit, QueryTimeout)) as caught:
            store.query("RETURN size(repeat('ab', 500000000))", timeout_s=30)
        assert isinstance(caught.value, ResourceLimit), str(caught.value)
        assert store.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]
    finally:
        store.close()


def test_messages_never_carry_environment_values(monkeypatch) -> None:
    monkeypatch.setenv("T2C_TEST_API_KEY", ENV_SECRET)
    assert ENV_SECRET not in safe_message(f"Binder exception: column T2C_TEST_API_KEY={ENV_SECRET} not found")
    expected = "Parser exception: Invalid input <RETURN>: expected " + ", ".join(f"TOKEN_{i}" for i in range(100))
    assert len(safe_message(expected)) < 400 and "shortened" in safe_message(expected)


def _cli(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    def limit_memory() -> None:  # the 4 GB watchdog, as an address-space limit on the CLI and its children
        resource.setrlimit(resource.RLIMIT_AS, (4 * 1024**3, 4 * 1024**3))

    return subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
        preexec_fn=limit_memory,
    )


@pytest.mark.slow
def test_t2c_db_query_ends_by_itself_under_a_4gb_limit(sandbox, tmp_path) -> None:
    env = {**os.environ, "T2C_TEST_API_KEY": ENV_SECRET}
    picked = [c for c in CASES if c["expect"] == "bounded"] + [c for c in CASES if c["expect"] == "gate"][:3]
    for case in picked:
        started = time.perf_counter()
        done = _cli(["db", "query", "--dataset", "kurikulum", "--timeout", "2", text_of(case, sandbox)], env)
        assert time.perf_counter() - started < BOUND_S + 10, case["title"]  # + the CLI's start
        assert done.returncode in (0, 1), (case["title"], done.returncode, done.stderr[-500:])
        assert SECRET_MARKER not in done.stdout + done.stderr and ENV_SECRET not in done.stdout + done.stderr
    untouched(sandbox)


def test_a_hostile_predictions_file_leaks_nothing(sandbox, tmp_path) -> None:
    predictions = tmp_path / "predictions.csv"
    hostile = [text_of(c, sandbox) for c in CASES if c["expect"] == "gate" and "repeat" not in c][:6]
    with predictions.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["gold", "predicted"])
        for query in hostile:
            writer.writerow(["MATCH (m:MK) RETURN count(m)", query])
    out = tmp_path / "scores.csv"
    env = {**os.environ, "T2C_TEST_API_KEY": ENV_SECRET}
    done = _cli(["score", "--dataset", "kurikulum", "--output", str(out), str(predictions)], env, timeout=300)
    assert done.returncode in (0, 1), done.stderr[-800:]
    written = out.read_text(encoding="utf-8") if out.exists() else ""
    for text in (done.stdout, done.stderr, written):
        assert SECRET_MARKER not in text and ENV_SECRET not in text
    untouched(sandbox)


def test_evaluate_scores_a_refused_attempt_from_its_record(
    tiny_dataset, tiny_store, tmp_path, sandbox, monkeypatch
) -> None:
    """A hostile reply the guard refused during the run is never executed by the evaluation."""
    from t2c_lib.agent import Attempt
    from t2c_lib.runs.layout import Cell
    from t2c_lib.runs.runlog import AttemptLog
    from t2c_lib.study.evaluation import evaluate_cell

    hostile = f"LOAD FROM '{sandbox['secret']}' (file_format='csv', header=false) RETURN *"
    verdict = check_read_only(hostile)
    assert verdict.error_type is ErrorType.UNSAFE_QUERY
    cell = Cell("feedback", "Zero-Shot", "full_schema")
    log = AttemptLog(cell.directory(tmp_path / "run"))
    for item in tiny_dataset.questions:
        log.append_attempt(
            Attempt(
                question_id=item.id,
                iteration=1,
                prompt_hash="p",
                raw_response=hostile,
                query=hostile,
                validations=[verdict],
                ok=False,
                error_type=ErrorType.UNSAFE_QUERY,
                feedback=None,
                prompt_tokens=10,
                completion_tokens=10,
                mode="feedback",
                kind="generate",
            )
        )
        log.append_question({"question_id": item.id, "status": "FAILED", "llm_calls": 1})
    sent: list[str] = []
    real_query = tiny_store.query

    def recording_query(cypher: str, timeout_s: float = 10.0):
        sent.append(cypher)
        return real_query(cypher, timeout_s=timeout_s)

    monkeypatch.setattr(tiny_store, "query", recording_query)
    evaluate_cell(cell, tmp_path / "run", tiny_dataset.questions, tiny_dataset, tiny_store, "kg-axel", 3, 10.0)
    assert hostile not in sent and sent, "the evaluation ran the refused query (or nothing at all)"
    metrics = (cell.directory(tmp_path / "run") / "metrics.csv").read_text(encoding="utf-8")
    assert "not executed" in metrics and SECRET_MARKER not in metrics


@pytest.mark.slow
def test_hostile_model_replies_through_t2c_run_and_evaluate_leak_nothing(sandbox, tmp_path) -> None:
    """Replies that read files, smuggle code past the rewriter or blow up the parser: refused in the run,
    never executed by the evaluation, and no output holds a byte of the file or of an environment secret."""
    from tests.helpers.fault_server import FaultServer, ok

    hostile = [text_of(c, sandbox) for c in CASES if c["expect"] == "gate"]
    params = tmp_path / "hostile.yaml"
    params.write_text(
        "run_id: hostile\ndataset: kurikulum\nstore: ladybug\nmodel: loopback-model\nprompt_types: [Zero-Shot]\n"
        "schema_formats: [full_schema]\nstrategies: [feedback]\nmax_iterations: 3\nlimit: 3\nmax_tokens: 64\n"
        "weights: kg-axel\nscoring: t2c\n",
        encoding="utf-8",
    )
    results = tmp_path / "results"
    env = {
        **os.environ,
        "T2C_CACHE_DIR": str(tmp_path / "cache"),
        "T2C_RESULTS_DIR": str(results),
        "T2C_FIGURES_DIR": str(tmp_path / "figures"),
        "T2C_TEST_API_KEY": ENV_SECRET,
        "T2C_MODEL": "",
    }
    with FaultServer() as server:
        server.queue(*(ok(f"<cypher>{hostile[i % len(hostile)]}</cypher>") for i in range(9)))
        env.update({"T2C_LLM_BASE_URL": server.base_url, "T2C_LLM_API_KEY": "test-key"})
        run = _cli(["run", "--params", str(params)], env, timeout=600)
    assert run.returncode in (0, 1), run.stderr[-800:]
    evaluated = _cli(["evaluate", "--params", str(params)], env, timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr[-800:]
    written = [p for p in results.rglob("*") if p.is_file()]
    assert any(p.name == "metrics.csv" for p in written)
    for text in [run.stdout, run.stderr, evaluated.stdout, evaluated.stderr] + [
        p.read_text(errors="replace") for p in written
    ]:
        assert SECRET_MARKER not in text and ENV_SECRET not in text and "test-key" not in text
    untouched(sandbox)
