"""The OpenAI-compatible client through the real `openai` SDK against loopback HTTP servers.

The fault server answers 429 + Retry-After, 5xx, malformed bodies, hangs and dropped
connections on cue; each must end in a successful retry or a clear `LLMError`, within a
bounded time. A slow test drives llama-cpp-python's own OpenAI-compatible server.
"""

from __future__ import annotations

import email.utils
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from t2c_lib.llm.base import LLMError, Message
from t2c_lib.llm.cache import CachedModel, ResponseCache
from t2c_lib.llm.factory import make_model
from t2c_lib.llm.openai_compat import (
    GROQ_BASE_URL,
    OPENROUTER_BASE_URL,
    Endpoint,
    OpenAICompatModel,
    RetryPolicy,
    parse_retry_after,
    redact,
    resolve_endpoint,
)
from tests.helpers import ROOT
from tests.helpers.fault_server import FaultServer, drop, empty_choices, hang, malformed, status

pytestmark = pytest.mark.slow  # a loopback endpoint with real retries and timeouts

KEY = "sk-t2c-secret-0123456789abcdef"
MESSAGES = [Message("system", "You write Cypher."), Message("user", "List all courses.")]
FAST = RetryPolicy(max_attempts=4, base_delay_s=0.05, max_delay_s=0.2, max_total_wait_s=10, timeout_s=1.0)


@pytest.fixture()
def server():
    with FaultServer() as srv:
        yield srv


def _model(srv: FaultServer, policy: RetryPolicy = FAST, key: str = KEY) -> OpenAICompatModel:
    return OpenAICompatModel("fault-model", Endpoint(srv.base_url, key, "fault"), policy, seed=3)


def _header(rec, name: str) -> str | None:
    return {k.lower(): v for k, v in rec.headers.items()}.get(name.lower())


def test_plain_call_sends_the_request_and_reads_usage(server: FaultServer) -> None:
    completion = _model(server).complete(MESSAGES, temperature=0.2, max_tokens=33, stop=["\n\n"])
    assert completion.text == "<cypher>MATCH (m:MK) RETURN m.nama</cypher>"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (11, 7)
    assert completion.model == f"fault-model@{server.base_url.split('/')[2]}"
    assert completion.latency_s > 0 and not completion.cached
    [rec] = server.requests
    assert rec.path == "/v1/chat/completions"
    assert _header(rec, "authorization") == f"Bearer {KEY}"
    assert rec.body["messages"] == [m.to_dict() for m in MESSAGES]
    assert (rec.body["temperature"], rec.body["max_tokens"], rec.body["stop"], rec.body["seed"]) == (
        0.2,
        33,
        ["\n\n"],
        3,
    )


def test_grammar_goes_in_the_configured_field(server: FaultServer) -> None:
    """`decoding: constrained` on an endpoint: the GBNF text in the field T2C_LLM_GRAMMAR_FIELD names, nothing else changed."""
    for field_name in ("grammar", "guided_grammar"):
        model = OpenAICompatModel("fault-model", Endpoint(server.base_url, KEY, "fault", field_name), FAST, seed=3)
        model.variant(grammar='root ::= "<cypher>MATCH (m) RETURN m</cypher>"').complete(MESSAGES, max_tokens=8)
        model.complete(MESSAGES, max_tokens=8)
    held, free, vllm, vllm_free = server.requests
    assert held.body["grammar"].startswith("root ::=") and "guided_grammar" not in held.body
    assert vllm.body["guided_grammar"] == held.body["grammar"] and "grammar" not in vllm.body
    assert "grammar" not in free.body and "guided_grammar" not in vllm_free.body
    assert {k: v for k, v in held.body.items() if k != "grammar"} == free.body


def test_sdk_retries_are_off(server: FaultServer) -> None:
    server.queue(status(500))
    with pytest.raises(LLMError):
        _model(server, RetryPolicy(max_attempts=1, timeout_s=1.0)).complete(MESSAGES)
    assert len(server.requests) == 1


def test_429_honours_retry_after(server: FaultServer) -> None:
    server.queue(status(429, retry_after="1"))
    t0 = time.monotonic()
    completion = _model(server).complete(MESSAGES)
    assert "MATCH" in completion.text
    first, second = server.requests
    gap = second.at - first.at
    assert 1.0 <= gap < 1.0 + 0.1 + 0.5  # the server's 1 s plus at most 10% jitter, plus overhead
    assert time.monotonic() - t0 < 3


def test_retry_after_ms_header(server: FaultServer) -> None:
    server.queue(status(429, retry_after_ms="300"))
    _model(server).complete(MESSAGES)
    gap = server.requests[1].at - server.requests[0].at
    assert 0.3 <= gap < 0.8


def test_retry_after_beyond_budget_gives_up_at_once(server: FaultServer) -> None:
    server.queue(status(429, retry_after="3600"))
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        _model(server).complete(MESSAGES)
    assert time.monotonic() - t0 < 2
    message = str(err.value)
    assert "HTTP 429" in message and server.base_url in message and "budget" in message
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "fault",
    [status(500), status(502), status(503), status(529), malformed(), empty_choices(), drop()],
    ids=["500", "502", "503", "529", "malformed", "empty_choices", "dropped"],
)
def test_transient_fault_then_success(server: FaultServer, fault) -> None:
    server.queue(fault, fault)
    t0 = time.monotonic()
    completion = _model(server).complete(MESSAGES)
    assert completion.text.startswith("<cypher>")
    assert len(server.requests) == 3
    assert time.monotonic() - t0 < 3


def test_hang_past_timeout_is_retried(server: FaultServer) -> None:
    server.queue(hang(30))
    t0 = time.monotonic()
    completion = _model(server).complete(MESSAGES)
    elapsed = time.monotonic() - t0
    assert "MATCH" in completion.text and len(server.requests) == 2
    assert 1.0 <= elapsed < 3.0  # one 1 s timeout, one short backoff


def test_persistent_hang_ends_in_a_clear_error_in_bounded_time(server: FaultServer) -> None:
    server.queue(*[hang(30)] * 5)
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.05, max_delay_s=0.1, max_total_wait_s=10, timeout_s=0.5)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        _model(server, policy).complete(MESSAGES)
    assert time.monotonic() - t0 < 3  # 3 x 0.5 s timeouts + backoff
    assert "timeout" in str(err.value) and "3 attempt(s)" in str(err.value) and server.base_url in str(err.value)


def test_persistent_5xx_gives_up_naming_endpoint_and_status(server: FaultServer) -> None:
    server.queue(*[status(503)] * 10)
    with pytest.raises(LLMError) as err:
        _model(server).complete(MESSAGES)
    assert len(server.requests) == FAST.max_attempts
    assert "HTTP 503" in str(err.value) and "fault-model" in str(err.value) and server.base_url in str(err.value)


def test_total_wait_budget_bounds_the_retries(server: FaultServer) -> None:
    server.queue(*[status(500)] * 50)
    policy = RetryPolicy(
        max_attempts=50, base_delay_s=0.2, max_delay_s=0.2, max_total_wait_s=1.0, timeout_s=1.0, jitter=False
    )
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        _model(server, policy).complete(MESSAGES)
    assert time.monotonic() - t0 < 1.6
    assert "budget" in str(err.value) and len(server.requests) < 10


@pytest.mark.parametrize("code", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(server: FaultServer, code: int) -> None:
    server.queue(status(code))
    with pytest.raises(LLMError) as err:
        _model(server).complete(MESSAGES)
    assert len(server.requests) == 1 and f"HTTP {code}" in str(err.value)


def test_key_never_leaks_into_errors_logs_repr_or_cache(server: FaultServer, tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.DEBUG)  # the SDK and httpx log requests at debug level
    echo = '{"error": {"message": "Incorrect API key provided: ' + KEY + '. Also sk-t2c-se***cdef"}}'
    server.queue(status(500), status(401, body=echo))
    model = _model(server)
    cached = CachedModel(model, ResponseCache(tmp_path / "c.sqlite"))
    with pytest.raises(LLMError) as err:
        cached.complete(MESSAGES)
    cached.complete(MESSAGES)  # a success, stored in the cache
    assert _header(server.requests[0], "authorization") == f"Bearer {KEY}"  # it was really sent
    visible = [str(err.value), repr(err.value), repr(model), repr(model.endpoint), repr(cached), caplog.text]
    for text in visible:
        assert KEY not in text and "sk-t2c-se***" not in text
    assert "[redacted]" in str(err.value)
    blob = (tmp_path / "c.sqlite").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("c.sqlite-*") if p.is_file()
    )
    assert KEY.encode() not in blob


def test_parse_retry_after_forms() -> None:
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert 28 <= parse_retry_after({"Retry-After": date}, now=now) <= 31
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_grows_and_is_capped() -> None:
    import random

    policy = RetryPolicy(base_delay_s=1, max_delay_s=8, jitter=False)
    assert [policy.backoff(i, random.Random(0)) for i in range(5)] == [1, 2, 4, 8, 8]
    jittered = RetryPolicy(base_delay_s=1, max_delay_s=8)
    rng = random.Random(0)
    assert all(2 <= jittered.backoff(2, rng) <= 4 for _ in range(50))


def test_redact() -> None:
    assert redact(f"bad key {KEY}!", KEY) == "bad key [redacted]!"
    assert "gsk_" not in redact("key gsk_abcdefghijklmnop rejected", None)


def test_endpoint_presets_and_factory() -> None:
    assert resolve_endpoint({}) is None
    groq = resolve_endpoint({"GROQ_API_KEY": "gsk_x1234567"})
    assert groq.base_url == GROQ_BASE_URL and groq.name == "groq"
    router = resolve_endpoint({"OPENROUTER_API_KEY": "sk-or-v1-abc"})
    assert router.base_url == OPENROUTER_BASE_URL
    custom = resolve_endpoint({"T2C_LLM_BASE_URL": "http://127.0.0.1:9/v1/", "GROQ_API_KEY": "gsk_x1234567"})
    assert custom.base_url == "http://127.0.0.1:9/v1" and custom.api_key == "not-needed"
    assert "gsk_x1234567" not in repr(groq)
    model = make_model(
        env={"T2C_LLM_BASE_URL": "http://127.0.0.1:9/v1", "T2C_MODEL": "qwen2.5-coder", "T2C_LLM_TIMEOUT": "7"}
    )
    assert (
        isinstance(model, OpenAICompatModel)
        and model.retry.timeout_s == 7
        and model.model_id == "qwen2.5-coder@127.0.0.1:9"
    )
    from t2c_lib.llm.registry import QWEN_1_5B

    assert make_model("local", env={"GROQ_API_KEY": "gsk_x1234567"}).model_id == QWEN_1_5B.model_id
    assert make_model(env={}).model_id == QWEN_1_5B.model_id
    with pytest.raises(LLMError, match="T2C_MODEL"):
        make_model(env={"GROQ_API_KEY": "gsk_x1234567"})
    with pytest.raises(LLMError, match="T2C_LLM_BASE_URL"):
        make_model("some-remote-model", env={})


@pytest.mark.parametrize("preset_var", ["GROQ_API_KEY", "OPENROUTER_API_KEY"])
def test_a_custom_endpoint_never_receives_a_provider_key(preset_var: str) -> None:
    """Issue 12: a provider key goes only to its provider; a custom URL gets T2C_LLM_API_KEY or nothing."""
    provider_key = "sk-or-v1-providersecret123"
    with FaultServer() as srv:
        env = {
            "T2C_LLM_BASE_URL": srv.base_url,
            "T2C_MODEL": "m",
            preset_var: provider_key,
            "T2C_LLM_MAX_ATTEMPTS": "1",
        }
        make_model(env=env).complete([Message("user", "hi")])
        env["T2C_LLM_API_KEY"] = "custom-key-42"
        make_model(env=env).complete([Message("user", "hi")])
    sent = [{k.lower(): v for k, v in r.headers.items()}.get("authorization", "") for r in srv.requests]
    assert sent == ["Bearer not-needed", "Bearer custom-key-42"]
    assert not any(provider_key in str(r.headers) or provider_key in str(r.body) for r in srv.requests)


def test_a_preset_key_follows_its_own_provider_host_only() -> None:
    own = resolve_endpoint({"T2C_LLM_BASE_URL": "https://api.groq.com/openai/v1", "GROQ_API_KEY": "gsk_x1234567"})
    assert own.api_key == "gsk_x1234567"
    for url in (
        "http://api.groq.com/openai/v1",
        "https://api.groq.com.evil.example/v1",
        "https://evil.example/api.groq.com",
        "https://api.groq.com:8443/v1",
        "https://openrouter.ai/api/v1",
    ):
        assert resolve_endpoint({"T2C_LLM_BASE_URL": url, "GROQ_API_KEY": "gsk_x1234567"}).api_key == "not-needed", url


# --- llama-cpp-python's own OpenAI-compatible server, with the packaged model -------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LlamaServer:
    base_url: str
    proc: subprocess.Popen
    output: Callable[[], str]

    def check_alive(self) -> None:
        assert self.proc.poll() is None, f"llama_cpp.server died (exit {self.proc.returncode}):\n{self.output()}"


@pytest.fixture(scope="module")
def llama_server():
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]")
    from t2c_lib.llm.local import model_path

    port = _free_port()
    launcher = str(ROOT / "tests" / "helpers" / "llama_server.py")  # `python -m llama_cpp.server`, AMX-safe
    cmd = [
        sys.executable,
        launcher,
        "--model",
        str(model_path("local/gemma-3-270m")),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "2",
        "--seed",
        "42",
        "--model_alias",
        "gemma-3-270m",
        "--verbose",
        "False",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    log_file = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, text=True, env=env)

    def output() -> str:
        log_file.seek(0)
        return log_file.read()[-3000:]

    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {output()}")
        try:
            urllib.request.urlopen(f"{base}/models", timeout=1).read()
            break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start within 90 s")
    yield LlamaServer(base, proc, output)
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.mark.slow
def test_llama_cpp_server_through_the_sdk(llama_server: LlamaServer, monkeypatch) -> None:
    monkeypatch.setenv("T2C_LLM_BASE_URL", llama_server.base_url)
    monkeypatch.setenv("T2C_LLM_MAX_ATTEMPTS", "2")
    monkeypatch.delenv("T2C_LLM_API_KEY", raising=False)
    model = make_model("gemma-3-270m")
    assert isinstance(model, OpenAICompatModel)
    # Through the GGUF's chat template; the base model answers this one with text (some prompts get an instant end-of-turn).
    messages = [
        Message("system", "You write Cypher queries."),
        Message("user", "Which courses are in semester 3? Schema: (:MK {nama, semester})"),
    ]
    try:
        first = model.complete(messages, temperature=0.0, max_tokens=16)
        second = model.complete(messages, temperature=0.0, max_tokens=16)
    finally:
        llama_server.check_alive()
    assert first.text.strip()
    assert first.usage.prompt_tokens > 5 and 0 < first.usage.completion_tokens <= 16
    assert second.text == first.text  # greedy decoding on the server too
    assert first.model == f"gemma-3-270m@{llama_server.base_url.split('/')[2]}"


@pytest.mark.slow
def test_llama_cpp_server_holds_the_reply_to_the_grammar(llama_server: LlamaServer, monkeypatch) -> None:
    """A real llama.cpp server given the schema grammar in its `grammar` field answers with a read-only query."""
    import tempfile

    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph.ladybug import LadybugStore
    from t2c_lib.llm.factory import constrained
    from t2c_lib.llm.grammar import cypher_grammar
    from t2c_lib.llm.parse import QuerySource, parse_response

    monkeypatch.setenv("T2C_LLM_BASE_URL", llama_server.base_url)
    monkeypatch.setenv("T2C_LLM_GRAMMAR_FIELD", "grammar")
    monkeypatch.delenv("T2C_LLM_API_KEY", raising=False)
    with tempfile.TemporaryDirectory() as root:
        with LadybugStore(load_dataset("kurikulum"), root=root) as store:
            grammar = cypher_grammar(store.schema())
    model = constrained(make_model("gemma-3-270m"), grammar)
    messages = [
        Message("system", "You write Cypher queries."),
        Message("user", "Which courses are in semester 3? Schema: (:MK {nama, semester})"),
    ]
    try:
        held = model.complete(messages, temperature=0.0, max_tokens=96)
        free = make_model("gemma-3-270m").complete(messages, temperature=0.0, max_tokens=96)
    finally:
        llama_server.check_alive()
    parsed = parse_response(held.text)
    assert parsed.source is QuerySource.CYPHER_TAG and held.text.lstrip().startswith("<cypher>"), held.text
    assert parsed.query.split()[0] in ("MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN") and "RETURN" in parsed.query
    assert held.text != free.text


@pytest.mark.slow
def test_llama_cpp_server_unknown_route_is_a_clear_error(llama_server: LlamaServer) -> None:
    model = OpenAICompatModel("gemma-3-270m", Endpoint(llama_server.base_url + "/nope", "", "llama.cpp"), FAST)
    with pytest.raises(LLMError) as err:
        model.complete(MESSAGES, max_tokens=4)
    llama_server.check_alive()
    assert "HTTP 404" in str(err.value) and llama_server.base_url in str(err.value)


# --- errors no retry can fix: one clear line, no retries (issue 17) --------------------------------


@pytest.mark.parametrize("code,hint", [(401, "authentication failed"), (403, "access forbidden"), (404, "model name")])
def test_auth_and_unknown_model_are_configuration_errors(server: FaultServer, code: int, hint: str) -> None:
    from t2c_lib.llm.base import LLMConfigError

    server.queue(status(code))
    with pytest.raises(LLMConfigError) as err:
        _model(server).complete(MESSAGES)
    assert len(server.requests) == 1 and hint in str(err.value) and f"HTTP {code}" in str(err.value)


def test_400_unknown_model_is_a_configuration_error_other_400s_are_not(server: FaultServer) -> None:
    from t2c_lib.llm.base import LLMConfigError

    server.queue(
        status(400, body='{"error": {"message": "foo is not a valid model ID"}}'),
        status(400, body='{"error": {"message": "context length exceeded"}}'),
    )
    with pytest.raises(LLMConfigError, match="unknown model"):
        _model(server).complete(MESSAGES)
    with pytest.raises(LLMError) as err:
        _model(server).complete(MESSAGES)
    assert not isinstance(err.value, LLMConfigError)


@pytest.mark.parametrize("url", ["api.groq.com/openai/v1", "htp://127.0.0.1/v1", "http://", "127.0.0.1:8000"])
def test_malformed_base_url_is_refused_before_any_request(url: str) -> None:
    from t2c_lib.llm.base import LLMConfigError

    with pytest.raises(LLMConfigError, match="malformed base URL"):
        OpenAICompatModel("m", Endpoint(url, KEY, "custom"), FAST)


@pytest.mark.parametrize(
    "bad_key,why",
    [
        ("sk-t2c-sécret-0123456789", "non-ASCII"),
        ("sk-t2c-secret\n", "line break"),
        ("sk-t2c\tsecret", "control character"),
    ],
)
def test_unsendable_key_is_reported_at_once_without_retries(server: FaultServer, bad_key: str, why: str) -> None:
    from t2c_lib.llm.base import LLMConfigError

    started = time.monotonic()
    with pytest.raises(LLMConfigError) as err:
        _model(server, policy=RetryPolicy(max_attempts=6, base_delay_s=1.0), key=bad_key).complete(MESSAGES)
    assert str(err.value).startswith("invalid API key (") and why in str(err.value)
    assert bad_key.strip() not in str(err.value)
    assert server.requests == [] and time.monotonic() - started < 1.0
