"""requests_per_minute is a budget per endpoint on this machine: shared by processes, and every retry pays."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from t2c_lib.llm.base import Message
from t2c_lib.llm.openai_compat import Endpoint, OpenAICompatModel, RetryPolicy
from t2c_lib.llm.stack import PacedModel, RateLimiter, shared_limiter
from tests.helpers import ROOT
from tests.helpers.fault_server import FaultServer, ok, status

MESSAGES = [Message("user", "How many courses?")]

GRANTS = """
import sys, time
from pathlib import Path
from t2c_lib.llm.stack import RateLimiter
limiter = RateLimiter(600, shared_file=Path(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
for _ in range(5):
    limiter.acquire()
    print(time.time(), flush=True)
"""


def test_rate_limiter_spaces_calls():
    limiter = RateLimiter(per_minute=600)  # one every 0.1 s
    started = time.monotonic()
    for _ in range(4):
        limiter.acquire()
    assert time.monotonic() - started >= 0.29
    RateLimiter(None).acquire()  # no limit: returns at once


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_two_processes_naming_one_file_share_one_budget(tmp_path: Path) -> None:
    shared = tmp_path / "endpoint.next"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", GRANTS, str(shared)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for proc in procs:  # both imported and waiting: they start together
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    grants = sorted(float(line) for proc in procs for line in proc.communicate(timeout=30)[0].split())
    assert len(grants) == 10
    interval = 60 / 600
    # One limiter per process would grant two at a time: 10 grants in about 0.4 s.
    assert grants[-1] - grants[0] >= 9 * interval * 0.95
    gaps = [b - a for a, b in zip(grants, grants[1:])]
    assert (
        sum(gap < interval / 2 for gap in gaps) <= 2
    )  # a late print may pair two grants now and then; unshared: 5 pairs


def test_a_damaged_or_far_future_slot_costs_no_wait(tmp_path: Path) -> None:
    shared = tmp_path / "endpoint.next"
    limiter = RateLimiter(60, shared_file=shared)
    shared.write_text("not a number")
    assert limiter.acquire() == 0.0
    shared.write_text(str(time.time() + 10 * 86400))  # written under a clock that was since set back
    started = time.monotonic()
    assert limiter.acquire() == 0.0
    assert time.monotonic() - started < 0.5
    assert 0.9 < limiter.acquire() <= 1.03  # and the budget holds from there: one call a second


def test_one_limiter_per_endpoint_model_in_a_process(tmp_path: Path) -> None:
    first = shared_limiter("qwen@host-a", 60, tmp_path)
    assert shared_limiter("qwen@host-a", 60, tmp_path) is first
    other = shared_limiter("qwen@host-b", 60, tmp_path)
    assert other is not first and other.shared_file != first.shared_file


class CountingLimiter(RateLimiter):
    def __init__(self, per_minute: float) -> None:
        super().__init__(per_minute)
        self.grants = 0

    def acquire(self) -> float:
        self.grants += 1
        return super().acquire()


def test_a_retry_after_429_takes_its_own_slot() -> None:
    with FaultServer() as server:
        server.queue(status(429, retry_after="0"), ok(), status(429, retry_after="0"), ok())
        model = OpenAICompatModel(
            "fault-model",
            Endpoint(server.base_url, "", "fault"),
            RetryPolicy(max_attempts=3, base_delay_s=0.0, timeout_s=5, max_total_wait_s=0.5),
        )
        limiter = CountingLimiter(300)  # one request every 0.2 s
        limited = PacedModel(model, limiter)
        for _ in range(2):
            limited.complete(MESSAGES, max_tokens=16)
        arrivals = [r.at for r in server.requests]
    assert len(arrivals) == 4 and limiter.grants == 4  # two 429s answered by two retries: a slot each
    # Four slots span three intervals (0.61 s); unpaced retries would follow their 429s at once (about 0.2 s
    # in all). A request late in transit on a busy machine shortens the span by its delay, hence 0.5.
    assert arrivals[-1] - arrivals[0] >= 0.5
