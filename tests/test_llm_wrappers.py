"""The model wrappers (rate limit, request slots, stop on outage) keep the inner model reachable."""

from __future__ import annotations

from t2c_lib.chat.evaluate import StopOnModelFailure
from t2c_lib.llm.base import Completion, Message, ModelWrapper, model_attribute
from t2c_lib.llm.ratelimit import RateLimitedModel, RateLimiter
from t2c_lib.study.slots import RequestSlots, SlotModel


class EchoStandIn:
    """A scripted stand-in model: answers with the last message, and carries a seed to look up."""

    model_id = "echo-stand-in"
    seed = 7

    def complete(self, messages, temperature=0.0, max_tokens=512, stop=None):
        return Completion(text=messages[-1].content, model=self.model_id)


def test_stacked_wrappers_answer_through_and_expose_the_inner_model() -> None:
    inner = EchoStandIn()
    wrapped = StopOnModelFailure(SlotModel(RateLimitedModel(inner, RateLimiter(6000)), RequestSlots(1)))
    assert all(isinstance(w, ModelWrapper) for w in (wrapped, wrapped.model, wrapped.model.model))
    assert wrapped.model_id == "echo-stand-in"
    assert wrapped.complete([Message("user", "MATCH (n) RETURN n")]).text == "MATCH (n) RETURN n"
    assert model_attribute(wrapped, "seed", None) == 7
    assert model_attribute(wrapped, "no_such_setting", "default") == "default"
