"""The column spec: names are built in one place, and nowhere else in the package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from t2c_lib.metrics import columns
from t2c_lib.metrics.columns import Kind, at, col, metrics_csv, presets_in, side, stat
from tests.helpers import ROOT

PACKAGE = ROOT / "t2c_lib"


def test_per_preset_columns_carry_the_preset_slug_and_others_refuse_one():
    assert col("pass_at_1_final", "kg-axel") == "pass_at_1_final__kg_axel"
    assert col("llmetric_q", "t2c") == "llmetric_q__t2c"
    assert col("kg_valid_chain_final") == "kg_valid_chain_final"
    with pytest.raises(ValueError, match="is written per scoring preset"):
        col("pass_at_1_final")
    with pytest.raises(ValueError, match="is not written per scoring preset"):
        col("kg_valid_chain_final", "t2c")
    with pytest.raises(KeyError, match="no result column 'pass_at_2'"):
        col("pass_at_2", "t2c")


def test_attempts_kinds_and_directions():
    assert at("kg_valid_chain", "final") == "kg_valid_chain_final"
    assert at("pass_at_1", columns.Attempt.FIRST) == "pass_at_1_first"
    assert columns.spec("pass_at_1_final").metric == "pass_at_1"
    assert columns.spec("pass_at_1_final").kind is Kind.BINARY
    assert columns.spec("llmetric_q").kind is Kind.GRADED
    assert columns.spec("harmed").higher_is_better is False
    assert columns.spec("error").aggregation == "none" and columns.spec("llm_calls").aggregation == "mean"
    assert columns.label("pass_at_1_final", "kg_axel") == "Pass@1 final (kg-axel)"


def test_metrics_csv_order_and_presets_read_back():
    header = metrics_csv(["t2c", "kg-axel"], ["Tingkat Penalaran"], suite=True)
    assert header[:3] == ["question_id", "strategy", "loop"] and header[-5:-3] == ["pass_at_1_ts", "failed_copies"]
    assert header[-3:] == ["question", "gold_query", "final_query"]  # last: review texts (issue 39, item 8)
    assert header.index("Tingkat Penalaran") == len(columns.BASE)
    assert (
        header.index("pass_at_1_first__t2c")
        < header.index("llmetric_q__t2c")
        < header.index("pass_at_1_first__kg_axel")
    )
    assert presets_in(header) == ["t2c", "kg_axel"]
    assert "pass_at_1_ts" not in metrics_csv(["t2c"], [], suite=False)
    assert side("pass_at_1_final__t2c", "sp") == "pass_at_1_final__t2c_sp"
    assert stat("kg_valid_chain_final", "mcnemar", "p_holm") == "kg_valid_chain_final_mcnemar_p_holm"


# make.py writes make rules, no result columns: its notebook file names join strategy and configuration with `__`;
# progress.py reads those executed notebooks back by the same names.
NOT_COLUMNS = {"study/make.py", "study/progress.py", "metrics/columns.py"}
COLUMN_ENDINGS = ("__", "_first", "_final", "_sp", "_fb", "_low", "_high", "_mcnemar", "_wilcoxon", "_diff", "_p_holm")


def _built_names(path: Path) -> list[tuple[int, str]]:
    """f-strings that glue a column-name piece to a formatted value (`f"{m}__{s}"`, `f"{m}_sp"`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.JoinedStr):
            continue
        parts = node.values
        for before, after in zip(parts, parts[1:]):
            glued = (
                isinstance(before, ast.FormattedValue)
                and isinstance(after, ast.Constant)
                and str(after.value).startswith(COLUMN_ENDINGS)
            ) or (
                isinstance(before, ast.Constant)
                and isinstance(after, ast.FormattedValue)
                and str(before.value).endswith("__")
            )
            if glued:
                found.append((node.lineno, ast.unparse(node)[2:-1]))
                break
    return found


def test_no_result_column_name_is_built_outside_the_spec():
    built = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where not in NOT_COLUMNS:
            built += [f"{where}:{line}: {text}" for line, text in _built_names(path)]
    assert not built, "column names built outside t2c_lib/metrics/columns.py:\n" + "\n".join(built)


def test_means_follow_the_column_spec():
    """`column_mean` summarises a column as its spec's `aggregation` says; an id or a text has no mean."""
    import pandas as pd

    frame = pd.DataFrame({"success": [1, 0, 1, 1], "question_id": ["a", "b", "c", "d"]})
    assert columns.column_mean(frame["success"], "success") == 0.75
    assert columns.column_means(frame, ["success"]) == {"success": 0.75}
    assert columns.column_mean(pd.Series([1.0, 0.0]), col("pass_at_1_final", "kg-axel")) == 0.5
    with pytest.raises(ValueError, match="not aggregated"):
        columns.column_mean(frame["question_id"], "question_id")


def test_a_plain_list_is_averaged_as_the_summary_writes_it():
    """`summary.json` averages the rows it wrote: a list of numbers, the same mean as `sum / len` for counts."""
    calls = [1, 3, 3, 2, 1, 1, 3]
    assert columns.column_mean(calls, "llm_calls") == sum(calls) / len(calls)
    assert columns.column_mean([1.0, 0.0, 0.0], col("pass_at_1_first", "t2c")) == 1 / 3
    assert columns.column_mean([10, 20], columns.TOKENS) == 15.0  # a derived column: prompt + completion tokens
    with pytest.raises(ValueError, match="not aggregated"):
        columns.column_mean(["x"], "final_error_type")


def test_mean_ci_is_the_bootstrap_interval_of_the_spec_mean():
    import numpy as np

    from t2c_lib.metrics.stats import paired_bootstrap_ci

    values = [1, 0, 1, 1, 0, 1]
    ci = columns.column_mean_ci(values, "kg_valid_chain_final")
    assert ci == paired_bootstrap_ci(np.zeros(6), np.array(values, dtype=float))
    assert ci.estimate == columns.column_mean(values, "kg_valid_chain_final") and ci.low <= ci.estimate <= ci.high
    with pytest.raises(ValueError, match="not aggregated"):
        columns.column_mean_ci([1, 2], "question_id")


def test_improvement_follows_the_better_direction():
    """`higher_is_better` decides the sign of a gain: a drop in harm or in NO_QUERY replies is an improvement."""
    assert columns.improvement(col("pass_at_1_final", "t2c"), 0.25, 0.5) == 0.25
    assert columns.improvement("kg_valid_chain_final", 0.5, 0.25) == -0.25
    assert columns.improvement("harmed", 0.5, 0.25) == 0.25
    assert columns.improvement("no_query_final", 0.25, 0.5) == -0.25
    with pytest.raises(ValueError, match="no better direction"):
        columns.improvement("llm_calls", 1.0, 2.0)


# progress.py averages seconds per step (timings, not result columns).
OWN_MEANS = {"study/progress.py"}


def _called(node: ast.AST, name: str) -> bool:
    """`node` is a call of `name` (`sum(...)`, or `math.fsum(...)` for `fsum`)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (isinstance(func, ast.Attribute) and func.attr == name)


def _hand_written_means(path: Path) -> list[tuple[int, str]]:
    """`x.mean(...)` calls and `sum(x) / ...` or `math.fsum(x) / ...` quotients: a mean computed without the spec."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        mean_call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "mean"
        sum_by_len = (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Div)
            and (_called(node.left, "sum") and _called(node.right, "len") or _called(node.left, "fsum"))
        )
        if mean_call or sum_by_len:
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_study_averages_result_columns_only_through_the_spec():
    """Analysis, paper tables, comparison, figures, `summary.json` and the CLI take every mean from `column_mean`."""
    written = []
    for folder in ("study", "report", "runs", "cli"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            where = path.relative_to(PACKAGE).as_posix()
            if where not in OWN_MEANS:
                written += [f"{where}:{line}: {text}" for line, text in _hand_written_means(path)]
    assert not written, "means written by hand (use metrics.columns.column_mean):\n" + "\n".join(written)


def test_question_scores_are_averaged_through_the_spec():
    """`summarize` (a cell's `summary.json`) and `t2c score` (`pairs.means`) average every score by its spec record."""
    from t2c_lib.metrics.pairs import STORE_COLUMNS, TEXT_COLUMNS
    from t2c_lib.metrics.scores import SCORE_NAMES

    missing = [n for n in (*SCORE_NAMES, *TEXT_COLUMNS, *STORE_COLUMNS) if n not in columns.SPEC]
    assert not missing, f"scores without a column record: {missing}"
    for module in ("scores.py", "pairs.py"):
        assert _hand_written_means(PACKAGE / "metrics" / module) == []


def test_the_mean_does_not_depend_on_the_rows_order():
    """The exact mean (a correctly rounded sum) gives the same bits in any order, where a running sum may not."""
    import pandas as pd

    values = [0.1] * 10 + [1e16, -1e16]
    shuffled = [1e16, *[0.1] * 5, -1e16, *[0.1] * 5]
    assert sum(values) / 12 != sum(shuffled) / 12  # the naive mean depends on the order
    assert columns.column_mean(values, "bleu") == columns.column_mean(shuffled, "bleu") == 1.0 / 12
    assert columns.column_mean(pd.Series([1.0, None, 0.0]), "success") == 0.5  # a Series skips a missing value
    assert columns.column_mean([], "success") != columns.column_mean([], "success")  # NaN for no values
