"""Prompt template files per language, and their sha256 hashes for run signatures."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from string import Template

from t2c_lib.config import check_language as _check_supported
from t2c_lib.errors import TemplateMissing

TEMPLATE_DIR = Path(__file__).parent / "templates"

TEMPLATE_NAMES = ("zero_shot", "few_shot", "cot", "refine", "refine_cot")


def check_language(lang: str) -> str:
    """Return `lang` if templates exist for it, else raise naming the valid ones."""
    return _check_supported(lang, "prompt templates")


@cache
def load_template(lang: str, name: str) -> Template:
    """The `string.Template` in `templates/<lang>/<name>.txt` (`$schema`, `$question`, ...)."""
    check_language(lang)
    path = TEMPLATE_DIR / lang / f"{name}.txt"
    if not path.is_file():
        raise TemplateMissing(f"prompt template {path} is missing (expected one of {', '.join(TEMPLATE_NAMES)})")
    return Template(path.read_text(encoding="utf-8"))


def template_hashes(lang: str) -> dict[str, str]:
    """sha256 of every template file the prompts of `lang` are built from, keyed by relative path.

    The feedback templates' text enters refinement prompts too: their hashes come from
    `feedback.feedback_template_hashes`, which the loop's and the study's signatures add after these.
    """
    check_language(lang)
    return {f"prompts/{lang}/{path.name}": _sha256(path) for path in sorted((TEMPLATE_DIR / lang).glob("*.txt"))}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
