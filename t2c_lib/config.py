"""Settings from the environment (and an optional `.env`), and the project's paths.

Secrets (API keys, database passwords) are read here and nowhere else; they are never
written to params, notebooks, manifests or results. Secrets come from the environment, with one
exception: the password `make neo4j` generated for the local Neo4j server, read from its cache.
A `.env` is hostile input: it sets t2c's settings, never a switch that weakens a wall
(`WALL_SWITCHES`: those come from the real environment only, and every process that imports
t2c says on stderr which are in effect) nor the process environment (`PYTHONPATH`, `LD_*`, ...).
Also here: the languages prompts and feedback exist in (`LANGUAGES`); a dataset's `language`
must be one of them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
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


DOTENV_PREFIXES = ("T2C_", "NEO4J_")
"""A `.env` sets t2c's own settings, the Neo4j connection and `*_API_KEY` keys: what it is for (keys, endpoints, models)."""
WALL_SWITCHES = {
    "T2C_OS_WALL": "turns the operating-system wall off",
    "T2C_STRATEGY_MODULES": "imports Python modules",
    "T2C_MAX_ROWS": "changes a query limit",
    "T2C_MAX_RESULT_BYTES": "changes a query limit",
    "T2C_MAX_QUERY_CHARS": "changes a query limit",
    "T2C_MAX_QUERY_DEPTH": "changes a query limit",
    "T2C_QUERY_MEMORY_MB": "changes a query limit",
    "T2C_NEO4J_REPLACE": "lets t2c replace a Neo4j database it did not load",
}
"""Settings that weaken a wall: taken from the real environment only, never from `.env`, and announced when set."""
READ_BEFORE_DOTENV = ("T2C_ROOT", "T2C_RESULTS_DIR", "T2C_FIGURES_DIR", "T2C_CACHE_DIR")
"""Paths read above, before `.env` is: a `.env` line would reach only child processes."""
_DOTENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OFF = ("0", "false", "no", "off")
"""`T2C_OS_WALL` values that turn the wall off (`graph.oswall.wall_enabled`)."""


def dotenv_refusal(key: str) -> str | None:
    """Why a `.env` may not set `key` (None: it may): a wall switch, a path read before it, a process variable."""
    if key in WALL_SWITCHES:
        return f"it {WALL_SWITCHES[key]}; set it in the environment itself"
    if key in READ_BEFORE_DOTENV:
        return "it is read before .env; set it in the environment itself"
    if key.startswith(DOTENV_PREFIXES) or key.endswith("_API_KEY"):
        return None
    return "a .env sets only T2C_*, NEO4J_* and *_API_KEY settings, never the process environment"


def load_dotenv(path: Path | None = None) -> None:
    """Read `KEY=VALUE` lines from `.env` into the environment without overriding set variables.

    A `.env` is hostile input: a key it may not set (`dotenv_refusal`) is ignored with one line on
    stderr naming the key, never the value."""
    path = path or PROJECT_ROOT / ".env"
    try:
        if not path.is_file():
            return
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"t2c: {path} not read ({type(exc).__name__})", file=sys.stderr)
        return
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        value = value.strip().strip('"').strip("'")
        why = dotenv_refusal(key) if _DOTENV_KEY.fullmatch(key) else "not a KEY=VALUE line"
        if why:
            shown = key if _DOTENV_KEY.fullmatch(key) else f"line {number}"
            print(f"t2c: .env: {shown} ignored ({why})", file=sys.stderr)
            continue
        os.environ.setdefault(key, value)


def wall_switches_in_effect(environ: Mapping[str, str] | None = None) -> list[str]:
    """One line per wall switch the environment sets (`WALL_SWITCHES`), saying what it does."""
    environ = os.environ if environ is None else environ
    lines = []
    for key, does in WALL_SWITCHES.items():
        value = environ.get(key, "").strip()
        if not value or (key == "T2C_OS_WALL" and value.lower() not in _OFF):
            continue
        if key == "T2C_NEO4J_REPLACE" and value != "1":
            continue
        shown = ascii(value)[1:-1][:40]
        lines.append(f"t2c: {key}={shown} in the environment {does}")
    return lines


def announce_wall_switches() -> None:
    """Say on stderr, once per process, every wall switch in effect (a process that imports t2c is affected)."""
    for line in wall_switches_in_effect():
        print(line, file=sys.stderr)


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
    words = [a.decode("utf-8", "replace") for a in args if a]
    return "t2c.neo4j.Launcher" in words and bool(words) and words[-1] == str(port)


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
announce_wall_switches()
