"""Issue 55, item 5: an endpoint's reply is read within bounds, through the real `openai` SDK over loopback HTTP.

The fault server streams a chunked body that never ends, stops sending mid-body, sends a gzip
bomb, NaN or an out-of-range number in the usage, or 200,000 nested arrays. Each ends within
the request's timeout plus a small grace, in bounded memory, as one line (`LLMError`: the
malformed-body or timeout report every other bad reply gets), never a traceback or a hang.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import tracemalloc
import zlib

import pytest

from t2c_lib.llm.base import LLMError, Message
from t2c_lib.llm.bounded_body import MAX_BODY_BYTES, ReplyRefused, check_json
from t2c_lib.llm.openai_compat import Endpoint, OpenAICompatModel, RetryPolicy
from tests.helpers.fault_server import FaultServer, endless, raw, stall, trickle_headers

pytestmark = pytest.mark.slow  # a loopback endpoint with real timeouts

MESSAGES = [Message("user", "List all courses.")]
ONCE = RetryPolicy(max_attempts=1, timeout_s=1.0)
GRACE_S = 0.5


@pytest.fixture()
def server():
    with FaultServer() as srv:
        yield srv


def _complete(srv: FaultServer, policy: RetryPolicy = ONCE, wait_s: float = 10.0) -> tuple[object, float]:
    """(what `complete` returned or raised, seconds it took); a call still running after `wait_s` fails the test."""
    model = OpenAICompatModel("fault-model", Endpoint(srv.base_url, "sk-none", "fault"), policy)
    outcome: list[object] = []

    def call() -> None:
        try:
            outcome.append(model.complete(MESSAGES))
        except BaseException as exc:
            outcome.append(exc)

    started = time.monotonic()
    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(wait_s)
    assert outcome, f"complete() was still reading after {wait_s} s"
    return outcome[0], time.monotonic() - started


def _completion(usage: str = '{"prompt_tokens": 3, "completion_tokens": 2}', content: str = "RETURN 1") -> bytes:
    return (
        '{"id": "c", "object": "chat.completion", "created": 1, "model": "m", '
        f'"choices": [{{"index": 0, "message": {{"role": "assistant", "content": {json.dumps(content)}}}, '
        f'"finish_reason": "stop"}}], "usage": {usage}}}'
    ).encode()


def _one_line_error(outcome: object, *words: str) -> str:
    assert isinstance(outcome, LLMError), repr(outcome)[:300]
    message = str(outcome)
    assert "\n" not in message and all(word in message for word in words), message[:300]
    return message


def test_an_endless_chunked_body_ends_at_the_timeout(server):
    server.queue(endless(0.01))
    outcome, took = _complete(server)
    _one_line_error(outcome, "timeout")
    assert took < ONCE.timeout_s + GRACE_S


def test_a_body_that_stops_mid_way_ends_at_the_deadline_not_a_read_timeout_later(server):
    server.queue(stall(30, after_s=0.7))  # the first body bytes at 0.7 s, then nothing: a read would wait until 1.7 s
    outcome, took = _complete(server)
    _one_line_error(outcome, "timeout")
    assert took < ONCE.timeout_s + GRACE_S


def test_headers_sent_a_byte_at_a_time_end_at_the_deadline(server):
    server.queue(trickle_headers(0.2))  # every read gets a byte well within the read timeout
    outcome, took = _complete(server)
    _one_line_error(outcome, "timeout")
    assert took < ONCE.timeout_s + 2 * GRACE_S


def _gzip_bomb(megabytes: int) -> bytes:
    squash = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    zeros = b"\0" * (1 << 20)
    return b"".join(squash.compress(zeros) for _ in range(megabytes)) + squash.flush()


def test_a_gzip_bomb_is_refused_in_bounded_memory(server):
    bomb = _gzip_bomb(300)
    assert len(bomb) < 400_000
    server.queue(raw(bomb, Content_Encoding="gzip"))
    tracemalloc.start()
    try:
        outcome, _ = _complete(server)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _one_line_error(outcome, "malformed response body", f"more than {MAX_BODY_BYTES} bytes decompressed")
    assert peak < 4 * MAX_BODY_BYTES, peak


def test_a_gzipped_reply_within_the_bound_is_read(server):
    server.queue(raw(gzip.compress(_completion()), Content_Encoding="gzip"))
    outcome, _ = _complete(server)
    assert getattr(outcome, "text", None) == "RETURN 1", outcome
    assert {k.lower(): v for k, v in server.requests[0].headers.items()}["accept-encoding"] == "gzip"


def test_a_body_over_the_size_cap_is_refused(server):
    server.queue(raw(_completion(content="x" * (MAX_BODY_BYTES + 10))))
    outcome, _ = _complete(server)
    _one_line_error(outcome, "malformed response body", f"more than {MAX_BODY_BYTES} bytes")


def test_a_content_coding_not_asked_for_is_refused(server):
    server.queue(raw(_completion(), Content_Encoding="br"))
    outcome, _ = _complete(server)
    _one_line_error(outcome, "malformed response body", "content coding 'br'")


@pytest.mark.parametrize(
    "usage, words",
    [
        ('{"prompt_tokens": NaN, "completion_tokens": 2}', ("NaN is not a JSON number",)),
        ('{"prompt_tokens": 3, "completion_tokens": Infinity}', ("Infinity is not a JSON number",)),
        ('{"prompt_tokens": 1e400, "completion_tokens": 2}', ("out of range",)),
        ('{"prompt_tokens": -5, "completion_tokens": 2}', ("usage prompt_tokens is '-5'",)),
        ('{"prompt_tokens": "many", "completion_tokens": 2}', ("usage prompt_tokens is 'many'",)),
    ],
)
def test_a_bad_number_in_the_usage_is_one_line(server, usage, words):
    server.queue(raw(_completion(usage)))
    outcome, _ = _complete(server)
    _one_line_error(outcome, "malformed response body", *words)


def test_deep_nesting_is_one_line(server):
    server.queue(raw(b'{"choices": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"))
    outcome, _ = _complete(server)
    _one_line_error(outcome, "malformed response body", "nested more than")


def test_a_retry_after_a_bad_body_still_answers(server):
    server.queue(raw(_completion('{"prompt_tokens": NaN}')))
    policy = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02, timeout_s=1.0)
    outcome, _ = _complete(server, policy)
    assert getattr(outcome, "text", None) is not None, outcome  # the next, normal reply


def test_check_json_bounds_depth_and_refuses_non_finite_numbers():
    assert check_json(b'{"a": [1, 2.5, {"b": null}]}') == {"a": [1, 2.5, {"b": None}]}
    for body in (b"[" * 70 + b"]" * 70, b'{"a": NaN}', b"[-Infinity]", b"[1e999]", b"not json"):
        with pytest.raises(ReplyRefused):
            check_json(body)
