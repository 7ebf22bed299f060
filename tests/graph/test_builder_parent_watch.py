"""A walled builder whose t2c process died stops too, instead of building on, orphaned, for minutes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow

PARENT = textwrap.dedent(
    """
    import os, pickle, subprocess, sys, time
    from t2c_lib.graph.ladybug_child import CHILD_ENV, child_command
    staging = sys.argv[1]
    read, write = os.pipe()
    proc = subprocess.Popen(
        child_command("t2c_lib.graph.ladybug_builder", [staging, str(write), "1"]),
        pass_fds=(write,), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=dict(CHILD_ENV), cwd=staging, start_new_session=True,
    )
    slow = [("UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN sum(a * b)", None)]
    proc.stdin.write(pickle.dumps({"db": staging + "/db", "statements": slow, "buffer_pool": 64 << 20, "max_db": 1 << 30}))
    proc.stdin.close()
    print(proc.pid, flush=True)
    time.sleep(3)  # the builder is at work now; this parent dies without a word
    os._exit(0)
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ")[-1][:1] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="the builder's parent watch reads Linux's /proc")
def test_a_builder_whose_parent_died_exits_within_seconds(tmp_path):
    staging = tmp_path / "staging"
    staging.mkdir()
    parent = subprocess.run(
        [sys.executable, "-c", PARENT, str(staging)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    builder = int(parent.stdout.split()[0])
    deadline = time.monotonic() + 10
    while _alive(builder) and time.monotonic() < deadline:
        time.sleep(0.2)
    still = _alive(builder)
    if still:
        os.kill(builder, 9)
    assert not still, "the builder built on after its parent died"
