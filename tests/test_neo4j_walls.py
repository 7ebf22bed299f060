"""The Neo4j store's limits on one query (issue 29): client deadline, result byte budget, server memory, nesting.

Each wall is tested alone where the shared gate would stop the query first (`gate_bypassed`):
the gate bounds a text's depth and length before sending, but a query it lets through must
still end on time, in bounded memory, with a classified error, and the server must go on
enforcing its limits afterwards.
"""

from __future__ import annotations

import time
import tracemalloc

import pytest

from t2c_lib.graph.base import QueryError, QueryTimeout, ResourceLimit, ResultTooLarge, StoreUnavailable
from t2c_lib.graph.neo4j_limits import GRACE_S, METADATA_KEY

pytestmark = pytest.mark.neo4j

REGEX = "RETURN 'aaaaaaaaaaaaaaaaaaaaaaaaaaaa!' =~ '((a+)+)+$' AS m"
"""Backtracking inside one expression: ~30 s of server CPU, which checks neither the timeout nor termination."""
LONG_QUERY = "UNWIND range(1, 1000000) AS x UNWIND range(1, 1000000) AS y WITH x, y WHERE x + y < 0 RETURN count(*)"
"""Operator work: the server's own transaction timeout stops it."""
SLACK_S = 1.0
"""What a deadline may overrun by on a loaded 2-core machine (thread wake-up, connection close)."""


def nested_parens(depth: int) -> str:
    return "RETURN " + "(" * depth + "1" + ")" * depth + " AS x"


def watched_transactions(store) -> list[list]:
    """The server's transactions that carry a t2c query token (other than the one asking)."""
    return store._admin(
        f"SHOW TRANSACTIONS YIELD transactionId, metaData, status WHERE metaData.{METADATA_KEY} IS NOT NULL "
        "RETURN transactionId, status"
    )


def still_serving(store) -> None:
    assert store.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]


# --- 1. a client-side deadline on every call --------------------------------------------------


def test_work_inside_one_expression_is_cut_at_the_deadline(neo4j_kurikulum, gate_bypassed):
    """The server's timeout does not stop a backtracking regex (it ran 29 s under a 5 s limit);
    the client's deadline answers QueryTimeout at the limit plus the grace, naming the time taken."""
    started = time.perf_counter()
    with pytest.raises(QueryTimeout) as info:
        neo4j_kurikulum.query(REGEX, timeout_s=2.0)
    took = time.perf_counter() - started
    print(f"regex under a 2 s limit: QueryTimeout after {took:.2f} s: {info.value}")
    assert took < 2.0 + GRACE_S + SLACK_S
    assert "stopped after" in str(info.value) and "time limit 2 s" in str(info.value)
    still_serving(neo4j_kurikulum)


def test_the_server_transaction_is_terminated(neo4j_kurikulum, gate_bypassed):
    """After the client gives up, the server's transaction is marked terminated (by its own timeout
    or by the TERMINATE the store sends); none stays 'Running'."""
    with pytest.raises(QueryTimeout):
        neo4j_kurikulum.query(REGEX, timeout_s=1.0)
    deadline = time.perf_counter() + 5.0
    while True:
        running = [row for row in watched_transactions(neo4j_kurikulum) if row[1] == "Running"]
        if not running or time.perf_counter() > deadline:
            break
        time.sleep(0.2)
    assert running == [], running


def test_a_parser_stack_overflow_does_not_hang_the_client(neo4j_kurikulum, gate_bypassed):
    """1,500 nested parentheses overflow the server parser's stack and the server never answers;
    query and explain both return at the deadline."""
    for call in (
        lambda: neo4j_kurikulum.query(nested_parens(1500), timeout_s=1.0),
        lambda: neo4j_kurikulum.explain(nested_parens(1500), timeout_s=1.0),
    ):
        started = time.perf_counter()
        with pytest.raises(QueryTimeout):
            call()
        took = time.perf_counter() - started
        print(f"1,500 nested parentheses: QueryTimeout after {took:.2f} s")
        assert took < 1.0 + GRACE_S + SLACK_S
    still_serving(neo4j_kurikulum)


def test_the_gate_refuses_deep_nesting_before_sending(neo4j_kurikulum):
    started = time.perf_counter()
    with pytest.raises(QueryError) as info:
        neo4j_kurikulum.query(nested_parens(400), timeout_s=1.0)
    assert info.value.kind == "resource" and "refused before the database" in str(info.value)
    assert time.perf_counter() - started < 0.5


def test_the_servers_own_timeout_still_answers_first(neo4j_kurikulum):
    """Work the server can stop ends with the server's timeout, before the client's deadline."""
    started = time.perf_counter()
    with pytest.raises(QueryTimeout, match="the server's timeout"):
        neo4j_kurikulum.query(LONG_QUERY, timeout_s=1.0)
    assert time.perf_counter() - started < 1.0 + GRACE_S


# --- 2. a result byte budget -------------------------------------------------------------------


def test_one_huge_value_never_reaches_the_client(neo4j_kurikulum):
    """One row holding a 64 MiB string (built in one expression, which the transaction memory limit does
    not see): reading stops at the budget inside the record, so nothing is unpacked."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(ResultTooLarge, match="T2C_MAX_RESULT_BYTES"):
            neo4j_kurikulum.query("RETURN reduce(s = 'ab', i IN range(1, 25) | s + s) AS big", timeout_s=30.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    took = time.perf_counter() - started
    print(f"a 64 MiB string in one row: ResultTooLarge after {took:.2f} s, client peak {peak / 2**20:.0f} MiB")
    assert peak < 3 * neo4j_kurikulum.max_result_bytes
    still_serving(neo4j_kurikulum)


def test_many_rows_stop_at_the_byte_budget(neo4j_kurikulum, kurikulum):
    """Under the row cap but over the byte budget: fetching stops there; the budget counts converted values."""
    from t2c_lib.graph.neo4j import Neo4jStore

    store = Neo4jStore(kurikulum, uri=neo4j_kurikulum.uri, max_result_bytes=200_000)
    try:
        with pytest.raises(ResultTooLarge, match="200,000 bytes"):
            store.query("UNWIND range(1, 5000) AS i RETURN i, 'a forty character string, repeated, ok!!' AS s")
        assert len(store.query("UNWIND range(1, 500) AS i RETURN i, 'short' AS s").rows) == 500
    finally:
        store.close()


def test_the_budget_comes_from_the_environment(neo4j_kurikulum, kurikulum, monkeypatch):
    from t2c_lib.graph.neo4j import Neo4jStore

    monkeypatch.setenv("T2C_MAX_RESULT_BYTES", "5000")
    store = Neo4jStore(kurikulum, uri=neo4j_kurikulum.uri)
    try:
        assert store.max_result_bytes == 5000
        with pytest.raises(ResultTooLarge, match="5,000 bytes"):
            store.query("MATCH (t:topic) RETURN t.nama")
    finally:
        store.close()


# --- 3. server memory ----------------------------------------------------------------------------


def test_operator_memory_is_bounded_per_transaction(neo4j_kurikulum):
    """collect() is tracked: db.memory.transaction.max (256 MiB on the local server) stops it in
    seconds with a classified error; the server's timeouts hold right after."""
    started = time.perf_counter()
    with pytest.raises(ResourceLimit) as info:
        neo4j_kurikulum.query(
            "UNWIND range(1, 1000000) AS x UNWIND range(1, 100) AS y RETURN size(collect(x)) AS n", timeout_s=60.0
        )
    took = time.perf_counter() - started
    print(f"collect of 100M: {info.value.kind} after {took:.1f} s: {info.value}")
    assert info.value.kind == "resource" and "db.memory.transaction.max" in str(info.value)
    assert took < 20.0
    test_the_servers_own_timeout_still_answers_first(neo4j_kurikulum)


def test_a_heap_filling_expression_leaves_timeouts_working(neo4j_kurikulum):
    """A list built in one comprehension escapes the transaction memory limits (Neo4j Community does
    not track expression values) and fills the heap; the query fails with a classified error and,
    right after it, the server still enforces transaction timeouts (a full heap once left it
    without them). The client gets QueryTimeout instead if the heap takes longer than 120 s to fill."""
    started = time.perf_counter()
    with pytest.raises(
        (ResourceLimit, QueryTimeout, StoreUnavailable)
    ) as info:  # a string doubled 40 times: the gate allows it
        neo4j_kurikulum.query("RETURN size(reduce(s = 'ab', i IN range(1, 40) | s + s)) AS n", timeout_s=120.0)
    print(
        f"list comprehension of 100M: {type(info.value).__name__} after {time.perf_counter() - started:.1f} s: {info.value}"
    )
    if isinstance(info.value, ResourceLimit):
        assert info.value.kind == "resource"
    deadline = time.monotonic() + 120  # a server busy collecting its heap may drop connections for a while
    while True:
        try:
            still_serving(neo4j_kurikulum)
            break
        except StoreUnavailable:
            assert time.monotonic() < deadline, "the server did not answer again within 120 s of the full heap"
            time.sleep(2)
    for _ in range(3):  # timeouts still hold: the server's own, or (once its heap was full) the client's cut
        began = time.perf_counter()
        with pytest.raises(QueryTimeout) as timed_out:
            neo4j_kurikulum.query(LONG_QUERY, timeout_s=1.0)
        assert time.perf_counter() - began < 1.0 + GRACE_S + 0.5, str(timed_out.value)
        print(f"after the full heap: {timed_out.value}")
    still_serving(neo4j_kurikulum)


# --- 4. errors classified --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [100, 3000])
def test_a_deeply_nested_result_is_a_query_error(neo4j_kurikulum, depth):
    """100 levels: refused by the store's converter (limit 64); 3,000 levels: the driver's unpacker
    runs out of recursion, which becomes the same QueryError instead of a crash."""
    with pytest.raises(QueryError) as info:
        neo4j_kurikulum.query(f"RETURN reduce(acc = [], i IN range(1, {depth}) | [acc]) AS deep")
    assert info.value.kind == "too_large" and "nests" in str(info.value)
    assert len(neo4j_kurikulum.query("RETURN reduce(acc = [], i IN range(1, 20) | [acc]) AS ok").rows) == 1
    still_serving(neo4j_kurikulum)
