"""Tests of the language-model backends (`t2c_lib/llm/`)."""
