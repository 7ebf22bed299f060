"""Tests of the project as a whole: its layers and function lengths, its README and docs, its Makefile."""
