"""benchmarks/chat_dev.py: a design is a name and ChatSettings fields; anything else is refused before a model runs."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from t2c_lib.chat.settings import ChatSettings
from tests.helpers import ROOT

spec = importlib.util.spec_from_file_location("chat_dev", ROOT / "benchmarks" / "chat_dev.py")
chat_dev = importlib.util.module_from_spec(spec)
sys.modules["chat_dev"] = chat_dev
spec.loader.exec_module(chat_dev)


def test_a_design_names_chat_settings_fields():
    name, fields = chat_dev.design('linked={"schema_format": "retrieved"}')
    assert (name, fields) == ("linked", {"schema_format": "retrieved"})
    assert ChatSettings(dataset="kurikulum", **fields).schema_format == "retrieved"
    assert chat_dev.design("today") == ("today", {})


@pytest.mark.parametrize("text", ["=", '=["a"]', 'x=["schema_format"]'])
def test_a_design_that_is_not_a_name_and_an_object_is_refused(text):
    with pytest.raises(SystemExit, match="NAME=JSON"):
        chat_dev.design(text)
