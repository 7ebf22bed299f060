"""A loopback OpenAI-compatible server that misbehaves on cue (429, 5xx, bad bodies, hangs).

Tests queue faults; each request takes the next one, and when the queue is empty the
server answers a normal chat completion (`reply_for(body)`: `reply_text` here; a subclass
may answer per request, as `replay_server.ReplayServer` does), after `latency_s` seconds
if given. It is threaded: every connection has its own thread, so concurrent requests
wait out their latency side by side. Every request is recorded (path, headers, JSON body,
arrival time) so tests can check what the client sent and when.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """One scripted answer: ok / status / malformed / empty_choices / hang / drop / raw / endless / stall / trickle."""

    kind: str
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    seconds: float = 0.0
    payload: bytes = b""


def ok(text: str | None = None) -> Fault:
    return Fault("ok", body=text)


def status(code: int, body: str | None = None, **headers: str) -> Fault:
    return Fault("status", status=code, headers={k.replace("_", "-"): v for k, v in headers.items()}, body=body)


def malformed() -> Fault:
    return Fault("malformed")


def empty_choices() -> Fault:
    return Fault("empty_choices")


def hang(seconds: float) -> Fault:
    return Fault("hang", seconds=seconds)


def drop() -> Fault:
    return Fault("drop")


def raw(payload: bytes, **headers: str) -> Fault:
    """HTTP 200 with exactly these body bytes (a gzip bomb with `Content_Encoding="gzip"`, JSON with NaN, ...)."""
    return Fault("raw", payload=payload, headers={k.replace("_", "-"): v for k, v in headers.items()})


def endless(interval_s: float = 0.01) -> Fault:
    """HTTP 200 with a chunked body that never ends: a chunk of spaces every `interval_s` until the client goes."""
    return Fault("endless", seconds=interval_s)


def trickle_headers(interval_s: float) -> Fault:
    """HTTP 200 whose header lines never end: one byte every `interval_s` (each read of the client gets one)."""
    return Fault("trickle", seconds=interval_s)


def stall(seconds: float, after_s: float = 0.0) -> Fault:
    """HTTP 200 that promises a body, sends its first bytes `after_s` after the headers, then says nothing for `seconds`."""
    return Fault("stall", seconds=seconds, body=str(after_s))


@dataclass
class Recorded:
    """What one request looked like."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


DEFAULT_TEXT = "<cypher>MATCH (m:MK) RETURN m.nama</cypher>"


def free_port() -> int:
    """A loopback port nothing listens on now (connections to it are refused until a server binds it)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class FaultServer:
    """Run with `with FaultServer() as srv:`; `srv.base_url` is the `/v1` root for the SDK."""

    def __init__(self, reply_text: str = DEFAULT_TEXT, port: int = 0, latency_s: float = 0.0) -> None:
        """`port` 0 picks a free one; a fixed port lets a test refuse first and answer later at one URL.

        `latency_s`: how long every normal answer takes (a model's think time), slept per request.
        """
        self.reply_text = reply_text
        self.latency_s = latency_s
        self.faults: deque[Fault] = deque()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._connections: set[Any] = set()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fault-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def queue(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def _next(self) -> Fault:
        with self._lock:
            return self.faults.popleft() if self.faults else ok()

    def reply_for(self, body: dict[str, Any]) -> str:
        """The text of a normal answer to this request; a `LookupError` answers HTTP 400 with its message."""
        return self.reply_text

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()  # wakes hanging handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:  # a stopped server closes its kept-alive connections too, as a real one does
            connections, self._connections = list(self._connections), set()
        for connection in connections:
            try:
                connection.shutdown(2)
            except OSError:
                pass
        self._thread.join(timeout=5)

    def _completion_body(self, model: str, text: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fault-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart (delayed ACK)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                super().finish()

            def _send(
                self,
                code: int,
                payload: bytes,
                headers: dict[str, str] | None = None,
                content_type: str = "application/json",
            ) -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def _misbehave(self, fault: Fault) -> None:
                """An endless chunked body, or a body that stops after its first bytes."""
                self.close_connection = True
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                chunked = fault.kind == "endless"
                self.send_header(*(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", "1000")))
                self.end_headers()
                try:
                    if not chunked:
                        self.wfile.flush()
                        server._stop.wait(float(fault.body or 0))
                        self.wfile.write(b'{"id": "x", ')
                        self.wfile.flush()
                        server._stop.wait(fault.seconds)
                        return
                    self.wfile.write(b"1\r\n{\r\n")
                    while not server._stop.wait(fault.seconds):
                        self.wfile.write(b"40\r\n" + b" " * 64 + b"\r\n")
                        self.wfile.flush()
                except OSError:
                    pass  # the client went away: what it should do

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                server._record(Recorded(self.path, dict(self.headers.items()), body, time.monotonic()))
                fault = server._next()
                model = str(body.get("model", "fault-model"))
                if fault.kind == "ok":
                    if server.latency_s:
                        server._stop.wait(server.latency_s)
                    try:
                        text = fault.body if fault.body is not None else server.reply_for(body)
                    except LookupError as exc:
                        err = {"error": {"message": str(exc), "type": "no_reply", "code": None}}
                        self._send(400, json.dumps(err).encode())
                        return
                    try:
                        self._send(200, json.dumps(server._completion_body(model, text)).encode())
                    except OSError:
                        self.close_connection = True  # the client went away while we waited (killed, timed out)
                elif fault.kind == "status":
                    err = fault.body or json.dumps(
                        {"error": {"message": f"injected HTTP {fault.status}", "type": "fault", "code": None}}
                    )
                    self._send(fault.status, err.encode(), fault.headers)
                elif fault.kind == "malformed":
                    self._send(200, b'{"id": "chatcmpl-broken", "choices": [ {"message": ')
                elif fault.kind == "empty_choices":
                    self._send(200, json.dumps({"id": "x", "object": "chat.completion", "choices": []}).encode())
                elif fault.kind == "hang":
                    server._stop.wait(fault.seconds)
                    try:
                        self._send(200, json.dumps(server._completion_body(model, server.reply_text)).encode())
                    except OSError:
                        pass  # the client gave up long ago
                elif fault.kind == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                elif fault.kind == "raw":
                    try:
                        self._send(200, fault.payload, fault.headers)
                    except OSError:
                        self.close_connection = True  # the client stopped reading (a refused body): what it should do
                elif fault.kind in ("endless", "stall"):
                    self._misbehave(fault)
                elif fault.kind == "trickle":
                    self.close_connection = True
                    try:
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                        while not server._stop.wait(fault.seconds):
                            self.wfile.write(b"a")
                            self.wfile.flush()
                    except OSError:
                        pass  # the client went away
                else:  # pragma: no cover - a typo in a test
                    self._send(500, b"unknown fault kind")

        return Handler
