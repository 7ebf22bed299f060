"""`t2c run`'s endpoint path with many workers: same results as one worker, and `requests_per_minute` holds.

A real loopback HTTP endpoint (`tests/helpers/replay_server.py`) answers by the recording rule:
the dataset's gold query, after fixed wrong ones for some (configuration, question) pairs, so
feedback cells iterate. The grid runs through `run_grid` (several cells at once with shared
slots and one rate limiter when `workers` > 1), the embedded store and the real validator
chain. The speed of this path is measured in `benchmarks/endpoint_workers.py`, not here.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from t2c_lib import config
from t2c_lib.datasets import load_dataset
from t2c_lib.llm.base import LLMUnavailableError
from t2c_lib.llm.stack import GridStopped
from t2c_lib.runs.layout import expand_grid
from t2c_lib.study.grid import cells_at_once, run_grid
from t2c_lib.study.params import params_from_dict
from tests.helpers.fault_server import free_port
from tests.helpers.replay_server import GoldRule, Recording, RecordingRule, ReplayServer
from tests.helpers.run_results import differences, max_in_window, run_results

# runs grid cells against a local endpoint server, several at once: `make test` runs it, `make test-fast` stays under a minute
pytestmark = pytest.mark.slow

GRID = {
    "dataset": "kurikulum",
    "store": "ladybug",
    "model": "replayed",
    "prompt_types": ["Zero-Shot", "Few-Shot"],
    "schema_formats": ["only_paths"],
    "strategies": ["single-pass", "feedback"],
    "max_iterations": 3,
    "limit": 6,
}


@pytest.fixture(scope="module")
def rule():
    return GoldRule(load_dataset("kurikulum").questions)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One cache folder for the module: the store and gold screen are built once (each run has its own
    server port, so its model id and its response-cache keys are its own)."""
    return tmp_path_factory.mktemp("endpoint-cache")


def isolate(monkeypatch: pytest.MonkeyPatch, cache: Path, results: Path) -> Path:
    monkeypatch.setattr(config, "CACHE_DIR", cache)
    monkeypatch.setattr(config, "RESULTS_DIR", results)
    for name in ("T2C_MODEL", "T2C_LLM_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "T2C_LLM_GRAMMAR_FIELD"):
        monkeypatch.delenv(name, raising=False)
    return results


@pytest.fixture()
def dirs(cache, tmp_path, monkeypatch):
    return isolate(monkeypatch, cache, tmp_path / "results")


@pytest.fixture(scope="module")
def one_worker(cache, rule, tmp_path_factory):
    """The grid with one worker, cells one after another: the results every other schedule must give."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        results = isolate(monkeypatch, cache, tmp_path_factory.mktemp("one-worker"))
        reports, _ = run(monkeypatch, rule, 0.05, run_id="w1", workers=1)
    return reports, results / "w1"


def run(monkeypatch, rule, latency_s: float, answer=None, port: int = 0, **settings) -> tuple[list, ReplayServer]:
    params = params_from_dict({**GRID, **settings})
    with ReplayServer(answer or RecordingRule(rule, Recording()), latency_s=latency_s, port=port) as server:
        monkeypatch.setenv("T2C_LLM_BASE_URL", server.base_url)
        reports = run_grid(params, expand_grid(params), progress=False)
    return reports, server


def most_in_flight(server: ReplayServer, latency_s: float) -> int:
    """The most requests the server was answering at once (each takes `latency_s` from its arrival)."""
    arrivals = sorted(r.at for r in server.requests)
    return max(sum(1 for b in arrivals if a <= b < a + latency_s) for a in arrivals)


def test_many_workers_give_the_results_of_one(dirs: Path, monkeypatch, rule, one_worker) -> None:
    assert cells_at_once(params_from_dict({**GRID, "workers": 4}), 4) > 1  # the concurrent path is the one tested
    one, one_dir = one_worker
    many, server = run(monkeypatch, rule, 0.05, run_id="w4", workers=4)

    assert [r.cell for r in many] == [r.cell for r in one] == expand_grid(params_from_dict(GRID))
    assert most_in_flight(server, 0.05) > 1  # questions really were asked side by side
    assert 1 < most_in_flight(server, 0.05) <= 4  # and never more than `workers` at once
    calls = sum(r.model_calls for r in many)
    assert calls == sum(r.model_calls for r in one) == len(server.requests) > 2 * GRID["limit"]  # loops iterated
    assert all(r.cache_hits == GRID["limit"] for r in many if r.cell.strategy == "single-pass")  # paired via the cache
    a, b = run_results(one_dir), run_results(dirs / "w4")
    assert len(a) == 8 and all(a.values())  # 4 cells x (questions, attempts)
    assert differences(a, b) == []


class FailsAfter:
    """The rule's answers for the first `n` requests, then HTTP 400 for every request: an outage mid-run."""

    def __init__(self, rule: GoldRule, n: int) -> None:
        self.rule, self.n, self.seen = rule, n, 0
        self.lock = threading.Lock()

    def __call__(self, messages):
        with self.lock:
            self.seen += 1
            if self.seen > self.n:
                raise LookupError("the endpoint went away")
        return self.rule.answer(messages).reply


def test_a_stop_in_one_cell_stops_the_cells_run_with_it_and_the_rerun_completes(
    dirs: Path, monkeypatch, rule, one_worker
) -> None:
    port = free_port()  # the resumed run must ask the same endpoint (its address is in the model id)
    with pytest.raises(LLMUnavailableError) as stopped:
        run(monkeypatch, rule, 0.05, FailsAfter(rule, 12), port, run_id="stop", workers=4)
    assert not isinstance(stopped.value, GridStopped)  # the cause, not the cells it stopped
    assert "the endpoint went away" in str(stopped.value)
    partial = run_results(dirs / "stop")
    kept = [q for name, records in partial.items() if name.endswith("questions.jsonl") for q in records]
    assert kept and all(q["error"] is None for q in kept)  # nothing recorded from the outage
    assert sum(len(v) for k, v in partial.items() if k.endswith("questions.jsonl")) < 4 * GRID["limit"]

    resumed, _ = run(monkeypatch, rule, 0.05, port=port, run_id="stop", workers=4)
    assert sum(r.skipped for r in resumed) == len(kept)
    assert differences(run_results(one_worker[1], ("cached",)), run_results(dirs / "stop", ("cached",))) == []


def test_requests_per_minute_holds_across_cells_run_at_once(dirs: Path, monkeypatch, rule) -> None:
    limit = 300  # one request every 0.2 s
    reports, server = run(
        monkeypatch, rule, 0.0, run_id="rpm", workers=8, requests_per_minute=limit, strategies=["feedback"]
    )
    arrivals = sorted(r.at for r in server.requests)
    assert len(reports) == 2 and len(arrivals) >= 14
    # The limiter spaces its grants 0.204 s apart (10 in any 2 s); the server sees them after a thread
    # switch and a socket write, and on a loaded machine one request late by up to a slot lets the
    # server count one more (CI saw 11). Unlimited, eight workers at zero latency send hundreds in 2 s,
    # and one limiter per cell would send about 20.
    assert max_in_window(arrivals, 2.0) <= limit / 30 + 1
    span = arrivals[-1] - arrivals[0]
    assert span >= (len(arrivals) - 1) * 60 / limit


def test_the_vllm_parameter_file_is_the_thesis_grid_with_many_workers() -> None:
    from t2c_lib.study.params import load_params
    from tests.helpers import ROOT

    path = ROOT / "params" / "thesis-vllm.yaml"
    vllm, thesis = load_params(path), load_params(ROOT / "params" / "thesis.yaml")
    assert expand_grid(vllm) == expand_grid(thesis) and vllm.limit == thesis.limit == "all"
    assert vllm.workers >= 4 and cells_at_once(vllm, len(expand_grid(vllm))) > 1
    served = next(line.split()[3] for line in path.read_text().splitlines() if line.startswith("#   vllm serve "))
    assert served == vllm.model  # the comment's server serves the model the file asks for
