"""Settings from the environment (and an optional `.env`), and the project's paths.

Secrets (API keys, database passwords) are read here and nowhere else; they are never
written to params, notebooks, manifests or results. Secrets come from the environment, with one
exception: the password `make neo4j` generated for the local Neo4j server, read from its cache.
Also here: the languages prompts and feedback exist in (`LANGUAGES`); a dataset's `language`
must be one of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from t2c_lib.errors import InvalidValue

PACKAGE_DIR = Path(__file__).resolve().parent

LANGUAGES = ("id", "en")
"""`id`: Indonesian (the curriculum graph); `en`: English datasets (movies)."""


def check_language(lang: str, what: str = "templates") -> str:
    """Return `lang` if it is supported, else raise naming the valid ones."""
    if lang not in LANGUAGES:
        raise InvalidValue(f"no {what} for language {lang!r} (valid: {', '.join(LANGUAGES)})")
    return lang


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


def int_setting(name: str, default: int, minimum: int = 1) -> int:
    """An integer setting from the environment (at least `minimum`), else `default`; a bad value is one clear error."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < minimum:
        wanted = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
        raise InvalidValue(f"{name} must be {wanted}, got {raw!r}")
    return int(raw)


def env(name: str, default: str | None = None) -> str | None:
    """An environment setting (after `.env`), or `default` when unset or empty."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def local_neo4j_dir() -> Path:
    """Where `tools/neo4j/neo4j.sh` keeps the local server (`T2C_NEO4J_DIR`, else <project>/.cache/neo4j)."""
    return Path(env("T2C_NEO4J_DIR") or PROJECT_ROOT / ".cache" / "neo4j")


def is_loopback_uri(uri: str) -> bool:
    """Whether a Bolt URI names this machine (127.x, localhost, ::1): where `make neo4j` listens."""
    try:
        host = (urlsplit(uri).hostname or "").lower()
    except ValueError:
        return False
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def local_server_runs_on(uri: str) -> bool:
    """Whether the pid file of `make neo4j` names a live launcher started for the URI's port (default 7687)."""
    folder = local_neo4j_dir()
    try:
        pid = int((folder / "neo4j.pid").read_text(encoding="utf-8").strip())
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        port = urlsplit(uri).port or 7687
    except (OSError, ValueError):
        return False
    args = [a.decode("utf-8", "replace") for a in args if a]
    return "t2c.neo4j.Launcher" in args and bool(args) and args[-1] == str(port)


def neo4j_password(uri: str) -> str | None:
    """The password for a Neo4j server: `NEO4J_PASSWORD` when set; else, for a loopback URI, the one
    `make neo4j` generated into `<local_neo4j_dir>/password` (mode 0600) at its first start; else None.

    That file is the one secret read from disk: the local server's own, made on this machine."""
    explicit = env("NEO4J_PASSWORD")
    if explicit or not is_loopback_uri(uri):
        return explicit
    if not local_server_runs_on(uri):  # never hand the password to whatever else listens on that port
        return None
    try:
        lines = (local_neo4j_dir() / "password").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return lines[0].strip() if lines and lines[0].strip() else None


load_dotenv()
