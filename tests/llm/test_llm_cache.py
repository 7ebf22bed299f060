"""The SQLite response cache: keys, modes, and concurrent writers (threads and processes).

Calls go through the real OpenAI-compatible client to the loopback fault server, so
"zero model calls" is counted as HTTP requests that reached the server.
"""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
import threading
from pathlib import Path

import pytest

from t2c_lib.llm.base import Completion, Message, Usage
from t2c_lib.llm.cache import (
    CachedModel,
    CacheMode,
    ResponseCache,
    cache_key,
    default_cache_path,
    request_payload,
)
from t2c_lib.llm.openai_compat import Endpoint, OpenAICompatModel, RetryPolicy
from tests.helpers.fault_server import FaultServer, ok

pytestmark = pytest.mark.slow  # a loopback endpoint with real retries

MESSAGES = [Message("system", "You write Cypher."), Message("user", "How many courses?")]


@pytest.fixture()
def server():
    with FaultServer() as srv:
        yield srv


def _model(srv: FaultServer, seed: int | None = 7) -> OpenAICompatModel:
    return OpenAICompatModel(
        "fault-model",
        Endpoint(srv.base_url, "sk-cache-test-000000", "fault"),
        RetryPolicy(max_attempts=2, base_delay_s=0.01, timeout_s=5),
        seed=seed,
    )


def test_second_identical_call_is_served_from_cache(server: FaultServer, tmp_path: Path) -> None:
    cached = CachedModel(_model(server), ResponseCache(tmp_path / "c.sqlite"))
    first = cached.complete(MESSAGES, temperature=0.0, max_tokens=64)
    second = cached.complete(MESSAGES, temperature=0.0, max_tokens=64)
    assert len(server.requests) == 1
    assert not first.cached and second.cached
    assert second.text == first.text and second.usage == first.usage
    assert second.latency_s == pytest.approx(first.latency_s)  # the original call's latency
    assert (cached.hits, cached.misses) == (1, 1)


def test_a_fresh_process_view_of_the_cache_makes_zero_calls(server: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CachedModel(_model(server), ResponseCache(path)).complete(MESSAGES)
    again = CachedModel(_model(server), ResponseCache(path))  # as a rerun would open it
    assert again.complete(MESSAGES).cached
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"max_tokens": 65},
        {"stop": ["\n"]},
        {"messages": [Message("system", "You write Cypher."), Message("user", "How many topics?")]},
    ],
    ids=["temperature", "max_tokens", "stop", "messages"],
)
def test_any_request_change_is_a_miss(server: FaultServer, tmp_path: Path, change: dict) -> None:
    cached = CachedModel(_model(server), ResponseCache(tmp_path / "c.sqlite"))
    base = {"messages": MESSAGES, "temperature": 0.0, "max_tokens": 64, "stop": None}
    cached.complete(**base)
    assert not cached.complete(**{**base, **change}).cached
    assert len(server.requests) == 2


def test_seed_and_model_are_part_of_the_key(server: FaultServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    CachedModel(_model(server, seed=1), cache).complete(MESSAGES)
    CachedModel(_model(server, seed=2), cache).complete(MESSAGES)
    assert len(server.requests) == 2
    a = cache_key(request_payload("m1", MESSAGES, 0.0, 64, None, 1))
    assert a != cache_key(request_payload("m2", MESSAGES, 0.0, 64, None, 1))
    assert a != cache_key(request_payload("m1", MESSAGES, 0.0, 64, None, 1, fingerprint="render-v2"))
    assert a == cache_key(request_payload("m1", list(MESSAGES), 0, 64, [], 1))  # int 0 == 0.0, None == []


def test_refresh_calls_and_overwrites(server: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CachedModel(_model(server), ResponseCache(path)).complete(MESSAGES)
    server.queue(ok("<cypher>MATCH (n:SO) RETURN n</cypher>"))
    refreshed = CachedModel(_model(server), ResponseCache(path), CacheMode.REFRESH).complete(MESSAGES)
    assert not refreshed.cached and "SO" in refreshed.text
    served = CachedModel(_model(server), ResponseCache(path)).complete(MESSAGES)
    assert served.cached and served.text == refreshed.text
    assert len(server.requests) == 2


def test_off_neither_reads_nor_writes(server: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    off = CachedModel(_model(server), ResponseCache(path), CacheMode.OFF)
    off.complete(MESSAGES)
    off.complete(MESSAGES)
    assert len(server.requests) == 2
    assert len(ResponseCache(path)) == 0


def test_cli_flags_map_onto_modes() -> None:
    assert CacheMode.from_flags() is CacheMode.USE
    assert CacheMode.from_flags(refresh=True) is CacheMode.REFRESH
    assert CacheMode.from_flags(no_cache=True, refresh=True) is CacheMode.OFF
    assert CacheMode("refresh") is CacheMode.REFRESH


def test_failures_are_not_cached(server: FaultServer, tmp_path: Path) -> None:
    from t2c_lib.llm.base import LLMError
    from tests.helpers.fault_server import status

    cached = CachedModel(_model(server), ResponseCache(tmp_path / "c.sqlite"))
    server.queue(status(400))
    with pytest.raises(LLMError):
        cached.complete(MESSAGES)
    assert len(cached.cache) == 0
    assert not cached.complete(MESSAGES).cached


def test_wal_mode_and_default_location(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    mode = sqlite3.connect(cache.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    assert default_cache_path().name == "llm_cache.sqlite"
    assert default_cache_path().parent.name == ".cache"


def _completion(i: int, writer: str) -> Completion:
    return Completion(f"MATCH (n) RETURN {i} // {writer}", Usage(10 + i, i), 0.01 * i, "test/model")


def _write_many(path: str, writer: str, n: int, barrier) -> None:
    cache = ResponseCache(path)
    barrier.wait()  # start together so the writes really overlap
    for i in range(n):
        cache.put(f"{writer}-{i}", _completion(i, writer), {"writer": writer})
        cache.put("shared", _completion(i, writer))  # same key from everyone: INSERT OR IGNORE


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "c.sqlite")
    n = 300
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_write_many, args=(path, w, n, barrier)) for w in ("p1", "p2")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 2 * n + 1
    for writer in ("p1", "p2"):
        for i in (0, n // 2, n - 1):
            got = cache.get(f"{writer}-{i}")
            assert got is not None and got.text == _completion(i, writer).text
            assert got.usage == Usage(10 + i, i)


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            barrier.wait()
            for i in range(100):
                cache.put(f"{name}-{i}", _completion(i, name))
                assert cache.get(f"{name}-{i}") is not None
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"t{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) == 400


def test_wrappers_do_not_hide_the_seed(server: FaultServer, tmp_path: Path) -> None:
    from t2c_lib.llm.base import ModelWrapper

    class PassThrough(ModelWrapper):  # a layer of the stack (as `llm.stack.PacedModel`): it says the seed itself
        pass

    cache = ResponseCache(tmp_path / "c.sqlite")
    assert CachedModel(PassThrough(_model(server, seed=1)), cache).seed == 1
    CachedModel(PassThrough(_model(server, seed=1)), cache).complete(MESSAGES)
    CachedModel(PassThrough(_model(server, seed=2)), cache).complete(MESSAGES)
    assert len(server.requests) == 2


def test_a_per_call_seed_is_sent_and_keys_the_cache(server: FaultServer, tmp_path: Path) -> None:
    """The `vote` strategy's samples: one seed per call, each its own cache entry; the model's seed is the default."""
    cached = CachedModel(_model(server, seed=7), ResponseCache(tmp_path / "c.sqlite"))
    cached.complete(MESSAGES, temperature=0.7, max_tokens=64, seed=7)
    cached.complete(MESSAGES, temperature=0.7, max_tokens=64, seed=8)
    assert [r.body["seed"] for r in server.requests] == [7, 8]
    assert cached.complete(MESSAGES, temperature=0.7, max_tokens=64).cached  # seed None = the model's seed 7
    assert cached.complete(MESSAGES, temperature=0.7, max_tokens=64, seed=8).cached
    assert len(server.requests) == 2
