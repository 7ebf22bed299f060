#!/usr/bin/env bash
# JupyterLab from the project's environment, bound to 127.0.0.1, with the project's kernel
# (the `python3` kernel of this Python is the project's .venv). `make lab` runs it; extra
# arguments go to JupyterLab (e.g. --port=8899); T2C_LAB_ROOT serves another folder. Usage: tools/lab.sh [PYTHON] [jupyter lab args]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${1:-$root/.venv/bin/python}"
[ $# -gt 0 ] && shift
# Kernels on IPC sockets in a private directory, not TCP (no "TCP without encryption" warning).
sockets="$(mktemp -d "${TMPDIR:-/tmp}/t2c-lab-kernels-XXXXXX")"
trap 'rm -rf "$sockets"' EXIT
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-root)  # containers and CI run as root
cd "$root"
"$py" -m jupyterlab --ip=127.0.0.1 --no-browser --ServerApp.root_dir="${T2C_LAB_ROOT:-$root}" \
    --KernelManager.transport=ipc --KernelManager.ip="$sockets/kernel" "${as_root[@]}" "$@"
