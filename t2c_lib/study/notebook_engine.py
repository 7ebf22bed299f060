"""papermill with the kernel on IPC sockets: `python -m t2c_lib.study.notebook_engine <papermill args>`.

ipykernel warns "Kernel is running over TCP without encryption" whenever a kernel listens on
TCP without CurveZMQ keys (once per notebook `make all` runs). The notebooks run on this
machine only, so the kernel manager here uses Unix-domain (IPC) sockets in a private
temporary directory instead: nothing listens on the network and there is nothing to warn
about. The kernel is ipykernel started through `t2c_lib.study.kernel` (no debugger, no
interpreter teardown after the last cell: see there). Every other papermill option works as usual.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

# Optional modules papermill's process would import and never use, kept out (a None entry in
# sys.modules makes an import fail at once; the importer goes on without the option; an
# explicit import of one elsewhere in this process still fails, so the list is this process's):
# - jsonschema imports the packages behind its optional format checks when installed
#   (`rfc3987_syntax` builds a Lark grammar at import, about 3 s of every notebook run's
#   start; the others, with `arrow`, about 0.2 s). nbformat's notebook schema uses no
#   "format" keyword, so no format check is ever made here.
# - papermill imports pyarrow's file systems for `hdfs://` notebook paths (pyarrow and numpy,
#   about 0.3 s of CPU); `make all` reads and writes local files only.
UNUSED_OPTIONAL_MODULES = (
    "rfc3987_syntax",
    "rfc3986_validator",
    "rfc3339_validator",
    "isoduration",
    "uri_template",
    "webcolors",
    "pyarrow.fs",
)
for _name in UNUSED_OPTIONAL_MODULES:
    sys.modules.setdefault(_name, None)  # type: ignore[arg-type]  # None: Python's way to block an import

from jupyter_client.manager import AsyncKernelManager  # noqa: E402
from papermill.engines import NBClientEngine, papermill_engines  # noqa: E402

from t2c_lib.study.kernel import command as kernel_command  # noqa: E402


class IPCKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel talks over Unix-domain sockets in its own temporary directory."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.transport = "ipc"
        self._socket_dir = tempfile.mkdtemp(prefix="t2c-kernel-")
        os.chmod(self._socket_dir, 0o700)
        self.ip = os.path.join(self._socket_dir, "kernel")

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            try:
                os.rmdir(self._socket_dir)
            except OSError:
                pass

    cleanup_resources = _async_cleanup_resources

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        """The kernel spec's command, with ipykernel's launcher replaced by `t2c_lib.study.kernel`."""
        return kernel_command(super().format_kernel_cmd(extra_arguments))


class IPCEngine(NBClientEngine):
    """papermill's nbclient engine, with `IPCKernelManager` as the kernel manager."""

    @classmethod
    def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
        kwargs.setdefault("kernel_manager_class", IPCKernelManager)
        return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)


def main(argv: list[str] | None = None) -> None:
    """Run papermill's own command line with the IPC engine as the default engine.

    A cell that failed with a one-line error (a t2c error, shown as the CLI shows it:
    `t2c_lib.study.notebook_params`) ends the run with that line and exit status 1, instead of
    papermill's traceback through its own code; any other failure keeps papermill's report.
    """
    from papermill.cli import papermill
    from papermill.exceptions import PapermillExecutionError, strip_color

    args = sys.argv[1:] if argv is None else argv
    papermill_engines.register(None, IPCEngine)
    papermill_engines.register("t2c-ipc", IPCEngine)
    from t2c_lib.study.progress import start_watch

    watching = start_watch()
    try:
        papermill.main(args=args, prog_name="papermill")
    except PapermillExecutionError as failed:
        if len(failed.traceback) != 1:
            raise
        notebook = next((os.path.basename(a) for a in args if a.endswith(".ipynb")), "notebook")
        print(f"{notebook}: {strip_color(failed.traceback[0]).strip()}", file=sys.stderr)
        sys.exit(1)
    finally:
        if watching is not None:
            watching.finish()


if __name__ == "__main__":  # pragma: no cover
    main()
