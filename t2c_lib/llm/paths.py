"""Where the LLM layer keeps its files (model weights, response cache)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The project's `.cache/` directory: `t2c_lib.config.CACHE_DIR` when present, else <root>/.cache."""
    try:
        from t2c_lib import config  # type: ignore[attr-defined]

        return Path(config.CACHE_DIR)
    except (ImportError, AttributeError):
        env = os.environ.get("T2C_CACHE_DIR")
        return Path(env) if env else Path(__file__).resolve().parents[2] / ".cache"
