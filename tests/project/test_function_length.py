"""No function in t2c_lib runs over 100 lines, and a cell's evaluation is load -> score -> write (issue 40)."""

from __future__ import annotations

import ast

from tests.helpers import ROOT

LIMIT = 100
EVALUATE_CELL_LIMIT = 70


def function_lengths() -> dict[str, int]:
    """`path:name` -> lines of every function and method in t2c_lib (from `def` to its last line, docstring included; a command's click decorators are its options, not its body)."""
    lengths = {}
    for path in sorted((ROOT / "t2c_lib").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = node.lineno
                lengths[f"{path.relative_to(ROOT)}:{node.name}"] = node.end_lineno - start + 1
    return lengths


def test_no_function_is_over_a_hundred_lines() -> None:
    lengths = function_lengths()
    assert lengths, "no function found: the walk is broken"
    over = {name: n for name, n in lengths.items() if n > LIMIT}
    assert not over, over


def test_evaluate_cell_is_load_score_write() -> None:
    assert function_lengths()["t2c_lib/study/evaluation.py:evaluate_cell"] <= EVALUATE_CELL_LIMIT
