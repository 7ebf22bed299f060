"""Where the LLM layer keeps its files (model weights, response cache)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The project's `.cache/` directory: `t2c_lib.config.CACHE_DIR` when present, else <root>/.cache."""
    try:
        from t2c_lib import config

        return Path(config.CACHE_DIR)
    except (ImportError, AttributeError):
        env = os.environ.get("T2C_CACHE_DIR")
        return Path(env) if env else _project_root() / ".cache"


def models_dir() -> Path:
    """Where packaged models are joined: `T2C_MODELS_DIR`, else <project>/.cache/models.

    Not under `T2C_CACHE_DIR`: a private cache (a test's, a second run's) shares the
    verified models instead of fetching a gigabyte again.
    """
    env = os.environ.get("T2C_MODELS_DIR", "").strip()
    return Path(env) if env else _project_root() / ".cache" / "models"


def _project_root() -> Path:
    try:
        from t2c_lib import config

        return Path(config.PROJECT_ROOT)
    except (ImportError, AttributeError):
        return Path(__file__).resolve().parents[2]
