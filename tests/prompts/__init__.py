"""Tests of the prompt templates (`t2c_lib/prompts/`)."""
