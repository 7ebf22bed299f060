"""Which model a study run uses when the command line, the environment and the parameter file name one.

Precedence, highest first:

1. the command line (`t2c run --model NAME`, papermill's `-p model NAME`);
2. the environment (`T2C_MODEL`), which is where endpoints are configured (`T2C_LLM_BASE_URL`);
3. the parameter file's `model:` (default `local`, the packaged model).

One case is refused rather than guessed: `T2C_LLM_BASE_URL` is set, neither the command line
nor `T2C_MODEL` names a model, and the parameter file says `local`. The user configured an
endpoint and the file asks for the packaged model; an hour of grid on the wrong model is worse
than one line that says to choose. The choice travels with the parameters (`StudyParams.extra`,
never in manifests) so that `t2c run` and the notebooks can say which model answers and why.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from t2c_lib.errors import T2CError

LOCAL = "local"
CHOICE_KEY = "model_choice"
"""The key of `StudyParams.extra` that holds the `ModelChoice` behind `params.model`."""


class AmbiguousModel(T2CError, ValueError):
    """The environment configures an endpoint, the parameter file asks for the local model, nothing decides."""


@dataclass(frozen=True)
class ModelChoice:
    """The model a run uses, where that name came from, and what it overrode."""

    name: str
    source: str  # "--model", "T2C_MODEL" or "the parameter file"
    file_model: str = ""
    refused: str = ""  # why this choice must not run (`AmbiguousModel`), "" when it may

    def describe(self) -> str:
        """One line for the terminal: `model local (from the parameter file)`, `... over the parameter file's local`."""
        over = (
            f"; the parameter file's model: {self.file_model} is overridden"
            if self.file_model and self.file_model != self.name and self.source != "the parameter file"
            else ""
        )
        return f"model {self.name} (from {self.source}{over})"

    def check(self) -> None:
        """Raise `AmbiguousModel` when this choice was refused (before any model is built)."""
        if self.refused:
            raise AmbiguousModel(self.refused)


def choose_model(
    file_model: str,
    explicit: str | None = None,
    env: Mapping[str, str] | None = None,
    file_name: str = "the parameter file",
) -> ModelChoice:
    """Apply the precedence above; `explicit` is the command line's value (None when not given)."""
    env = os.environ if env is None else env
    if explicit is not None and str(explicit).strip():
        return ModelChoice(str(explicit).strip(), "--model", file_model)
    from_env = (env.get("T2C_MODEL") or "").strip()
    if from_env:
        return ModelChoice(from_env, "T2C_MODEL", file_model)
    base_url = (env.get("T2C_LLM_BASE_URL") or "").strip()
    refused = ""
    if base_url and file_model.strip().lower() == LOCAL:
        refused = (
            f"T2C_LLM_BASE_URL is set ({base_url}) but no model for it: {file_name} says model: local. "
            "Set T2C_MODEL (or --model) to the endpoint's model name to use the endpoint, or "
            "T2C_MODEL=local (or --model local) for the packaged model"
        )
    return ModelChoice(file_model, "the parameter file", file_model, refused)
