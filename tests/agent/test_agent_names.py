"""`agent/names.py`: the strategy names code outside a declaration needs, and no strategy named anywhere else."""

from __future__ import annotations

import ast

from t2c_lib.agent import names
from t2c_lib.agent.strategies import strategy_names
from tests.helpers import ROOT

PACKAGE = ROOT / "t2c_lib"

# String constants outside agent/ that equal a strategy's name but name something else; each stays for its reason.
NOT_STRATEGIES = {
    ("prompts/strategies.py", "history"): "the history template's file name (hashed into manifests by its path)",
    ("chat/intent.py", "history"): "a conversation example's earlier turns, a key of conversations.yaml",
    ("study/evaluation.py", "agentic"): "summary.json's key of the loop's metrics, as published runs have it",
    ("report/analysis.py", "agentic"): "that key read back, and the loop table's file name (analysis/agentic.csv)",
}


def test_the_legacy_name_maps_to_feedback_and_nothing_else_changes():
    assert names.canonical_strategy(names.AGENTIC) == names.FEEDBACK
    assert names.canonical_strategy("vote") == "vote"
    assert names.LEGACY_STRATEGY_NAMES == {"agentic": "feedback"}


def test_the_default_strategy_follows_the_budget():
    assert names.default_strategy(1) == names.SINGLE_PASS == "single-pass"
    assert names.default_strategy(3) == names.FEEDBACK == "feedback"


def test_the_named_strategies_are_registered_ones():
    assert {names.SINGLE_PASS, names.FEEDBACK} <= set(strategy_names())


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants (a module's, class's or function's first statement)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            found.add(id(body[0].value))
    return found


def test_no_strategy_is_named_by_a_literal_outside_the_agent_package():
    """A strategy is named in its declaration (or, for the thesis's two, in `agent/names.py`), never by a literal
    in the study, the metrics, the records or the CLI: those read the registry or these constants (issue 40's
    done-when; parameter files and docs may name them). Old names count too: `agentic` is read through the map."""
    strategies = {*strategy_names(), *names.LEGACY_STRATEGY_NAMES}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith("agent/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and node.value in strategies
                and id(node) not in docstrings
                and (where, node.value) not in NOT_STRATEGIES
            ):
                found.append(f"{where}:{node.lineno}: {node.value!r}")
    assert not found, "strategy names written outside t2c_lib/agent/:\n" + "\n".join(found)
