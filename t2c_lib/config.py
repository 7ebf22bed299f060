"""Settings from the environment (and an optional `.env`), and the project's paths.

Secrets (API keys, database passwords) are read here and nowhere else; they are never
written to params, notebooks, manifests or results.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def _find_project_root() -> Path:
    """The checkout root (holds `data/`); `T2C_ROOT` overrides, else the package's parent, else cwd."""
    env = os.environ.get("T2C_ROOT")
    if env:
        return Path(env).resolve()
    for candidate in (PACKAGE_DIR.parent, Path.cwd(), *Path.cwd().parents):
        if (candidate / "data").is_dir() and (candidate / "pyproject.toml").is_file():
            return candidate
    return PACKAGE_DIR.parent


PROJECT_ROOT = _find_project_root()
DATA_DIR = PROJECT_ROOT / "data"
PARAMS_DIR = PROJECT_ROOT / "params"
RESULTS_DIR = Path(os.environ.get("T2C_RESULTS_DIR", PROJECT_ROOT / "results"))
FIGURES_DIR = Path(os.environ.get("T2C_FIGURES_DIR", PROJECT_ROOT / "figures"))
CACHE_DIR = Path(os.environ.get("T2C_CACHE_DIR", PROJECT_ROOT / ".cache"))


def load_dotenv(path: Path | None = None) -> None:
    """Read `KEY=VALUE` lines from `.env` into the environment without overriding set variables."""
    path = path or PROJECT_ROOT / ".env"
    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        value = value.strip().strip('"').strip("'")
        os.environ.setdefault(key, value)


def env(name: str, default: str | None = None) -> str | None:
    """An environment setting (after `.env`), or `default` when unset or empty."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


load_dotenv()
