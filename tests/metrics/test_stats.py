"""Paired statistics pinned to hand-computed values."""

from __future__ import annotations

import math

import pytest

from t2c_lib.metrics.stats import holm, mcnemar_exact, paired_bootstrap_ci, wilcoxon_pratt


def test_mcnemar_table_and_exact_p():
    # 10 pairs: both pass 3, neither 1, baseline-only (b) 1, treatment-only (c) 5.
    baseline = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    treatment = [1, 1, 1, 0, 0, 1, 1, 1, 1, 1]
    res = mcnemar_exact(baseline, treatment)
    assert (res.n, res.both, res.neither, res.b, res.c) == (10, 3, 1, 1, 5)
    # two-sided exact binomial, n=6, k=1: 2 * (C(6,0)+C(6,1)) / 2^6 = 2 * 7/64 = 0.21875
    assert res.p_value == pytest.approx(0.21875)


def test_mcnemar_without_discordant_pairs_is_one():
    assert mcnemar_exact([1, 0, 1], [1, 0, 1]).p_value == 1.0


def test_mcnemar_all_discordant_one_way():
    res = mcnemar_exact([0] * 8, [1] * 8)
    assert (res.b, res.c) == (0, 8)
    assert res.p_value == pytest.approx(2 / 2**8)  # 2 * 0.5^8


def test_wilcoxon_pratt_with_zero_differences():
    # differences: 0, 0, 1, 2, 3, -1 ; Pratt ranks |d| including zeros: 0,0 -> ranks 1.5, 1.5
    # nonzero |d|: 1,1 (ranks 3.5, 3.5), 2 (5), 3 (6); zeros' ranks are then dropped.
    # R+ = 3.5 + 5 + 6 = 14.5, R- = 3.5 ; scipy's two-sided statistic is min(R+, R-) = 3.5
    baseline = [0.5, 0.2, 0.0, 0.0, 0.0, 1.0]
    treatment = [0.5, 0.2, 1.0, 2.0, 3.0, 0.0]
    res = wilcoxon_pratt(baseline, treatment)
    assert res.n == 6 and res.n_nonzero == 4
    assert res.statistic == pytest.approx(3.5)
    assert 0.0 < res.p_value < 1.0


def test_wilcoxon_all_zero_differences():
    res = wilcoxon_pratt([0.1, 0.2], [0.1, 0.2])
    assert (res.n_nonzero, res.statistic, res.p_value) == (0, 0.0, 1.0)


def test_holm_ordering_and_monotonicity():
    # sorted p: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> max 0.06)
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_bootstrap_is_seeded_and_brackets_the_mean():
    baseline = [0, 0, 1, 0, 1, 0, 0, 1, 0, 0]
    treatment = [1, 0, 1, 1, 1, 0, 1, 1, 0, 1]
    first = paired_bootstrap_ci(baseline, treatment)
    again = paired_bootstrap_ci(baseline, treatment)
    assert first == again
    assert first.estimate == pytest.approx(0.4)
    assert first.low <= first.estimate <= first.high
    assert first.low >= 0.0 - 1e-12 and first.high <= 1.0
    assert paired_bootstrap_ci(baseline, treatment, seed=7) != first or math.isclose(first.low, first.high)


def test_unpaired_lengths_are_rejected():
    with pytest.raises(ValueError, match="same length"):
        mcnemar_exact([1, 0], [1])


def test_bootstrap_ci_with_shared_indices_equals_a_fresh_draw_per_call():
    """The resampled indices are drawn once per (n, resamples, seed); every CI is still the fresh-draw one, bit for bit."""
    import numpy as np

    from t2c_lib.metrics.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, paired_bootstrap_ci

    rng = np.random.default_rng(7)
    for n in (5, 52, 52, 13):
        a, t = rng.random(n).round(2), rng.random(n).round(2)
        diff = t - a
        idx = np.random.default_rng(BOOTSTRAP_SEED).integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))
        alpha = (1.0 - 0.95) / 2.0
        low, high = np.quantile(diff[idx].mean(axis=1), [alpha, 1.0 - alpha])
        ci = paired_bootstrap_ci(a, t)
        assert (ci.estimate, ci.low, ci.high) == (float(diff.mean()), float(low), float(high))
