"""Prompt templates per language and prompt type, and the message builder."""

from t2c_lib.config import LANGUAGES
from t2c_lib.prompts.builder import Example, PromptBuilder, prompt_hash
from t2c_lib.prompts.config import Configuration, PromptType, all_configurations
from t2c_lib.prompts.templates import template_hashes

__all__ = [
    "Configuration",
    "Example",
    "LANGUAGES",
    "PromptBuilder",
    "PromptType",
    "all_configurations",
    "prompt_hash",
    "template_hashes",
]
