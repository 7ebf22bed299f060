"""Any OpenAI-compatible chat endpoint (Groq, OpenRouter, vLLM, Ollama, llama.cpp server) via the `openai` SDK.

The SDK's own retries are off; this module retries 429, 408/409, 5xx, timeouts, refused and
dropped connections and malformed bodies with exponential backoff and full jitter, honours
`Retry-After` / `retry-after-ms`, and gives up when attempts or the total wait budget run
out, with an `LLMUnavailableError` naming the endpoint and the last status (a refused
connection asks "is the server running?"): an outage, which a study never records as an
answer. Every reply is read within bounds (`bounded_body`: one deadline, `timeout_s`, for the
whole request; a size cap, gzip inflated within it; JSON without NaN or deep nesting): a reply
past them is a timeout or a malformed body like any other. The API key lives only in the SDK client: it is not in `repr`, error messages or
logs (messages are redacted).
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from t2c_lib.llm.base import Completion, LLMConfigError, LLMError, LLMUnavailableError, Message, Usage

log = logging.getLogger(__name__)

GROQ_BASE_URL = "https://api.groq.com/openai/v1"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
# (environment variable holding the key, base URL) tried in this order when T2C_LLM_BASE_URL is unset.
PRESETS: tuple[tuple[str, str, str], ...] = (
    ("groq", "GROQ_API_KEY", GROQ_BASE_URL),
    ("openrouter", "OPENROUTER_API_KEY", OPENROUTER_BASE_URL),
)
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})
_KEYLIKE_RE = re.compile(r"\b(?:sk|gsk|sk-or|sk-proj|xai|hf)[-_][A-Za-z0-9_\-*.]{6,}")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: attempts, backoff curve, per-request timeout and a cap on total waiting."""

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    max_total_wait_s: float = 180.0
    timeout_s: float = 120.0
    jitter: bool = True

    def backoff(self, retry_index: int, rng: random.Random) -> float:
        """Delay before retry number `retry_index` (0-based): exponential, capped, full jitter."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2**retry_index))
        return rng.uniform(ceiling / 2, ceiling) if self.jitter else ceiling


@dataclass(frozen=True)
class Endpoint:
    """Where requests go. The key is excluded from `repr` and equality output."""

    base_url: str
    api_key: str = field(repr=False, default="")
    name: str = ""
    grammar_field: str = ""  # request field that takes a GBNF grammar (llama.cpp server: grammar; vLLM: guided_grammar)

    @property
    def host(self) -> str:
        parts = urlsplit(self.base_url)
        return parts.netloc or self.base_url

    @property
    def label(self) -> str:
        """A safe name for messages: preset name and host, never the key."""
        return f"{self.name} ({self.base_url})" if self.name else self.base_url


def resolve_endpoint(env: Mapping[str, str]) -> Endpoint | None:
    """The endpoint the environment configures: T2C_LLM_BASE_URL first, then the presets; None if none."""
    base_url = (env.get("T2C_LLM_BASE_URL") or "").strip()
    if base_url:
        key = env.get("T2C_LLM_API_KEY") or ""
        if not key:
            key = _own_preset_key(base_url, env)
        return Endpoint(base_url.rstrip("/"), key or "not-needed", "custom", grammar_field_from(env))
    for name, key_var, url in PRESETS:
        if env.get(key_var):
            return Endpoint(url, env[key_var], name)
    return None


GRAMMAR_FIELDS = ("grammar", "guided_grammar")  # llama.cpp server's field, vLLM's guided-decoding field


def grammar_field_from(env: Mapping[str, str]) -> str:
    """`T2C_LLM_GRAMMAR_FIELD`: which request field carries the grammar of `decoding: constrained` ("" = none)."""
    value = (env.get("T2C_LLM_GRAMMAR_FIELD") or "").strip()
    if value and value not in GRAMMAR_FIELDS:
        raise LLMConfigError(
            f"T2C_LLM_GRAMMAR_FIELD={value!r}: valid: {', '.join(GRAMMAR_FIELDS)} "
            "(grammar for a llama.cpp server, guided_grammar for vLLM), or unset"
        )
    return value


def _own_preset_key(base_url: str, env: Mapping[str, str]) -> str:
    """A preset's key, only when the custom URL is that provider's own (https, same host); else ""."""
    parts = urlsplit(base_url)
    for _, key_var, url in PRESETS:
        own = urlsplit(url)
        if parts.scheme == "https" and parts.hostname and parts.hostname == own.hostname and parts.port in (None, 443):
            return env.get(key_var) or ""
    return ""


def check_endpoint(endpoint: Endpoint) -> None:
    """Refuse, before any request, a base URL or key that cannot be sent (no retry could help)."""
    parts = urlsplit(endpoint.base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMConfigError(
            f"malformed base URL {redact(endpoint.base_url, endpoint.api_key)!r}: it needs http:// or https:// "
            "and a host, e.g. http://127.0.0.1:8000/v1 (check T2C_LLM_BASE_URL)"
        )
    for position, char in enumerate(endpoint.api_key):
        if ord(char) > 126:
            why = f"non-ASCII character at position {position + 1}"
        elif char in "\r\n":
            why = f"line break at position {position + 1}"
        elif ord(char) < 32 or ord(char) == 127:
            why = f"control character at position {position + 1}"
        else:
            continue
        raise LLMConfigError(f"invalid API key ({why}; HTTP headers cannot carry it) for {endpoint.label}")


def config_error_hint(status: int, detail: str) -> str | None:
    """Why a client error can never succeed on retry (auth, permission, unknown model), or None."""
    lowered = detail.lower()
    if status == 401:
        return "authentication failed: check the API key"
    if status == 403:
        return "access forbidden: check the API key and its permissions"
    if status == 404:
        return "not found: check the model name (T2C_MODEL) and the base URL"
    if status in (400, 422) and any(
        p in lowered
        for p in (
            "model_not_found",
            "not a valid model",
            "model not found",
            "does not exist",
            "unknown model",
            "invalid model",
        )
    ):
        return "unknown model: check the model name (T2C_MODEL)"
    return None


def redact(text: str, secret: str | None) -> str:
    """Remove the key (and anything shaped like an API key, even partly masked) from text."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    return _KEYLIKE_RE.sub("[redacted]", text)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or HTTP date); None if absent."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms:
        try:
            value = float(raw_ms) / 1000.0
            if math.isfinite(value) and value >= 0:
                return value
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if not raw:
        return None
    try:
        value = float(raw)
        return value if math.isfinite(value) and value >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class _Retryable(Exception):
    """One failed attempt that may succeed if tried again."""

    def __init__(self, what: str, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.status = status
        self.retry_after = retry_after


class OpenAICompatModel:
    """A `ChatModel` backed by an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(
        self,
        model: str,
        endpoint: Endpoint,
        retry: RetryPolicy | None = None,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        grammar: str | None = None,
    ) -> None:
        import openai  # imported here so that `t2c_lib.llm` loads without the SDK

        if not model:
            raise LLMError(f"no model name given for endpoint {endpoint.label}; set T2C_MODEL")
        check_endpoint(endpoint)
        self.model = model
        self.endpoint = endpoint
        self.retry = retry or RetryPolicy()
        self.seed = seed
        self.model_id = f"{model}@{endpoint.host}"
        self.fingerprint = ""
        self.grammar = grammar
        if grammar:
            if not endpoint.grammar_field:
                raise LLMConfigError(
                    f"decoding: constrained needs an endpoint that takes a GBNF grammar; {self.model_id!r} at "
                    f"{endpoint.label} gets none unless T2C_LLM_GRAMMAR_FIELD names the request field "
                    "(grammar for a llama.cpp server, guided_grammar for vLLM). Or use decoding: free"
                )
            from t2c_lib.llm.grammar import grammar_digest

            self.fingerprint = f"grammar={grammar_digest(grammar)}"
        self._init_args = (model, endpoint, retry, seed, sleep, rng)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._openai = openai
        from openai.types.chat import ChatCompletion

        self._completion_type = ChatCompletion
        self._client = _shared_client(endpoint, self.retry.timeout_s)
        self.pace: Callable[[], float] | None = None
        """Called before every request, retries included (a rate limiter's `acquire`); returns seconds waited."""

    def __repr__(self) -> str:
        return f"OpenAICompatModel(model={self.model!r}, endpoint={self.endpoint.label!r})"

    def variant(self, grammar: str | None) -> OpenAICompatModel:
        """The same model and endpoint with `grammar` (None: free decoding): a new instance."""
        return OpenAICompatModel(*self._init_args, grammar=grammar)

    def _fail(self, what: str, status: int | None, attempts: int, hint: str | None = None) -> LLMError:
        status_text = f"HTTP {status}" if status is not None else "no HTTP status"
        if hint:  # a configuration error: one line that says what to fix, and the run stops
            message = f"{hint} (model {self.model!r} at {self.endpoint.label}: {status_text}: {what})"
            return LLMConfigError(redact(message, self.endpoint.api_key))
        message = (
            f"model {self.model!r} at {self.endpoint.label} failed after {attempts} attempt(s): {status_text}: {what}"
        )
        return LLMUnavailableError(redact(message, self.endpoint.api_key))

    def complete(
        self,
        messages: Sequence[Message],
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Send the chat request, retrying transient failures; raise `LLMError` when it gives up.

        `seed` overrides the model's seed for this request (the `vote` strategy's samples).
        """
        policy = self.retry
        started = time.monotonic()
        paced = 0.0  # seconds spent waiting for the rate limiter: not part of the retry wait budget
        attempt = 0
        while True:
            attempt += 1
            if self.pace is not None:
                paced += self.pace()
            try:
                return self._once(messages, temperature, max_tokens, stop, seed)
            except _Retryable as failure:
                if attempt >= policy.max_attempts:
                    raise self._fail(failure.what, failure.status, attempt) from None
                with self._rng_lock:
                    if failure.retry_after is not None:
                        # The server said when; add up to 10% jitter so parallel workers spread out.
                        spread = self._rng.uniform(0, 0.1 * failure.retry_after) if policy.jitter else 0.0
                        delay = failure.retry_after + spread
                    else:
                        delay = policy.backoff(attempt - 1, self._rng)
                elapsed = time.monotonic() - started - paced
                budget_left = policy.max_total_wait_s - elapsed
                if delay > budget_left:
                    raise self._fail(
                        f"{failure.what}; next retry in {delay:.1f}s would exceed the "
                        f"{policy.max_total_wait_s:.0f}s total wait budget",
                        failure.status,
                        attempt,
                    ) from None
                log.warning(
                    "%s at %s: %s; retry %d/%d in %.2fs",
                    self.model,
                    self.endpoint.label,
                    redact(failure.what, self.endpoint.api_key),
                    attempt,
                    policy.max_attempts - 1,
                    delay,
                )
                self._sleep(delay)

    def _once(
        self,
        messages: Sequence[Message],
        temperature: float,
        max_tokens: int,
        stop: Sequence[str] | None,
        seed: int | None = None,
    ) -> Completion:
        """One HTTP request; transient problems become `_Retryable`, permanent ones `LLMError`."""
        from t2c_lib.llm.bounded_body import ReplyRefused

        openai = self._openai
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if stop:
            body["stop"] = list(stop)
        if (seed if seed is not None else self.seed) is not None:
            body["seed"] = seed if seed is not None else self.seed
        if self.grammar:
            body[self.endpoint.grammar_field] = self.grammar
        t0 = time.perf_counter()
        try:
            # The SDK's documented raw request (`client.post`), not `chat.completions.create`: the body is
            # plain JSON already, and create's per-field type transform of every message cost ~5 ms of
            # CPU per call under the GIL, which many workers share (benchmarks/endpoint_workers.py).
            response = _within(
                self.retry.timeout_s + DEADLINE_GRACE_S,
                lambda: self._client.post("/chat/completions", body=body, cast_to=self._completion_type),
            )
        except (openai.APITimeoutError, _Overdue):
            raise _Retryable(f"no response within {self.retry.timeout_s:g}s (timeout)") from None
        except openai.APIConnectionError as exc:
            refused_reply = _cause(exc, ReplyRefused)
            if refused_reply is not None:
                raise _Retryable(f"malformed response body: {_short(refused_reply)}", 200) from None
            if _refused(exc):
                raise _Retryable(f"connection refused: is the server running at {self.endpoint.base_url}?") from None
            raise _Retryable(f"connection failed: {_short(exc)}") from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            detail = _short(exc)
            if status in RETRYABLE_STATUS or status >= 500:
                raise _Retryable(detail, status, parse_retry_after(exc.response.headers)) from None
            raise self._fail(detail, status, 1, config_error_hint(status, detail)) from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise _Retryable(f"malformed response body: {_short(exc)}", 200) from None
        except ReplyRefused as exc:  # the SDK passed the reply's refusal on unwrapped
            raise _Retryable(f"malformed response body: {_short(exc)}", 200) from None
        latency = time.perf_counter() - t0
        return self._to_completion(response, latency)

    def _to_completion(self, response: Any, latency: float) -> Completion:
        choices = getattr(response, "choices", None)
        if isinstance(response, str) or not choices:
            raise _Retryable("malformed response body: no choices", 200)
        message = getattr(choices[0], "message", None)
        if message is None:
            raise _Retryable("malformed response body: choice has no message", 200)
        text = getattr(message, "content", None) or ""
        if not isinstance(text, str):
            raise _Retryable("malformed response body: message content is not text", 200)
        # Reasoning models on some providers return their thinking in a separate field.
        reasoning = _extra_field(message, "reasoning_content") or _extra_field(message, "reasoning")
        if reasoning and "<think>" not in text:
            text = f"<think>{reasoning}</think>\n{text}"
        usage = getattr(response, "usage", None)
        prompt_tokens = _token_count(usage, "prompt_tokens")
        completion_tokens = _token_count(usage, "completion_tokens")
        return Completion(
            text=text,
            usage=Usage(prompt_tokens, completion_tokens),
            latency_s=latency,
            model=self.model_id,
        )


_CLIENTS: dict[tuple[str, str, float], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _shared_client(endpoint: Endpoint, timeout_s: float) -> Any:
    """One SDK client per endpoint, key and timeout in this process, shared by every model instance and thread.

    A study opens a model per cell (and `t2c run` runs cells at once); each new client built
    an SSL context from the CA bundle (~0.1 s of CPU) and opened its own connections. The
    SDK's client is safe to share between threads. The key is in the client, never in the
    cache key (that holds its sha256).
    """
    import hashlib

    import openai

    from t2c_lib.llm.bounded_body import ReplyBounds, bound_replies

    key = (endpoint.base_url, hashlib.sha256(endpoint.api_key.encode("utf-8")).hexdigest(), float(timeout_s))
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = openai.OpenAI(
                base_url=endpoint.base_url,
                api_key=endpoint.api_key or "not-needed",
                max_retries=0,  # our retries are the only ones
                timeout=timeout_s,
                http_client=bound_replies(openai.DefaultHttpxClient(timeout=timeout_s), ReplyBounds(timeout_s)),
            )
            _CLIENTS[key] = client
        return client


MAX_TOKEN_COUNT = 10**9
DEADLINE_GRACE_S = 0.5
"""How long past `timeout_s` a request may take before its caller stops waiting for it."""


class _Overdue(Exception):
    """The request did not end within its deadline (headers trickled in, say): its caller stopped waiting."""


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()` run in a thread of its own, its result or exception; `_Overdue` once `seconds` pass without one.

    httpx's timeout bounds each read, and the reply's own watchdog (`bounded_body`) starts with the
    headers, so a server that sends its headers a byte at a time could hold a request for a read
    timeout per byte; the caller stops waiting here instead. The thread is left to end by itself (each
    of its reads still times out, and the server's connection closes with it)."""
    outcome: list[tuple[bool, Any]] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=run, name="t2c-llm-request", daemon=True).start()
    if not done.wait(seconds):
        raise _Overdue()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _token_count(usage: Any, name: str) -> int:
    """A usage count of the reply: a whole number from 0 to `MAX_TOKEN_COUNT` (0 when absent), else a malformed body."""
    value = getattr(usage, name, None) if usage else None
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TOKEN_COUNT:
        raise _Retryable(f"malformed response body: usage {name} is {str(value)[:40]!r}, not a token count", 200)
    return int(value)


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The exception of `kind` that `exc` is or was raised from (its cause or context chain), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _refused(exc: BaseException) -> bool:
    """Whether a connection error is (caused by) a refused connection: nothing listens at the address."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or "connection refused" in str(current).lower():
            return True
        current = current.__cause__ or current.__context__
    return False


def _extra_field(obj: Any, name: str) -> str:
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value if isinstance(value, str) else ""


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
