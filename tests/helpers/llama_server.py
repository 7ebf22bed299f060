"""Run llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server ...`) the way t2c loads the model.

Same command-line arguments as `python -m llama_cpp.server`; before it starts, the
model is kept out of llama.cpp's extra (AMX) buffers and OpenMP waits passively, as in
`t2c_lib.llm.local`, so the server runs on hosts where a native build would trap.
"""

from __future__ import annotations

import os
import runpy

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from t2c_lib.llm.local import extra_buffers_allowed

if __name__ == "__main__":
    with extra_buffers_allowed(os.environ.get("T2C_LOCAL_EXTRA_BUFFERS", "") in ("1", "true", "yes")):
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
