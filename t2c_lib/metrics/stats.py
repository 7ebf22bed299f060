"""Paired significance tests of agentic against single-pass on the same questions.

Exact McNemar (binomial test on the discordant pairs) for pass/fail metrics, Wilcoxon
signed-rank with `zero_method='pratt'` for per-question scores, paired bootstrap 95% CIs
with a fixed seed (questions resampled; where a question repeats across configurations, the
cluster bootstrap resamples questions with all their rows), and Holm's step-down correction
across configurations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats as scipy_stats

BOOTSTRAP_SEED = 20241
BOOTSTRAP_RESAMPLES = 10_000


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar on paired binary outcomes; b = baseline-only passes, c = treatment-only passes."""

    n: int
    both: int
    neither: int
    b: int
    c: int
    p_value: float


@dataclass(frozen=True)
class WilcoxonResult:
    """Wilcoxon signed-rank (Pratt) on paired scores; p = 1 when every difference is zero."""

    n: int
    n_nonzero: int
    statistic: float
    p_value: float


@dataclass(frozen=True)
class BootstrapCI:
    """Observed mean difference (treatment - baseline) with a percentile bootstrap CI."""

    estimate: float
    low: float
    high: float
    level: float = 0.95
    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED


def _paired(
    baseline: Sequence[float] | np.ndarray, treatment: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(baseline, dtype=float)
    b = np.asarray(treatment, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must have the same length (got {a.shape} and {b.shape})")
    return a, b


def mcnemar_exact(baseline: Sequence[bool | int], treatment: Sequence[bool | int]) -> McNemarResult:
    """Exact two-sided McNemar: `binomtest(c, b + c, 0.5)`; p = 1 with no discordant pairs."""
    a, t = _paired(baseline, treatment)
    a, t = a.astype(bool), t.astype(bool)
    b = int(np.sum(a & ~t))
    c = int(np.sum(~a & t))
    p = 1.0 if b + c == 0 else float(scipy_stats.binomtest(c, b + c, 0.5, alternative="two-sided").pvalue)
    return McNemarResult(n=len(a), both=int(np.sum(a & t)), neither=int(np.sum(~a & ~t)), b=b, c=c, p_value=min(1.0, p))


def wilcoxon_pratt(baseline: Sequence[float], treatment: Sequence[float]) -> WilcoxonResult:
    """Wilcoxon signed-rank on treatment - baseline with Pratt's handling of zero differences."""
    a, t = _paired(baseline, treatment)
    diff = t - a
    nonzero = int(np.sum(diff != 0))
    if nonzero == 0:
        return WilcoxonResult(n=len(diff), n_nonzero=0, statistic=0.0, p_value=1.0)
    res = scipy_stats.wilcoxon(t, a, zero_method="pratt", alternative="two-sided")
    return WilcoxonResult(n=len(diff), n_nonzero=nonzero, statistic=float(res.statistic), p_value=float(res.pvalue))


def paired_bootstrap_ci(
    baseline: Sequence[float] | np.ndarray,
    treatment: Sequence[float] | np.ndarray,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> BootstrapCI:
    """Percentile CI of mean(treatment - baseline), resampling questions (pairs) with replacement."""
    a, t = _paired(baseline, treatment)
    diff = t - a
    if len(diff) == 0:
        return BootstrapCI(float("nan"), float("nan"), float("nan"), level, resamples, seed)
    means = diff[_resample_indices(len(diff), resamples, seed)].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return BootstrapCI(float(diff.mean()), float(low), float(high), level, resamples, seed)


def cluster_bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[object],
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> BootstrapCI:
    """Percentile CI of mean(values) whose rows come in clusters, resampling clusters (each with all its rows).

    A question asked in nine configurations is one unit, not nine: resampling its rows apart would treat
    repeats as independent and make the interval too narrow. The estimate is the plain mean of the rows;
    each resample's mean is its rows' sum over its rows' count. One row per cluster gives exactly
    `paired_bootstrap_ci(zeros, values)`.
    """
    v = np.asarray(values, dtype=float)
    labels = np.asarray([str(c) for c in clusters])
    if v.shape != labels.shape or v.ndim != 1:
        raise ValueError(f"values and clusters must have the same length (got {v.shape} and {labels.shape})")
    if len(v) == 0:
        return BootstrapCI(float("nan"), float("nan"), float("nan"), level, resamples, seed)
    names, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # clusters numbered in the order they first appear
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    inverse = rank[inverse]
    sums = np.bincount(inverse, weights=v, minlength=len(names))
    counts = np.bincount(inverse, minlength=len(names)).astype(float)
    idx = _resample_indices(len(names), resamples, seed)
    means = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return BootstrapCI(float(v.mean()), float(low), float(high), level, resamples, seed)


def cluster_count(clusters: Sequence[object]) -> int:
    """How many clusters (questions) a cluster bootstrap resamples."""
    return len({str(c) for c in clusters})


@lru_cache(maxsize=16)
def _resample_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """The bootstrap's resampled question indices: a function of (n, resamples, seed) alone, so drawn once.

    An analysis asks for hundreds of intervals over the same n questions with the same seed;
    drawing the same 10,000 x n indices again each time was most of their cost. Read-only, shared.
    """
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    idx.flags.writeable = False
    return idx


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order (monotone, capped at 1)."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, (m - rank) * p[index])
        adjusted[index] = min(1.0, running)
    return adjusted.tolist()
