"""Gzip for files the repository carries: the same data always gives the same bytes, and reading stops at a limit.

Published runs (`study.publish`) keep their replies and their attempt logs gzipped: an attempt log
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
