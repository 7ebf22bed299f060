"""Prompts of the strategies beyond the thesis loop: the `history` retry and the `verifier` audit.

Their templates live in `templates/<lang>/strategies/`, apart from the thesis templates, so
adding them leaves the thesis runs' template hashes (and so their manifests) unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from string import Template

from t2c_lib.errors import TemplateMissing
from t2c_lib.llm.base import Message
from t2c_lib.prompts.builder import PromptBuilder
from t2c_lib.prompts.templates import TEMPLATE_DIR, check_language

STRATEGY_TEMPLATES = ("history", "verify")
"""The strategy templates' file names (`templates/<lang>/strategies/<name>.txt`), not strategy names: the files
are named on disk and their paths are hashed into manifests, so they keep these names whatever a strategy is called."""


@dataclass(frozen=True)
class FailedAttempt:
    """One earlier attempt as the `history` prompt shows it: its query and its error message."""

    query: str
    error: str


@cache
def load_strategy_template(lang: str, name: str) -> Template:
    """The `string.Template` in `templates/<lang>/strategies/<name>.txt`."""
    path = TEMPLATE_DIR / check_language(lang) / "strategies" / f"{name}.txt"
    if not path.is_file():
        raise TemplateMissing(f"strategy template {path} is missing (expected one of {', '.join(STRATEGY_TEMPLATES)})")
    return Template(path.read_text(encoding="utf-8"))


def strategy_template_hashes(lang: str, names: Sequence[str] = STRATEGY_TEMPLATES) -> dict[str, str]:
    """sha256 of the strategy templates named, keyed like `template_hashes` (for manifests)."""
    out = {}
    for name in names:
        path = TEMPLATE_DIR / check_language(lang) / "strategies" / f"{name}.txt"
        out[f"prompts/{lang}/strategies/{name}.txt"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _schema_for(prompts: PromptBuilder, question: str) -> str:
    """The schema text these prompts show for `question`: the whole schema's, or the one retrieved for it."""
    schema = prompts.schema_text
    return schema(question.strip()) if callable(schema) else schema


def history_messages(prompts: PromptBuilder, question: str, failures: Sequence[FailedAttempt]) -> list[Message]:
    """The first request's system and examples, then every failed attempt with its error and a schema reminder."""
    empty = "(kosong)" if prompts.language == "id" else "(empty)"
    blocks = [
        f"{i}. {f.query.strip() or empty}\n   -> {' '.join(f.error.split()) or empty}"
        for i, f in enumerate(failures, start=1)
    ]
    text = load_strategy_template(prompts.language, "history").substitute(
        question=question.strip(),
        attempts="\n".join(blocks),
        schema=_schema_for(prompts, question).rstrip("\n") + "\n",
    )
    first = prompts.initial(question)
    return [*first[:-1], Message("user", text.strip())]


def verification_messages(prompts: PromptBuilder, question: str, query: str) -> list[Message]:
    """One user message asking for a JSON audit of `query` (no examples: the verifier is a judge, not a writer)."""
    text = load_strategy_template(prompts.language, "verify").substitute(
        schema=_schema_for(prompts, question).rstrip("\n") + "\n",
        question=question.strip(),
        query=query.strip(),
    )
    return [Message("user", text.strip())]
