"""The languages prompts and feedback exist in; a dataset's `language` must be one of them."""

from __future__ import annotations

LANGUAGES = ("id", "en")
"""`id`: Indonesian (the curriculum graph); `en`: English datasets (movies)."""


def check_language(lang: str, what: str = "templates") -> str:
    """Return `lang` if it is supported, else raise naming the valid ones."""
    if lang not in LANGUAGES:
        raise ValueError(f"no {what} for language {lang!r} (valid: {', '.join(LANGUAGES)})")
    return lang
