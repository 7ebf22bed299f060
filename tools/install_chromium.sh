#!/usr/bin/env bash
# Chromium from Debian's packages: the headless browser of tests/project/test_lab.py (JupyterLab renders
# the analysis notebook). Does nothing when `chromium` is already on PATH. Needs root (CI runs as
# root) or sudo; otherwise it says what to run and exits 1.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    echo "install_chromium: not root; run 'apt-get install chromium' as root for the JupyterLab test" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
install=("${as_root[@]}" apt-get install -y -q --no-install-recommends chromium)
if ! "${install[@]}" >/dev/null 2>&1; then
    "${as_root[@]}" apt-get update -q >/dev/null
    "${install[@]}" >/dev/null
fi
command -v chromium >/dev/null
echo "install_chromium: $(chromium --version 2>/dev/null || echo chromium installed)"
