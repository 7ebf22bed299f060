"""The kernel `make all` runs its notebooks in: ipykernel, started without its debugger, ended without teardown.

`python <path of this file> -f <connection file>` is `python -m ipykernel_launcher` with two cuts,
both outside anything a notebook computes (`notebook_engine` starts it for papermill). It runs
as a script, by path, and imports nothing of t2c: the kernel starts wherever papermill's
`--cwd` points, installed package or not.

- ipykernel imports debugpy at start (about 0.3 s), for the Jupyter debugger protocol, which a
  notebook run by papermill never uses. A None entry in `sys.modules` makes that import fail at
  once and ipykernel goes on without a debugger, as it does where debugpy is not installed; the
  entry is removed once ipykernel is loaded.
- When papermill shuts the kernel down after the last cell, the kernel's Python then tears
  itself down: module by module, thread by thread, for every module an evaluation or analysis
  notebook loaded (pandas, SciPy, matplotlib). That was 1.5 to 3 s of every notebook run's
  wall time (measured on 2026-11-25 on the 2-core development machine). Here the exit
  handlers run (`atexit`, which also runs `weakref.finalize`: the embedded store's query
  process is stopped, logging is flushed), the standard streams are flushed, and the process
  ends with `os._exit`. Everything the library writes is written and closed (or fsynced)
  inside the cell that writes it, and the response cache commits every entry, so nothing is
  left for the teardown to do.

A kernel that ends any other way (an error while starting) exits as ipykernel would.
"""

from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path

LAUNCHER = "ipykernel_launcher"
"""The module jupyter's own Python kernel spec starts (`python -m ipykernel_launcher -f ...`)."""
SCRIPT = str(Path(__file__).resolve())


def command(argv: list[str]) -> list[str]:
    """A kernel command with `-m ipykernel_launcher` replaced by this file; any other command unchanged."""
    for i in range(len(argv) - 1):
        if argv[i] == "-m" and argv[i + 1] == LAUNCHER:
            return [*argv[:i], SCRIPT, *argv[i + 2 :]]
    return list(argv)


def main() -> None:
    """Run ipykernel until it is shut down, then run the exit handlers and end the process."""
    # run as a script, sys.path[0] is this file's folder (t2c_lib/study: its module names must not
    # shadow anything); ipykernel_launcher likewise drops the working directory while ipykernel
    # loads, and IPython puts the working directory back for the notebook's code
    if sys.path and Path(sys.path[0] or ".").resolve() in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        del sys.path[0]
    hidden = "debugpy" not in sys.modules
    if hidden:
        sys.modules["debugpy"] = None  # type: ignore[assignment]  # ipykernel.debugger's import fails at once
    from ipykernel import debugger, kernelapp  # noqa: F401  (debugger: its one import attempt happens now)

    if hidden and sys.modules.get("debugpy", 0) is None:
        del sys.modules["debugpy"]  # a notebook that imports debugpy itself still can

    code = 0
    try:
        kernelapp.launch_new_instance()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
