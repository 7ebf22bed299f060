"""One registry shape for strategies, scoring presets, weights, stores and metrics; parameters read their names."""

from __future__ import annotations

import pytest

from t2c_lib.agent.strategies import STRATEGIES
from t2c_lib.errors import T2CError, UnknownName
from t2c_lib.graph import STORES
from t2c_lib.metrics.composite import WEIGHT_SETS
from t2c_lib.metrics.registry import METRICS
from t2c_lib.metrics.scoring import SCORING_PRESETS
from t2c_lib.registry import Registry
from t2c_lib.study import params


def test_a_miss_names_the_valid_choices_and_is_a_user_error():
    things: Registry[int] = Registry("widget", aliases={"old": "one"}, note="'old' means 'one'")
    things.register("one", 1)
    things.register("two", 2)
    assert things.get("one") == 1 and things["old"] == 1 and things.names() == ("one", "two")
    assert "old" in things and "three" not in things and list(things) == ["one", "two"] and len(things) == 2
    with pytest.raises(UnknownName, match=r"unknown widget 'three' \(valid: one, two; 'old' means 'one'\)") as caught:
        things.get("three")
    assert isinstance(caught.value, T2CError) and isinstance(caught.value, ValueError)
    with pytest.raises(ValueError, match="already registered"):
        things.register("one", 3)
    things.unregister("two")
    assert things.names() == ("one",)


@pytest.mark.parametrize("registry", [STRATEGIES, SCORING_PRESETS, WEIGHT_SETS, STORES, METRICS], ids=lambda r: r.kind)
def test_every_registry_is_one_shape(registry):
    assert isinstance(registry, Registry) and registry.names()
    with pytest.raises(UnknownName, match=f"unknown {registry.kind} 'nope' \\(valid: {registry.names()[0]}"):
        registry.get("nope")


def test_parameters_offer_exactly_the_registered_names():
    assert params.STRATEGIES == STRATEGIES.names()
    assert params.STORES == STORES.names()
    assert params.WEIGHT_NAMES == WEIGHT_SETS.names()
    with pytest.raises(params.ParamsError, match=f"scoring='nope': valid: {', '.join(SCORING_PRESETS.names())}"):
        params.params_from_dict({"scoring": "nope"})
    assert STRATEGIES.get("agentic") is STRATEGIES.get("feedback")
