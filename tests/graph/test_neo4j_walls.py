"""The Neo4j store's limits on one query (issues 29, 36): client deadline, result byte budget, server memory,
nesting, the gate's limits on work inside one expression, and a server restarted when its heap runs out.

Each wall is tested alone where the shared gate would stop the query first (`gate_bypassed`):
the gate bounds a text's depth and length before sending, but a query it lets through must
still end on time, in bounded memory, with a classified error, and the server must go on
enforcing its limits afterwards.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from t2c_lib import config
from t2c_lib.graph.base import QueryError, QueryTimeout, ResourceLimit, ResultTooLarge, StoreUnavailable
from t2c_lib.graph.neo4j_limits import GRACE_S, METADATA_KEY

pytestmark = pytest.mark.neo4j

REGEX = "RETURN '" + "a" * 34 + "!' =~ '((a+)+)+$' AS m"
"""Backtracking inside one expression: minutes of server CPU, which checks neither the timeout nor termination
(the local server's runaway watch ends it after 10 s on end: 28 characters ran ~5-30 s, each one more doubles)."""
LONG_QUERY = "UNWIND range(1, 1000000) AS x UNWIND range(1, 1000000) AS y WITH x, y WHERE x + y < 0 RETURN count(*)"
"""Operator work: the server's own transaction timeout stops it."""
SLACK_S = 1.0
"""What a deadline may overrun by on a loaded 2-core machine (thread wake-up, connection close)."""


def nested_parens(depth: int) -> str:
    return "RETURN " + "(" * depth + "1" + ")" * depth + " AS x"


def watched_transactions(store) -> list[list]:
    """The server's transactions that carry a t2c query token (other than the one asking)."""
    return store._admin(
        "SHOW TRANSACTIONS YIELD transactionId, metaData, status, currentQuery "
        f"WHERE metaData.{METADATA_KEY} IS NOT NULL AND NOT currentQuery STARTS WITH 'SHOW TRANSACTIONS' "
        "RETURN transactionId, status"
    )


def still_serving(store) -> None:
    assert store.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]


def wait_until_serving(store, within_s: float = 120.0) -> None:
    """still_serving, retried while a restarted server (or a full heap's collection) drops connections."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            still_serving(store)
            return
        except StoreUnavailable:
            assert time.monotonic() < deadline, f"the server did not answer again within {within_s:g} s"
            time.sleep(1)


def _local_launcher_pid() -> str | None:
    """The server pid `tools/neo4j/neo4j.sh` recorded, when its supervisor runs the server under test."""
    folder = config.local_neo4j_dir()
    try:
        supervisor = int((folder / "supervisor.pid").read_text().strip())
        Path(f"/proc/{supervisor}").stat()
        return (folder / "neo4j.pid").read_text().strip()
    except (OSError, ValueError):
        return None


def restarted_after_runaway(store, before: str | None, within_s: float = 90.0) -> None:
    """With the local launcher, a regex still matching T2C_NEO4J_RUNAWAY_S (10) s on makes the server exit
    and its supervisor start it again: wait for the new server and for it to serve. Elsewhere nothing
    stops such a match (it runs on, as before), so there is nothing to wait for."""
    if before is None:
        return
    began = time.monotonic()
    while _local_launcher_pid() in (before, None):
        assert time.monotonic() - began < within_s, "the runaway watch did not restart the server"
        time.sleep(0.5)
    log = (config.local_neo4j_dir() / "neo4j.log").read_text(errors="replace")
    assert "T2C-NEO4J runaway: a thread has been matching one regular expression" in log
    wait_until_serving(store)
    print(f"runaway regex: server {before} -> {_local_launcher_pid()}, serving {time.monotonic() - began:.1f} s later")


# --- 1. a client-side deadline on every call --------------------------------------------------


def test_work_inside_one_expression_is_cut_at_the_deadline(neo4j_kurikulum, gate_bypassed):
    """The server's timeout does not stop a backtracking regex (it ran 29 s under a 5 s limit);
    the client's deadline answers QueryTimeout at the limit plus the grace, naming the time taken;
    the local server's runaway watch then restarts it (issue 36)."""
    before = _local_launcher_pid()
    started = time.perf_counter()
    with pytest.raises(QueryTimeout) as info:
        neo4j_kurikulum.query(REGEX, timeout_s=2.0)
    took = time.perf_counter() - started
    print(f"regex under a 2 s limit: QueryTimeout after {took:.2f} s: {info.value}")
    assert took < 2.0 + GRACE_S + SLACK_S
    assert "stopped after" in str(info.value) and "time limit 2 s" in str(info.value)
    still_serving(neo4j_kurikulum)
    restarted_after_runaway(neo4j_kurikulum, before)


def test_the_server_transaction_is_terminated(neo4j_kurikulum, gate_bypassed):
    """After the client gives up, the server's transaction is marked terminated (by its own timeout
    or by the TERMINATE the store sends); none stays 'Running'."""
    before = _local_launcher_pid()
    with pytest.raises(QueryTimeout):
        neo4j_kurikulum.query(REGEX, timeout_s=1.0)
    deadline = time.perf_counter() + 5.0
    while True:
        running = [row for row in watched_transactions(neo4j_kurikulum) if row[1] == "Running"]
        if not running or time.perf_counter() > deadline:
            break
        time.sleep(0.2)
    assert running == [], running
    restarted_after_runaway(neo4j_kurikulum, before)


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


def test_one_huge_value_never_reaches_the_client(neo4j_kurikulum, gate_bypassed):
    """One row holding a 64 MiB string (built in one expression, which the transaction memory limit does
    not see; the gate refuses the doubling reduce, so it is bypassed): reading stops at the budget inside the
    record, so nothing is unpacked."""
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


THREE_NESTED = "RETURN size([a IN range(1, 999) | [b IN range(1, 999) | [c IN range(1, 999) | c]]]) AS n"
"""The issue's heap filler: ~10**9 values built inside one expression (refused by the gate, so bypassed)."""


def test_a_full_heap_restarts_the_server(neo4j_kurikulum, gate_bypassed):
    """A list built in nested comprehensions escapes the transaction memory limits (Neo4j Community does
    not track expression values) and fills the heap. The JVM runs with ExitOnOutOfMemoryError, so it
    never goes on in that state (a full heap once left it without timeouts); the launcher's supervisor
    starts it again, and a store opened next waits for it. Timeouts hold afterwards."""
    before = _local_launcher_pid()
    started = time.perf_counter()
    with pytest.raises((ResourceLimit, QueryTimeout, StoreUnavailable)) as info:
        neo4j_kurikulum.query(THREE_NESTED, timeout_s=120.0)
    print(f"three nested comprehensions: {type(info.value).__name__} after {time.perf_counter() - started:.1f} s")
    if before is not None:  # the local launcher: the server exits and is started again
        deadline = time.monotonic() + 120
        while _local_launcher_pid() in (before, None):
            assert time.monotonic() < deadline, "the supervisor did not start the server again within 120 s"
            time.sleep(0.5)
        log = (config.local_neo4j_dir() / "neo4j.log").read_text(errors="replace")
        assert "Terminating due to java.lang.OutOfMemoryError" in log
        assert "T2C-NEO4J supervisor: the server exited with code 3" in log
        from t2c_lib.graph.neo4j import Neo4jStore

        began = time.perf_counter()
        reopened = Neo4jStore(neo4j_kurikulum.dataset, uri=neo4j_kurikulum.uri)  # waits for the restart
        print(
            f"server pid {before} -> {_local_launcher_pid()}; a new store opened after {time.perf_counter() - began:.1f} s"
        )
        reopened.close()
    wait_until_serving(neo4j_kurikulum)  # a server busy collecting its heap may drop connections for a while
    for _ in range(3):  # timeouts hold: the server's own, or the client's cut
        began = time.perf_counter()
        with pytest.raises(QueryTimeout) as timed_out:
            neo4j_kurikulum.query(LONG_QUERY, timeout_s=1.0)
        assert time.perf_counter() - began < 1.0 + GRACE_S + 0.5, str(timed_out.value)
        print(f"after the full heap: {timed_out.value}")
    still_serving(neo4j_kurikulum)


# --- 4. the gate's limits on work inside one expression (issue 36) -----------------------------------

SUBJECT = "'" + "a" * 40 + "!'"
ISSUE_EXAMPLES = {
    "(.*a){8}x": f"RETURN {SUBJECT} =~ '(.*a){{8}}x' AS m",
    "escaped (a+)+$": f"RETURN {SUBJECT} =~ '\\u0028a+\\u0029+$' AS m",
    "eight .*": f"RETURN {SUBJECT} =~ '.*.*.*.*.*.*.*.*x' AS m",
    "three nested ranges": THREE_NESTED,
    "doubling reduce": "RETURN size(reduce(s = 'a', x IN range(1, 40) | s + s)) AS n",
    "1,995 NOTs": "RETURN " + "NOT " * 1995 + "true AS x",
}
"""The issue's examples: before, 10-17 s+ of server work past the deadline, a full heap, or no answer."""


@pytest.mark.parametrize("name", list(ISSUE_EXAMPLES))
def test_the_issue_examples_are_refused_before_sending(neo4j_kurikulum, name):
    before = {row[0] for row in watched_transactions(neo4j_kurikulum)}
    started = time.perf_counter()
    with pytest.raises(QueryError) as info:
        neo4j_kurikulum.query(ISSUE_EXAMPLES[name], timeout_s=2.0)
    took = time.perf_counter() - started
    print(f"{name}: refused in {took * 1000:.1f} ms: {info.value}")
    assert info.value.kind == "resource" and "refused before the database" in str(info.value)
    assert took < 0.5
    assert {row[0] for row in watched_transactions(neo4j_kurikulum)} <= before  # nothing was sent
    still_serving(neo4j_kurikulum)


def test_the_stores_own_statements_have_a_deadline(neo4j_kurikulum):
    """`_admin` (constraints, loading) and introspection once had no client deadline: a statement the
    server never answers (1,995 NOTs overflow its parser) now ends at the limit plus the grace."""
    started = time.perf_counter()
    with pytest.raises(QueryTimeout):
        neo4j_kurikulum._admin(ISSUE_EXAMPLES["1,995 NOTs"], timeout_s=1.0)
    took = time.perf_counter() - started
    print(f"_admin on a statement the server never answers: QueryTimeout after {took:.2f} s")
    assert took < 1.0 + GRACE_S + SLACK_S
    still_serving(neo4j_kurikulum)


# --- 5. errors classified --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [100, 3000])
def test_a_deeply_nested_result_is_a_query_error(neo4j_kurikulum, depth):
    """100 levels: refused by the store's converter (limit 64); 3,000 levels: the driver's unpacker
    runs out of recursion, which becomes the same QueryError instead of a crash."""
    with pytest.raises(QueryError) as info:
        neo4j_kurikulum.query(f"RETURN reduce(acc = [], i IN range(1, {depth}) | [acc]) AS deep")
    assert info.value.kind == "too_large" and "nests" in str(info.value)
    assert len(neo4j_kurikulum.query("RETURN reduce(acc = [], i IN range(1, 20) | [acc]) AS ok").rows) == 1
    still_serving(neo4j_kurikulum)
