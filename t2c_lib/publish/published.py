"""Published replies: the response-cache rows a published run used, as one `replies.jsonl.gz`.

A published run (`results/published/<run_id>/`, `publish.publish`) carries the model replies
behind its numbers, so anyone can recompute its tables without asking a model. Each line is
one response-cache row, keyed exactly like the cache (`cache.cache_key` over the stored
`request`), with the model id, the model file's sha256 and the llama.cpp build fingerprint
spelled out beside it (for a packaged model they are parts of the request's `fingerprint`; an
endpoint's reply has neither).

Seeding (`seed_cache`) puts the rows whose build is this machine's into the response cache;
rows of another build are left out, and would never be served anyway: the build is part of
every key, so a request of this build never asks for them. Only rows whose request the run's
own attempt logs made are offered (`publish.publish.own_replies`): a published file is hostile
input, and a row keyed to any other request (a user's own `t2c ask`) would answer it.

The file is written deterministically (rows sorted by key, canonical JSON, gzip with mtime 0
and no file name), so the same rows always give the same bytes. It is read as hostile input:
a line that is not one well-formed row, a line or a file over the limits, or a key that is not
the hash of its request is one clear error, raised before anything is written anywhere.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from t2c_lib.errors import T2CError
from t2c_lib.files.gzipped import gzip_bytes
from t2c_lib.files.outputs import decode_json
from t2c_lib.llm.cache import CacheRow, ResponseCache, cache_key

REPLIES_FILE = "replies.jsonl.gz"
MAX_LINE_BYTES = 8 * 1024 * 1024
"""A published row longer than this (decompressed) is refused: no prompt and reply of a study come near it."""
MAX_FILE_BYTES = 512 * 1024 * 1024
"""The decompressed file is refused past this (a gzip bomb stops here, not in memory)."""

_SHA256 = re.compile(r"(?:^|;)gguf=([0-9a-f]{64})(?:;|$)")
_KEY = re.compile(r"[0-9a-f]{64}")


class PublishedRepliesError(T2CError, ValueError):
    """A published replies file that is not what `write_replies` writes."""


@dataclass(frozen=True)
class PublishedReply:
    """One published row: the cache row and what the key's fingerprint names."""

    row: CacheRow

    @property
    def fingerprint(self) -> str:
        return str(self.row.request.get("fingerprint", ""))

    @property
    def model_id(self) -> str:
        return str(self.row.request.get("model", ""))

    @property
    def model_sha256(self) -> str:
        """The GGUF's sha256 a packaged model puts in its fingerprint; "" for an endpoint."""
        found = _SHA256.search(self.fingerprint)
        return found.group(1) if found else ""

    @property
    def build(self) -> str:
        """The llama.cpp build fingerprint (`llm.build`) the key names; "" for an endpoint."""
        _, sep, build = self.fingerprint.partition(";build=")
        return build if sep else ""

    def to_json(self) -> str:
        r = self.row
        record = {
            "key": r.key,
            "model_id": self.model_id,
            "model_sha256": self.model_sha256,
            "build": self.build,
            "model": r.model,
            "text": r.text,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "latency_s": r.latency_s,
            "request": r.request,
        }
        return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def write_replies(path: Path, rows: Iterable[CacheRow]) -> int:
    """Write rows (one per key) sorted by key into a deterministic gzip file; returns the number of rows."""
    unique = {r.key: r for r in rows}
    body = "".join(PublishedReply(unique[k]).to_json() + "\n" for k in sorted(unique)).encode("utf-8")
    path.write_bytes(gzip_bytes(body))
    return len(unique)


def read_replies(path: Path) -> list[PublishedReply]:
    """Every row of a published replies file, each checked; a bad file is one `PublishedRepliesError`."""
    replies: list[PublishedReply] = []
    seen: set[str] = set()
    total = 0
    try:
        with gzip.open(path, "rb") as stream:
            number = 0
            while True:
                line = stream.readline(MAX_LINE_BYTES + 1)
                if not line:
                    break
                number += 1
                total += len(line)
                if len(line) > MAX_LINE_BYTES:
                    raise PublishedRepliesError(f"{path} line {number}: longer than {MAX_LINE_BYTES} bytes")
                if total > MAX_FILE_BYTES:
                    raise PublishedRepliesError(f"{path}: more than {MAX_FILE_BYTES} bytes decompressed")
                reply = _parse(line, path, number)
                if reply.row.key in seen:
                    raise PublishedRepliesError(f"{path} line {number}: key {reply.row.key[:12]}... appears twice")
                seen.add(reply.row.key)
                replies.append(reply)
    except FileNotFoundError:
        raise PublishedRepliesError(f"{path}: no such file") from None
    except (OSError, EOFError, zlib.error) as exc:  # not gzip, truncated, unreadable
        raise PublishedRepliesError(f"{path}: not a readable gzip file ({type(exc).__name__}: {exc})") from None
    return replies


def _parse(line: bytes, path: Path, number: int) -> PublishedReply:
    where = f"{path} line {number}"
    try:
        record = decode_json(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PublishedRepliesError(f"{where}: not a JSON line ({type(exc).__name__})") from None
    if not isinstance(record, dict):
        raise PublishedRepliesError(f"{where}: not a JSON object")
    expected: dict[str, type | tuple[type, ...]] = {
        "key": str,
        "model": str,
        "text": str,
        "prompt_tokens": int,
        "completion_tokens": int,
        "latency_s": (int, float),
        "request": dict,
        "model_id": str,
        "model_sha256": str,
        "build": str,
    }
    for name, kind in expected.items():
        value = record.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise PublishedRepliesError(
                f"{where}: field {name!r} missing or not a {getattr(kind, '__name__', 'number')}"
            )
    if not _KEY.fullmatch(record["key"]):
        raise PublishedRepliesError(f"{where}: key is not 64 lowercase hex digits")
    try:
        computed = cache_key(record["request"])
    except (TypeError, ValueError):
        raise PublishedRepliesError(f"{where}: request is not canonical JSON") from None
    if computed != record["key"]:
        raise PublishedRepliesError(f"{where}: key {record['key'][:12]}... is not the hash of its request")
    reply = PublishedReply(
        CacheRow(
            key=record["key"],
            model=record["model"],
            text=record["text"],
            prompt_tokens=record["prompt_tokens"],
            completion_tokens=record["completion_tokens"],
            latency_s=float(record["latency_s"]),
            request=record["request"],
        )
    )
    if (reply.model_id, reply.model_sha256, reply.build) != (
        record["model_id"],
        record["model_sha256"],
        record["build"],
    ):
        raise PublishedRepliesError(f"{where}: model_id, model_sha256 or build differ from what its request names")
    return reply


@dataclass(frozen=True)
class SeedReport:
    """What seeding a cache from published replies did."""

    published: int  # rows in the file
    matching: int  # rows of this machine's build (or of an endpoint, which has none)
    added: int  # of those, rows the cache did not hold
    replaced: int  # of those, rows the cache held with another text (the published reply now stands)
    other_build: int  # rows left out: another llama.cpp build's keys, never asked for here
    refused: int = 0  # rows not offered: keyed to a request the run's own attempt logs never made

    def line(self, run_id: str | None) -> str:
        """What seeding did, for run `run_id` (None: the replies of every published run together)."""
        other = f"; {self.other_build} of another llama.cpp build left out" if self.other_build else ""
        replaced = f", {self.replaced} replaced a different cached reply" if self.replaced else ""
        refused = f"; {self.refused} refused: not a request of the run's own attempt logs" if self.refused else ""
        source = f"published run {run_id}" if run_id else "all published runs"
        return (
            f"{source}: {self.matching} of {self.published} published replies match this machine's build "
            f"({self.added} added to the response cache{replaced}){other}{refused}"
        )


def matches_build(reply: PublishedReply, build: str) -> bool:
    """A reply this machine can be asked for: an endpoint's (no build), or one of `build` exactly."""
    return reply.build == "" or reply.build == build


def seed_cache(cache: ResponseCache, replies: list[PublishedReply], build: str, refused: int = 0) -> SeedReport:
    """Put the replies of `build` (this machine's `llm.build.build_fingerprint()`) into `cache`, in one transaction.

    `replies` are the ones seeding admits (`publish.publish.own_replies`: requests the run's own attempt
    logs made); `refused` counts the rest, for the report. A key the cache holds with the same text is
    left alone; with another text (the same build answered differently before) the published reply
    replaces it, so the run reproduces the published numbers, and the report counts it.
    """
    chosen = [r for r in replies if matches_build(r, build)]
    held = cache.texts(r.row.key for r in chosen)
    fresh = [r.row for r in chosen if r.row.key not in held]
    differ = [r.row for r in chosen if r.row.key in held and held[r.row.key] != r.row.text]
    if fresh or differ:
        cache.put_rows([*fresh, *differ], replace=True)
    return SeedReport(
        published=len(replies) + refused,
        matching=len(chosen),
        added=len(fresh),
        replaced=len(differ),
        other_build=len(replies) - len(chosen),
        refused=refused,
    )
