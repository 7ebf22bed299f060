"""A compromised query process, for tests only: the real worker, walls and all, plus one request that runs code.

What a LadybugDB bug an attacker controls could do is run code inside the walled query process. This
module stands in for that: it is the real `ladybug_worker` (same start, same wall, same database) whose
`handle` also answers `{"op": "probe", "code": ...}` by executing the code there and replying with the
`result` it sets (plain values only). A test starts it with `ladybug_process.WORKER_MODULE` pointed here.
Everything the code may use is imported before the wall goes up (nothing outside can be read after).
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import sys
import time
from typing import Any

from t2c_lib.graph import ladybug_worker

_real_handle = ladybug_worker.handle
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long


def call(number: int, *args: int) -> int:
    """A raw system call; its result, or -errno."""
    result = LIBC.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    return int(result) if result >= 0 else -ctypes.get_errno()


def attempt(action: Any) -> Any:
    """`action()`'s value, or the errno name it failed with."""
    try:
        return action()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc))


def handle(conn: Any, request: dict[str, Any]) -> dict[str, Any]:
    if request.get("op") != "probe":
        return _real_handle(conn, request)
    scope = {"os": os, "ctypes": ctypes, "errno": errno, "signal": signal, "time": time, "sys": sys,
             "libc": LIBC, "call": call, "attempt": attempt, "args": request.get("args", {})}  # fmt: skip
    exec(request["code"], scope)
    return {"result": scope.get("result")}


ladybug_worker.handle = handle

if __name__ == "__main__":
    sys.exit(ladybug_worker.main(sys.argv))
