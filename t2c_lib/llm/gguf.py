"""Read the metadata of a GGUF file (name, architecture, chat template) without loading the model.

Used to check a freshly joined file's `general.name` before it is put in place, and to
look at a model's chat template in tests. Only the header is read: key/value pairs up to
the keys asked for. The file is treated as hostile input: every length is checked
against the bytes left, so a broken or crafted file gives `GGUFError`, never a huge
allocation or an endless loop.

Layout (GGUF v2/v3, little-endian): magic `GGUF`, version u32, tensor count u64, key/value
count u64, then per pair: key (u64 length + UTF-8), value type u32, value. Strings are
u64 length + bytes; arrays are element type u32, count u64, elements.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"
_SCALARS = {  # type id -> struct format
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9
MAX_KEYS = 1_000_000


class GGUFError(ValueError):
    """The file is not a GGUF file this reader understands, or its header is broken."""


class _Reader:
    def __init__(self, fh: BinaryIO, size: int) -> None:
        self.fh, self.size = fh, size

    def left(self) -> int:
        return self.size - self.fh.tell()

    def read(self, n: int) -> bytes:
        if n < 0 or n > self.left():
            raise GGUFError(f"header claims {n} bytes at offset {self.fh.tell()}, but the file has {self.left()} left")
        return self.fh.read(n)

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self, keep: bool = True) -> str | None:
        n = self.unpack("<Q")
        if not keep:
            if n > self.left():
                raise GGUFError(f"string of {n} bytes at offset {self.fh.tell()} runs past the end of the file")
            self.fh.seek(n, os.SEEK_CUR)
            return None
        return self.read(n).decode("utf-8", "replace")

    def value(self, vtype: int, keep: bool) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string(keep)
        if vtype == _ARRAY:
            etype, count = self.unpack("<I"), self.unpack("<Q")
            if etype in _SCALARS:
                width = struct.calcsize(_SCALARS[etype])
                if count * width > self.left():
                    raise GGUFError(f"array of {count} items runs past the end of the file")
                if not keep:
                    self.fh.seek(count * width, os.SEEK_CUR)
                    return None
                return list(struct.unpack(f"<{count}{_SCALARS[etype][1]}", self.read(count * width)))
            if etype == _STRING:
                if count * 8 > self.left():
                    raise GGUFError(f"array of {count} strings runs past the end of the file")
                items = [self.string(keep) for _ in range(count)]
                return items if keep else None
            raise GGUFError(f"unsupported array element type {etype}")
        raise GGUFError(f"unknown value type {vtype}")


def read_metadata(path: str | Path, keys: Iterable[str] | None = None) -> dict[str, Any]:
    """The GGUF's key/value metadata; with `keys`, only those (reading stops once all are found).

    Arrays are returned only when asked for by name (the tokenizer's are large).
    """
    wanted = None if keys is None else set(keys)
    out: dict[str, Any] = {}
    path = Path(path)
    with path.open("rb") as fh:
        reader = _Reader(fh, path.stat().st_size)
        if reader.left() < 24 or reader.read(4) != MAGIC:
            raise GGUFError(f"{path.name} is not a GGUF file (no GGUF magic)")
        version = reader.unpack("<I")
        if version not in (2, 3):
            raise GGUFError(f"{path.name}: GGUF version {version} is not supported (2 or 3)")
        reader.unpack("<Q")  # tensor count
        n_kv = reader.unpack("<Q")
        if n_kv > MAX_KEYS:
            raise GGUFError(f"{path.name}: header claims {n_kv} metadata keys")
        for _ in range(n_kv):
            key = reader.string()
            vtype = reader.unpack("<I")
            keep = wanted is None and vtype != _ARRAY or (wanted is not None and key in wanted)
            value = reader.value(vtype, keep)
            if keep:
                out[str(key)] = value
            if wanted is not None and wanted <= out.keys():
                break
    return out


def model_name(path: str | Path) -> str | None:
    """The GGUF's `general.name`, or None when it has none."""
    value = read_metadata(path, ["general.name"]).get("general.name")
    return value if isinstance(value, str) else None
