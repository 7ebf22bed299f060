"""benchmarks/router_dev.py: its routing set stays apart from the conversation test set, and the rules mode runs offline."""

from __future__ import annotations

import importlib.util
import sys

import pytest
import yaml

from t2c_lib.chat.intent import Intent, RouterMode
from tests.helpers import ROOT

spec = importlib.util.spec_from_file_location("router_dev", ROOT / "benchmarks" / "router_dev.py")
router_dev = importlib.util.module_from_spec(spec)
sys.modules["router_dev"] = router_dev
spec.loader.exec_module(router_dev)


def _folded(messages) -> set[str]:
    """Messages compared as a reader would: whitespace collapsed, case ignored."""
    return {" ".join(m.split()).lower() for m in messages}


def _conversation_messages() -> set[str]:
    dialogues = yaml.safe_load((ROOT / "data" / "kurikulum" / "conversations.yaml").read_text(encoding="utf-8"))
    return _folded(t["message"] for d in dialogues for t in d["turns"])


@pytest.mark.parametrize("routing_set", [router_dev.DEV_SET, router_dev.HELD_OUT_SET], ids=lambda p: p.name)
def test_routing_set_shares_no_message_with_the_conversation_test_set(routing_set) -> None:
    dev = router_dev.load_dev_set(routing_set)
    held_out = _conversation_messages()
    assert held_out, "the conversation test set was not read"
    assert not _folded(m for m, _, _ in dev) & held_out
    assert {intent for _, _, intent in dev} == set(Intent)  # every intent is measured


def test_the_held_out_routing_set_shares_no_message_with_the_dev_set() -> None:
    dev = _folded(m for m, _, _ in router_dev.load_dev_set(router_dev.DEV_SET))
    held_out = _folded(m for m, _, _ in router_dev.load_dev_set(router_dev.HELD_OUT_SET))
    assert dev and held_out and not dev & held_out


def test_rules_mode_routes_the_whole_set_without_a_model() -> None:
    dev = router_dev.load_dev_set()
    result = router_dev.route_all(RouterMode.RULES, None, dev)
    assert result["n"] == len(dev)
    assert result["right"] == len(dev) - len(result["misses"])
    assert all(m["expected"] != m["got"] for m in result["misses"])
