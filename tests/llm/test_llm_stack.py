"""The model stack (`llm.stack`, built by `llm.factory.build_model`): every layer answers through with a declared
`complete` signature and says itself what callers need of the model behind it (no digging through `.model`)."""

from __future__ import annotations

import inspect

import pytest

from t2c_lib.chat.evaluate import ConversationsStopped, stop_on_model_failure
from t2c_lib.llm.base import ChatModel, LLMUnavailableError, Message, ModelWrapper, model_attribute
from t2c_lib.llm.cache import CachedModel
from t2c_lib.llm.factory import build_model
from t2c_lib.llm.stack import PacedModel, RateLimiter, RequestSlots, StopOnOutage
from tests.helpers import ScriptedModelStandIn


def test_stacked_wrappers_answer_through_and_say_the_inner_models_seed() -> None:
    inner = ScriptedModelStandIn(["MATCH (n) RETURN n"])
    inner.seed = 7  # a setting only the inner model has: each layer passes it on, one layer at a time
    wrapped = stop_on_model_failure(CachedModel(PacedModel(inner, RateLimiter(6000), RequestSlots(1)), mode="off"))
    assert isinstance(wrapped, ModelWrapper) and isinstance(wrapped.model.model, PacedModel)
    assert wrapped.model_id == "scripted-stand-in"
    assert wrapped.complete([Message("user", "count the nodes")]).text == "MATCH (n) RETURN n"
    assert wrapped.seed == 7 and model_attribute(wrapped, "seed", None) == 7
    assert wrapped.lane_group() is None and wrapped.fingerprint == "" and not wrapped.packaged
    assert model_attribute(wrapped, "no_such_setting", "default") == "default"


def test_model_attribute_no_longer_digs_through_layers() -> None:
    inner = ScriptedModelStandIn(["x"])
    inner.only_inside = 1
    assert model_attribute(PacedModel(inner), "only_inside", "not said") == "not said"


def test_every_layer_declares_the_seed_in_its_complete_signature() -> None:
    expected = ["messages", "temperature", "max_tokens", "stop", "seed"]
    for layer in (ChatModel, ModelWrapper, PacedModel, StopOnOutage, CachedModel):
        assert list(inspect.signature(layer.complete).parameters)[1:] == expected, layer


class _Down:
    model_id = "down"

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None, seed=None):
        raise LLMUnavailableError("down: no answer after every retry")


def test_an_outage_becomes_the_callers_error() -> None:
    with pytest.raises(ConversationsStopped, match="down: no answer.*evaluation stopped"):
        stop_on_model_failure(_Down()).complete([Message("user", "q")])


def test_one_builder_stacks_pacing_under_the_cache_and_the_stop_on_top(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("T2C_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # never asked: nothing is sent here
    monkeypatch.setenv("T2C_RESPONSE_CACHE", str(tmp_path / "cache.sqlite"))
    slots = RequestSlots(2)
    stack = StopOnOutage(build_model("fault-model", seed=5, requests_per_minute=60, slots=slots), RuntimeError)
    assert isinstance(stack.model, CachedModel)
    paced = stack.model.model
    assert isinstance(paced, PacedModel) and paced.slots is slots and paced.limiter is not None
    assert stack.seed == 5 and stack.model_id.startswith("fault-model") and stack.lane_group() is None
    assert type(build_model("fault-model")) is CachedModel  # no budget asked: no pacing layer
