"""Prompt types and configurations: a configuration is a prompt type crossed with a schema format."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from t2c_lib.errors import InvalidValue
from t2c_lib.schema import SchemaFormat


class PromptType(str, Enum):
    """The three prompting strategies the study compares; values are the config-name parts."""

    ZERO_SHOT = "Zero-Shot"
    FEW_SHOT = "Few-Shot"
    COT = "CoT"

    @property
    def template_name(self) -> str:
        """File stem of the system template (`zero_shot`, `few_shot`, `cot`)."""
        return {"Zero-Shot": "zero_shot", "Few-Shot": "few_shot", "CoT": "cot"}[self.value]

    @property
    def uses_examples(self) -> bool:
        """Few-shot shows the dataset's examples; CoT shows them with their reasoning."""
        return self is not PromptType.ZERO_SHOT

    @property
    def refine_template_name(self) -> str:
        """CoT refinements ask for reasoning again; the others for the query only."""
        return "refine_cot" if self is PromptType.COT else "refine"

    @classmethod
    def parse(cls, text: str) -> PromptType:
        """Accept the value, the member name or the template stem, case-insensitively."""
        norm = text.strip().lower().replace("_", "-")
        for member in cls:
            if norm in (
                member.value.lower(),
                member.name.lower().replace("_", "-"),
                member.template_name.replace("_", "-"),
            ):
                return member
        valid = ", ".join(m.value for m in cls)
        raise InvalidValue(f"unknown prompt type {text!r} (valid: {valid})")


@dataclass(frozen=True, order=True)
class Configuration:
    """One cell of the grid, named like the thesis: `Zero-Shot_Full`, `Few-Shot_Nodes+Paths`, `CoT_Only-Paths`."""

    prompt_type: PromptType
    schema_format: SchemaFormat

    @property
    def name(self) -> str:
        return f"{self.prompt_type.value}_{self.schema_format.config_label}"

    def __str__(self) -> str:
        return self.name

    @classmethod
    def from_name(cls, name: str) -> Configuration:
        """Parse `Zero-Shot_Full` and friends; the error lists every valid name."""
        for config in all_configurations(with_retrieved=True):
            if config.name.lower() == name.strip().lower():
                return config
        valid = ", ".join(c.name for c in all_configurations(with_retrieved=True))
        raise InvalidValue(f"unknown configuration {name!r} (valid: {valid})")

    parse = from_name


def all_configurations(with_retrieved: bool = False) -> list[Configuration]:
    """The thesis's nine configurations (plus the three `Retrieved` ones), prompt type major, schema format minor."""
    return [Configuration(p, s) for p in PromptType for s in SchemaFormat if with_retrieved or not s.per_question]
