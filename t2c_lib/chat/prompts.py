"""The conversation's own prompt templates (router, rewrite, answer) per language, and their hashes."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from string import Template

from t2c_lib.languages import check_language

TEMPLATE_DIR = Path(__file__).parent / "templates"
TEMPLATE_NAMES = ("router", "router_user", "rewrite", "answer", "answer_user")


@lru_cache(maxsize=None)
def load_template(lang: str, name: str) -> Template:
    """`templates/<lang>/<name>.txt` as a `string.Template` (substituted with `substitute`, never `format`)."""
    check_language(lang, "chat templates")
    if name not in TEMPLATE_NAMES:
        raise ValueError(f"no chat template {name!r} (valid: {', '.join(TEMPLATE_NAMES)})")
    return Template((TEMPLATE_DIR / lang / f"{name}.txt").read_text(encoding="utf-8"))


def template_hashes(lang: str) -> dict[str, str]:
    """sha256 of every chat template of `lang`, keyed by relative path (for session signatures)."""
    check_language(lang, "chat templates")
    return {f"chat/{lang}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((TEMPLATE_DIR / lang).glob("*.txt"))}
