"""The conversation's own prompt templates (router, rewrite, answer) and few-shot examples per language, and their hashes.

The examples are shown as user/assistant pairs before the real message: a base model (the
packaged local one renders every pair as `Question:`/`Cypher:` lines) copies their shape.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from t2c_lib.config import check_language
from t2c_lib.files.yaml_file import read_yaml

TEMPLATE_DIR = Path(__file__).parent / "templates"
TEMPLATE_NAMES = ("router", "router_user", "rewrite", "answer", "answer_user")
EXAMPLE_NAMES = ("router_examples", "answer_examples")
CUES_NAME = "edits"


@cache
def load_template(lang: str, name: str) -> Template:
    """`templates/<lang>/<name>.txt` as a `string.Template` (substituted with `substitute`, never `format`)."""
    check_language(lang, "chat templates")
    if name not in TEMPLATE_NAMES:
        raise ValueError(f"no chat template {name!r} (valid: {', '.join(TEMPLATE_NAMES)})")
    return Template((TEMPLATE_DIR / lang / f"{name}.txt").read_text(encoding="utf-8"))


@cache
def load_examples(lang: str, name: str) -> tuple[dict[str, Any], ...]:
    """`templates/<lang>/<name>.yaml`: a list of example mappings (packaged files, read once)."""
    check_language(lang, "chat templates")
    if name not in EXAMPLE_NAMES:
        raise ValueError(f"no chat examples {name!r} (valid: {', '.join(EXAMPLE_NAMES)})")
    data = read_yaml(TEMPLATE_DIR / lang / f"{name}.yaml") or []
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise ValueError(f"{TEMPLATE_DIR / lang / name}.yaml: expected a list of mappings")
    return tuple(data)


@cache
def load_cues(lang: str) -> dict[str, Any]:
    """`templates/<lang>/edits.yaml`: the cue words of follow-up edits (`chat/edits.py`)."""
    check_language(lang, "chat templates")
    data = read_yaml(TEMPLATE_DIR / lang / f"{CUES_NAME}.yaml") or {}
    if not isinstance(data, dict):
        raise ValueError(f"{TEMPLATE_DIR / lang / CUES_NAME}.yaml: expected a mapping")
    return data


def template_hashes(lang: str) -> dict[str, str]:
    """sha256 of every chat template and example file of `lang`, keyed by relative path (for signatures)."""
    check_language(lang, "chat templates")
    return {
        f"chat/{lang}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((TEMPLATE_DIR / lang).iterdir())
        if p.suffix in (".txt", ".yaml")
    }
