"""An endpoint's reply read within bounds: one deadline for the whole read, a size cap, a checked JSON body.

An OpenAI-compatible endpoint is hostile input like any other. httpx's timeout bounds each read,
not the reply: a server that streams a chunked body forever never times out, and its gzip
decoder inflates a whole piece at once (0.6 MB of gzip can become 600 MB). `bound_replies`
gives an httpx client (the one the `openai` SDK sends with) a response hook that, before the
body is read, replaces the body's stream with `_BoundedStream`:

- the body must end by `deadline_s` after the request was sent; past it the read ends as a
  timeout, and a watchdog shuts the socket so a server that stops sending mid-body cannot hold the
  read for a further read timeout (headers that never end are `openai_compat._within`'s: the
  caller stops waiting for the request);
- at most `max_bytes` arrive, and a gzip or deflate body inflates to at most `max_bytes`
  (`gzipped.Inflater`); any other content coding is refused;
- a 2xx body must be JSON without NaN or Infinity, nested at most `MAX_JSON_DEPTH` deep.

A refusal is a `ReplyRefused` (`openai_compat` reports it as a malformed body, whether the SDK
passes it on or wraps it as a connection error); a deadline is the HTTP library's `ReadTimeout`
(the SDK's timeout). The hooks work with the library the client is from: `httpx`, or `httpx2`,
which the `openai` SDK uses from its 3.x releases.
"""

from __future__ import annotations

import json
import math
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from t2c_lib.files.gzipped import GzipReadError, Inflater

MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_JSON_DEPTH = 64
_STARTED = "t2c_started"  # the request's extension holding when it was sent
_CODINGS = ("gzip", "x-gzip", "deflate")


class ReplyRefused(Exception):
    """A reply the client will not read on: too large, a bomb, an unknown coding, or JSON it refuses."""


@dataclass(frozen=True)
class ReplyBounds:
    """The bounds of one request's reply."""

    deadline_s: float
    max_bytes: int = MAX_BODY_BYTES


def bound_replies(client: Any, bounds: ReplyBounds) -> Any:
    """`client` (an `httpx.Client` or `httpx2.Client`) with the hooks that read every reply within `bounds`
    (and ask for gzip or no coding only)."""
    stream_class = _stream_class(_library(client))

    def stamp(request: Any) -> None:
        request.extensions.setdefault(_STARTED, time.monotonic())  # a redirect keeps the first request's start
        request.headers["Accept-Encoding"] = "gzip"

    def bound(response: Any) -> None:
        started = response.request.extensions.get(_STARTED, time.monotonic())
        coding = response.headers.get("content-encoding", "").strip().lower()
        if coding not in ("", "identity", *_CODINGS):
            response.close()
            raise ReplyRefused(f"content coding {coding[:40]!r} is not one the client asked for")
        if coding:
            del response.headers["content-encoding"]  # decoded here, within the bound, not by httpx
        response.stream = stream_class(response, started + bounds.deadline_s, bounds.max_bytes, coding)

    client.event_hooks = {
        "request": [*client.event_hooks.get("request", []), stamp],
        "response": [*client.event_hooks.get("response", []), bound],
    }
    return client


def _library(client: Any) -> ModuleType:
    """The HTTP library `client` is from: `httpx2` or `httpx`."""
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        if module is not None and isinstance(client, module.Client):
            return module
    raise TypeError(f"not an httpx or httpx2 client: {type(client).__name__}")


@cache
def _stream_class(library: ModuleType) -> type:
    """`_BoundedStream` as a byte stream of `library` (its responses accept only their own kind)."""
    return type("BoundedStream", (_BoundedStream, library.SyncByteStream), {"_library": library})


class _BoundedStream:
    """The raw body of one response, read to a deadline and a size cap, inflated within the cap, JSON checked."""

    _library: ModuleType

    def __init__(self, response: Any, deadline: float, max_bytes: int, coding: str) -> None:
        self._inner = response.stream
        self._request = response.request
        self._deadline = deadline
        self._max = max_bytes
        self._inflater = Inflater(max_bytes, "reply body") if coding and coding != "identity" else None
        self._check_json = 200 <= response.status_code < 300
        self._cut = threading.Event()
        self._watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), self._shut, (response,))
        self._watchdog.daemon = True

    def __iter__(self) -> Iterator[bytes]:
        self._watchdog.start()
        received = 0
        body: list[bytes] = []
        try:
            for raw in self._inner:
                self._check_deadline()
                received += len(raw)
                if received > self._max:
                    raise ReplyRefused(f"more than {self._max} bytes; refused")
                piece = self._inflate(raw)
                body.append(piece)
                yield piece
            self._check_deadline()
            rest = self._inflate(None)
            body.append(rest)
            if self._check_json:
                check_json(b"".join(body))
            yield rest
        except self._library.TransportError:
            if self._cut.is_set():
                raise self._timeout() from None
            raise
        finally:
            self._watchdog.cancel()

    def close(self) -> None:
        self._watchdog.cancel()
        self._inner.close()

    def _inflate(self, raw: bytes | None) -> bytes:
        if self._inflater is None:
            return raw or b""
        try:
            return self._inflater.feed(raw) if raw is not None else self._inflater.finish()
        except GzipReadError as exc:
            raise ReplyRefused(str(exc)) from None

    def _check_deadline(self) -> None:
        if self._cut.is_set() or time.monotonic() > self._deadline:
            raise self._timeout()

    def _timeout(self) -> Exception:
        return self._library.ReadTimeout("the reply did not end within its deadline", request=self._request)

    def _shut(self, response: Any) -> None:
        """At the deadline: shut the socket, so a read blocked on a silent server returns now."""
        self._cut.set()
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's call, for a TLS socket too
            except OSError:
                pass


def check_json(body: bytes) -> Any:
    """`body` parsed as JSON; `ReplyRefused` for text that is not JSON, NaN or Infinity, or nesting past the bound."""
    try:
        data = json.loads(body, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ReplyRefused(f"JSON nested more than {MAX_JSON_DEPTH} levels deep; refused") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, and the refusals below
        raise ReplyRefused(f"not valid JSON: {' '.join(str(exc).split())[:120]}") from None
    if _depth_over(data, MAX_JSON_DEPTH):
        raise ReplyRefused(f"JSON nested more than {MAX_JSON_DEPTH} levels deep; refused")
    return data


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is out of range for a number")
    return value


def _depth_over(data: Any, limit: int) -> bool:
    """Whether `data` nests lists or objects more than `limit` deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            if depth > limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children if isinstance(child, (list, dict)))
    return False
