"""The model wrappers (rate limit, request slots, stop on outage) keep the inner model reachable."""

from __future__ import annotations

from t2c_lib.chat.evaluate import StopOnModelFailure
from t2c_lib.llm.base import Message, ModelWrapper, model_attribute
from t2c_lib.llm.ratelimit import RateLimitedModel, RateLimiter
from t2c_lib.study.slots import RequestSlots, SlotModel
from tests.helpers import ScriptedModelStandIn


def test_stacked_wrappers_answer_through_and_expose_the_inner_model() -> None:
    inner = ScriptedModelStandIn(["MATCH (n) RETURN n"])
    inner.seed = 7  # a setting only the inner model has, for model_attribute to find
    wrapped = StopOnModelFailure(SlotModel(RateLimitedModel(inner, RateLimiter(6000)), RequestSlots(1)))
    assert all(isinstance(w, ModelWrapper) for w in (wrapped, wrapped.model, wrapped.model.model))
    assert wrapped.model_id == "scripted-stand-in"
    assert wrapped.complete([Message("user", "count the nodes")]).text == "MATCH (n) RETURN n"
    assert model_attribute(wrapped, "seed", None) == 7
    assert model_attribute(wrapped, "no_such_setting", "default") == "default"
