"""Feedback template files: one per error type and language, plus the phrases that fill them."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from string import Template

from t2c_lib.config import check_language
from t2c_lib.errors import TemplateMissing
from t2c_lib.files.yaml_file import read_yaml
from t2c_lib.records import ErrorType

TEMPLATE_DIR = Path(__file__).parent / "templates"


def _check_language(lang: str) -> str:
    return check_language(lang, "feedback templates")


@cache
def load_feedback_template(lang: str, error_type: ErrorType) -> Template:
    """`templates/<lang>/<ERROR_TYPE>.txt` as a `string.Template`."""
    path = TEMPLATE_DIR / _check_language(lang) / f"{ErrorType(error_type).value}.txt"
    if not path.is_file():
        raise TemplateMissing(f"feedback template {path} is missing")
    return Template(path.read_text(encoding="utf-8"))


@cache
def load_phrases(lang: str) -> dict[str, str]:
    """The supporting sentences of `templates/<lang>/_phrases.yaml`."""
    path = TEMPLATE_DIR / _check_language(lang) / "_phrases.yaml"
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of phrase names to text")
    return {str(k): str(v) for k, v in data.items()}


def feedback_template_hashes(lang: str) -> dict[str, str]:
    """sha256 of every feedback file of `lang`, keyed `feedback/<lang>/<file>`."""
    folder = TEMPLATE_DIR / _check_language(lang)
    return {
        f"feedback/{lang}/{path.name}": hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.iterdir())
        if path.is_file()
    }
