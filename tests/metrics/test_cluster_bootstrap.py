"""The cluster bootstrap (issue 52, item 3): where questions repeat across configurations, questions are resampled.

The strata figure pooled 16 questions seen in 9 configurations as 144 independent pairs; a question answered the
same way in every configuration is one observation, not nine, and the naive interval is about three times too
narrow. The constructed cases below have a known answer: nine identical copies of each question give exactly
the interval of the 16 questions alone.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from t2c_lib.metrics import columns
from t2c_lib.metrics.stats import cluster_bootstrap_ci, cluster_count, paired_bootstrap_ci

QUESTIONS = [f"q{i:02d}" for i in range(16)]
PASSED = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1], dtype=float)  # 8 of 16 right


def repeated(times: int = 9) -> tuple[np.ndarray, list[str]]:
    """Each question's outcome in `times` configurations, the same every time (configuration-major order)."""
    return np.tile(PASSED, times), QUESTIONS * times


def test_nine_identical_copies_give_the_interval_of_the_sixteen_questions_exactly():
    values, clusters = repeated()
    one = paired_bootstrap_ci(np.zeros(16), PASSED)
    pooled = cluster_bootstrap_ci(values, clusters)
    assert pooled.estimate == pytest.approx(0.5) and one.estimate == pytest.approx(0.5)
    assert (pooled.low, pooled.high) == pytest.approx((one.low, one.high))
    assert cluster_count(clusters) == 16


def test_the_naive_interval_over_question_configuration_pairs_is_too_narrow():
    values, clusters = repeated()
    naive = paired_bootstrap_ci(np.zeros(len(values)), values)  # 144 "independent" pairs
    cluster = cluster_bootstrap_ci(values, clusters)
    naive_width, cluster_width = naive.high - naive.low, cluster.high - cluster.low
    assert cluster_width > 2.5 * naive_width  # about sqrt(9) = 3 times wider
    assert naive.estimate == cluster.estimate


def test_one_row_per_question_is_the_ordinary_bootstrap():
    ci = cluster_bootstrap_ci(PASSED, QUESTIONS)
    assert ci == paired_bootstrap_ci(np.zeros(16), PASSED)


def test_clusters_of_unequal_size_resample_whole_questions():
    values = np.array([1.0, 1.0, 1.0, 0.0])  # q1 three times right, q2 once wrong
    ci = cluster_bootstrap_ci(values, ["q1", "q1", "q1", "q2"])
    assert ci.estimate == pytest.approx(0.75)
    assert ci.low == pytest.approx(0.0) and ci.high == pytest.approx(1.0)  # a resample of q2 twice: 0; of q1: 1
    with pytest.raises(ValueError, match="same length"):
        cluster_bootstrap_ci(values, ["q1"])
    assert np.isnan(cluster_bootstrap_ci([], []).estimate)


def test_the_strata_figure_and_its_caption_resample_questions(scored_run):
    from t2c_lib.report.analysis import analyze_run
    from t2c_lib.report.figure_text import caption

    tables = analyze_run(scored_run, [])
    text = caption("accuracy_by_stratum", tables)
    n = tables.per_question["question_id"].nunique()
    assert f"95% CI, questions resampled (cluster bootstrap, {n} questions" in text
    assert "question-configuration pairs)" not in text.split("Error bars")[1]


def test_column_mean_ci_takes_the_questions_as_clusters():
    values, clusters = repeated()
    frame = pd.DataFrame({"pass_at_1_final__t2c": values, "question_id": clusters})
    ci = columns.column_mean_ci(frame["pass_at_1_final__t2c"], "pass_at_1_final__t2c", clusters=frame["question_id"])
    assert ci == cluster_bootstrap_ci(values, clusters)
