"""graph/base.py: a statement that hits the wall-clock limit gets one more run before its QueryTimeout counts."""

from __future__ import annotations

import time

import pytest

from t2c_lib.graph.base import TIMEOUT_TRIES, QueryError, QueryTimeout, patiently


class Statement:
    """A statement whose runs raise the given errors in turn, then answer."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.runs = 0

    def __call__(self) -> str:
        self.runs += 1
        if self.errors:
            raise self.errors.pop(0)
        return "rows"


def test_a_timeout_on_a_busy_machine_is_run_again():
    statement = Statement(QueryTimeout("query stopped after 11.02 s (time limit 10 s)"))
    assert patiently(statement) == "rows"
    assert statement.runs == 2


def test_a_query_that_times_out_every_time_is_a_timeout_after_the_tries():
    statement = Statement(*[QueryTimeout(f"try {n}") for n in range(TIMEOUT_TRIES + 1)])
    with pytest.raises(QueryTimeout, match=f"try {TIMEOUT_TRIES - 1}"):
        patiently(statement)
    assert statement.runs == TIMEOUT_TRIES == 2


def test_other_errors_are_not_run_again():
    statement = Statement(QueryError("syntax"))
    with pytest.raises(QueryError):
        patiently(statement)
    assert statement.runs == 1


def test_the_embedded_store_runs_a_timed_out_query_twice(tiny_store):
    long_query = (
        "UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y WITH x, y WHERE (x * y) % 7 = 3 RETURN count(*)"
    )
    started = time.perf_counter()
    with pytest.raises(QueryTimeout):
        tiny_store.query(long_query, timeout_s=0.3)
    # two runs of 0.3 s each (one run would end near 0.3 s); the store's timer may fire a few µs early
    assert time.perf_counter() - started >= 1.5 * 0.3
    assert tiny_store.query("MATCH (m:Movie) RETURN count(m)").rows == [[2]]
