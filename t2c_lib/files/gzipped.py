"""Gzip for files the repository carries: the same data always gives the same bytes, and reading stops at a limit.

Published runs (`publish.publish`) keep their replies and their attempt logs gzipped: an attempt log
is half of a run's bytes and shrinks about elevenfold. `gzip_bytes` writes level 9 with mtime 0 and
no file name, so publishing the same run twice gives the same bytes. A committed file is hostile
input: `read_gzip` refuses one that is not gzip, is cut short, or decompresses past its limit (a
gzip bomb stops there, not in memory).
"""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path

from t2c_lib.errors import T2CError

CHUNK_BYTES = 1024 * 1024


class GzipReadError(T2CError, ValueError):
    """A gzip file that cannot be read within its limit (not gzip, truncated, too large decompressed)."""


def gzip_bytes(data: bytes) -> bytes:
    """`data` gzipped deterministically (level 9, mtime 0, no file name in the header)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as out:
        out.write(data)
    return buffer.getvalue()


def read_gzip(path: Path, limit: int) -> bytes:
    """The decompressed bytes of `path`, refused past `limit` bytes; any bad file is one `GzipReadError`."""
    parts: list[bytes] = []
    total = 0
    try:
        with gzip.open(path, "rb") as stream:
            while chunk := stream.read(CHUNK_BYTES):
                total += len(chunk)
                if total > limit:
                    raise GzipReadError(f"{path}: more than {limit} bytes decompressed; refused")
                parts.append(chunk)
    except FileNotFoundError:
        raise GzipReadError(f"{path}: no such file") from None
    except (OSError, EOFError, zlib.error) as exc:  # not gzip, truncated, unreadable
        raise GzipReadError(f"{path}: not a readable gzip file ({type(exc).__name__})") from None
    return b"".join(parts)


class Inflater:
    """Gzip or zlib data fed in pieces (an HTTP body), decompressed to at most `limit` bytes.

    Each piece is inflated with zlib's `max_length`, so a bomb is refused once its output passes the
    limit, holding no more than the limit in memory (`read_gzip` does the same for a file)."""

    def __init__(self, limit: int, what: str = "gzip data") -> None:
        self._inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, told apart by zlib
        self._limit = limit
        self._what = what
        self.total = 0

    def feed(self, data: bytes) -> bytes:
        """The decompressed bytes of this piece; `GzipReadError` past the limit or on data that is not gzip."""
        parts: list[bytes] = []
        try:
            while data and not self._inflate.eof:
                part = self._inflate.decompress(data, self._limit - self.total + 1)
                self._count(part)
                parts.append(part)
                data = self._inflate.unconsumed_tail
        except zlib.error:
            raise GzipReadError(f"{self._what}: not readable gzip data") from None
        return b"".join(parts)

    def finish(self) -> bytes:
        """What is left once the input ends; `GzipReadError` if the data stopped short."""
        try:
            rest = self._inflate.flush()
        except zlib.error:  # pragma: no cover - flush raises only on a broken stream
            raise GzipReadError(f"{self._what}: not readable gzip data") from None
        self._count(rest)
        if not self._inflate.eof:
            raise GzipReadError(f"{self._what}: gzip data cut short")
        return rest

    def _count(self, part: bytes) -> None:
        self.total += len(part)
        if self.total > self._limit:
            raise GzipReadError(f"{self._what}: more than {self._limit} bytes decompressed; refused")
