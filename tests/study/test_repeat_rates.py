"""The two repeat rates, side by side everywhere the loop's repeats are shown.

"Repeat rate, all model replies" counts every refinement the model wrote, the replies the repeat
guard rejected (kind `rejected_repeat`) included; "repeat rate, accepted refinements" counts only
the refinements that stood. Without the guard they are equal; with it they differ. The loop runs
here are driven by the scripted stand-in of tests/agent/test_loop_options.py (named as such) on the real
embedded curriculum store; the tables are scored for real on the tiny graph from recorded attempts.
"""

from __future__ import annotations

import json

import matplotlib
import pandas as pd
import pytest

from t2c_lib.agent import ErrorType
from t2c_lib.cli.agent import AttemptPrinter, _echo_refinements
from t2c_lib.metrics import columns
from t2c_lib.metrics.agentic import agentic_metrics, is_accepted_refinement, refinements
from t2c_lib.report.analysis import STRATEGY_SUMMARY, analyze_run, readable_summary
from t2c_lib.report.plots import STYLE, fig_strategy_cost
from t2c_lib.runs.layout import Cell
from t2c_lib.runs.runlog import AttemptLog
from t2c_lib.study.evaluation import evaluate_cell
from tests.agent.test_loop_options import GOOD, QUESTION, SYNONYM, SeededStandIn, cy, make_loop, parts  # noqa: F401
from tests.helpers import recorded

matplotlib.use("Agg")
import matplotlib.pyplot as plt

BROKEN = "MATCH (p:Person RETURN p"
SYNTAX = ErrorType.SYNTAX_ERROR
REJECTED = "rejected_repeat"


def rates(m) -> tuple:
    return (
        m.n_refinements,
        m.n_repeated_refinements,
        m.refinement_repeat_rate,
        m.n_accepted_refinements,
        m.n_accepted_repeats,
        m.accepted_refinement_repeat_rate,
    )


# --- the loop: without the guard the two are equal, with it they differ ---------------------------


def test_without_the_guard_every_refinement_is_accepted_and_the_two_rates_are_equal(parts):  # noqa: F811
    state = make_loop(parts, SeededStandIn([cy(SYNONYM), cy(SYNONYM), cy(SYNONYM + " ;")])).run(QUESTION, "q")
    assert [a.kind for a in state.attempts] == ["generate"] * 3 and not state.success
    m = agentic_metrics(state.attempts, max_iterations=3)
    assert rates(m) == (2, 2, 1.0, 2, 2, 1.0)
    state = make_loop(parts, SeededStandIn([cy(SYNONYM), cy(SYNONYM), cy(GOOD)])).run(QUESTION, "q")
    assert rates(agentic_metrics(state.attempts, max_iterations=3)) == (2, 1, 0.5, 2, 1, 0.5)


def test_with_the_guard_the_rejected_replies_count_in_all_replies_only(parts):  # noqa: F811
    model = SeededStandIn([cy(SYNONYM), cy(SYNONYM), cy(SYNONYM + " "), cy(GOOD)])
    state = make_loop(parts, model, repeat_guard=True).run(QUESTION, "q")
    assert [a.kind for a in state.attempts] == ["generate", REJECTED, REJECTED, "generate"] and state.success
    assert [is_accepted_refinement(a) for a in state.attempts] == [False, False, False, True]
    m = agentic_metrics(state.attempts, max_iterations=3)
    assert rates(m) == (3, 2, pytest.approx(2 / 3), 1, 0, 0.0)  # the guard made the one that stood a new query


def test_with_the_guard_out_of_retries_the_answer_that_stands_is_an_accepted_repeat(parts):  # noqa: F811
    state = make_loop(parts, SeededStandIn([cy(SYNONYM)] * 7), repeat_guard=True).run(QUESTION, "q")
    assert [a.kind for a in state.attempts].count(REJECTED) == 4 and not state.success
    m = agentic_metrics(state.attempts, max_iterations=3)
    assert rates(m) == (6, 6, 1.0, 2, 2, 1.0)
    per_question = refinements(state.attempts)
    assert (per_question.n_accepted_refinements, per_question.n_accepted_repeats) == (2, 2)


def test_pooling_adds_the_accepted_counts_and_an_empty_question_has_no_rate():
    one = refinements([recorded("a", 1, BROKEN, SYNTAX), recorded("a", 2, BROKEN, SYNTAX, kind=REJECTED)])
    two = refinements([recorded("b", 1, BROKEN, SYNTAX), recorded("b", 2, BROKEN, SYNTAX)])
    assert one.accepted_refinement_repeat_rate is None and one.refinement_repeat_rate == 1.0
    pooled = one + two
    assert (pooled.n_refinements, pooled.n_repeated_refinements) == (2, 2)
    assert (pooled.n_accepted_refinements, pooled.n_accepted_repeats) == (1, 1)


# --- t2c ask --verbose ----------------------------------------------------------------------------


def test_ask_verbose_marks_rejected_repeats_and_prints_both_rates(parts, capsys):  # noqa: F811
    printer = AttemptPrinter(verbose=True)
    model = SeededStandIn([cy(SYNONYM), cy(SYNONYM), cy(SYNONYM + " "), cy(GOOD)])
    loop = make_loop(parts, model, repeat_guard=True)
    loop.on_attempt = printer
    state = loop.run(QUESTION, "q")
    _echo_refinements(state)
    out = capsys.readouterr().out
    blocks = out.split("Attempt ")[1:]
    assert len(blocks) == 4 and blocks[1].startswith("2 [rejected repeat] (") and blocks[2].startswith("3 [rejected")
    assert "REJECTED by the repeat guard (a model reply, not an accepted refinement)" in blocks[1]
    assert "REJECTED by the repeat guard" in blocks[2] and "rejected repeat" not in blocks[3]
    assert "repeats a failed query: no" in blocks[3]
    assert "refinements: 3 model replies (2 rejected by the repeat guard), 1 accepted; changes:" in out
    assert "repeat rate, all model replies: 2/3 repeating an already failed query" in out
    assert "repeat rate, accepted refinements: 0/1 repeating an already failed query" in out


def test_ask_verbose_calls_an_accepted_repeat_accepted(capsys):
    printer = AttemptPrinter(verbose=True)
    for a in (
        recorded("q", 1, BROKEN, SYNTAX),
        recorded("q", 2, BROKEN, SYNTAX, kind=REJECTED),
        recorded("q", 3, BROKEN, SYNTAX),
    ):
        printer(a)
    blocks = capsys.readouterr().out.split("Attempt ")[1:]
    assert "which failed the chain; REJECTED by the repeat guard" in blocks[1]
    assert "REPEATS a failed query: attempt 1's, which failed the chain; accepted" in blocks[2]


# --- metrics.csv, summary.json, the analysis tables and the figure ---------------------------------


@pytest.fixture()
def guarded_run(tiny_dataset, tiny_store, tmp_path):
    """single-pass and a guarded feedback cell, recorded by hand: q1 repaired after two rejected repeats, q2 right
    at once, q3 a repeat that stood when the guard's one retry ran out."""
    q1, q2, q3 = tiny_dataset.questions
    run_dir = tmp_path / "run"
    plans = {
        "single-pass": {
            q1.id: [recorded(q1.id, 1, BROKEN, SYNTAX)],
            q2.id: [recorded(q2.id, 1, q2.cypher)],
            q3.id: [recorded(q3.id, 1, BROKEN, SYNTAX)],
        },
        "feedback": {
            q1.id: [
                recorded(q1.id, 1, BROKEN, SYNTAX),
                recorded(q1.id, 2, BROKEN, SYNTAX, kind=REJECTED),
                recorded(q1.id, 3, BROKEN + " ;", SYNTAX, kind=REJECTED),
                recorded(q1.id, 4, q1.cypher),
            ],
            q2.id: [recorded(q2.id, 1, q2.cypher)],
            q3.id: [
                recorded(q3.id, 1, BROKEN, SYNTAX),
                recorded(q3.id, 2, BROKEN, SYNTAX, kind=REJECTED),
                recorded(q3.id, 3, BROKEN, SYNTAX),
            ],
        },
    }
    for strategy, plan in plans.items():
        cell = Cell(strategy, "Zero-Shot", "full_schema")
        log = AttemptLog(cell.directory(run_dir))
        for qid, attempts in plan.items():
            for a in attempts:
                a.mode = strategy
                log.append_attempt(a)
            log.append_question({"question_id": qid, "status": "x", "llm_calls": len(attempts)})
        evaluate_cell(cell, run_dir, tiny_dataset.questions, tiny_dataset, tiny_store, "kg-axel", 3, 10.0)
    return run_dir


def test_metrics_csv_and_summary_carry_both_rates(guarded_run, tiny_dataset):
    q1, q2, q3 = (q.id for q in tiny_dataset.questions)
    cell = guarded_run / "feedback" / "Zero-Shot_Full"
    metrics = pd.read_csv(cell / "metrics.csv").set_index("question_id")
    counts = ["n_refinements", "n_repeated_refinements", "n_accepted_refinements", "n_accepted_repeats"]
    assert metrics.loc[q1, counts].tolist() == [3, 2, 1, 0]
    assert metrics.loc[q2, counts].tolist() == [0, 0, 0, 0]
    assert metrics.loc[q3, counts].tolist() == [2, 2, 1, 1]
    header = list(metrics.reset_index().columns)
    assert header.index("n_repeated_refinements") < header.index("n_accepted_refinements")
    summary = json.loads((cell / "summary.json").read_text())
    assert summary["refinement_repeat_rate"] == 0.8 and summary["accepted_refinement_repeat_rate"] == 0.5
    agentic = summary["agentic"]
    assert [agentic[k] for k in counts] == [5, 4, 2, 1]
    assert agentic["accepted_refinement_repeat_rate"] == 0.5


def test_the_tables_and_the_analyze_summary_show_both_rates(guarded_run, tiny_dataset):
    tables = analyze_run(guarded_run, tiny_dataset.strata_columns)
    rows = tables.strategies.set_index(["strategy", "configuration"])
    fb = rows.loc[("feedback", "ALL")]
    assert fb[["n_refinements", "n_repeated_refinements", columns.REFINEMENT_REPEAT_RATE]].tolist() == [5, 4, 0.8]
    assert fb[["n_accepted_refinements", "n_accepted_repeats", columns.ACCEPTED_REPEAT_RATE]].tolist() == [2, 1, 0.5]
    assert pd.isna(rows.loc[("single-pass", "ALL"), columns.ACCEPTED_REPEAT_RATE])
    assert {columns.REFINEMENT_REPEAT_RATE, columns.ACCEPTED_REPEAT_RATE} <= set(STRATEGY_SUMMARY)
    shown = STRATEGY_SUMMARY.index
    assert shown(columns.REFINEMENT_REPEAT_RATE) < shown(columns.ACCEPTED_REPEAT_RATE)

    overview = tables.agentic.set_index("configuration").loc["Zero-Shot_Full"]
    assert overview[[columns.REFINEMENT_REPEAT_RATE, columns.ACCEPTED_REPEAT_RATE]].tolist() == [0.8, 0.5]
    assert overview[["n_accepted_refinements", "n_accepted_repeats"]].tolist() == [2, 1]

    line = readable_summary(tables).iloc[0]
    assert line["fb repeat rate, all model replies"] == "4/5"
    assert line["fb repeat rate, accepted refinements"] == "1/2"


def test_the_strategy_figure_draws_both_rates_with_their_counts(guarded_run, tiny_dataset):
    tables = analyze_run(guarded_run, tiny_dataset.strata_columns)
    with plt.style.context(str(STYLE)):
        fig = fig_strategy_cost(tables)
        panel = fig.axes[2]
        assert [round(p.get_height(), 6) for p in panel.patches] == [
            0.8,
            0.5,
        ]  # feedback only: single-pass never refines
        assert [t.get_text() for t in panel.get_legend().get_texts()] == [
            columns.REFINEMENT_REPEAT_LABEL,
            columns.ACCEPTED_REPEAT_LABEL,
        ]
        assert {"4/5", "1/2"} <= {t.get_text() for t in panel.texts}
        plt.close(fig)


def test_cells_evaluated_before_the_accepted_counts_show_no_accepted_rate(guarded_run, tiny_dataset):
    cell = guarded_run / "feedback" / "Zero-Shot_Full"
    metrics = pd.read_csv(cell / "metrics.csv")
    metrics.drop(columns=["n_accepted_refinements", "n_accepted_repeats"]).to_csv(cell / "metrics.csv", index=False)
    summary = json.loads((cell / "summary.json").read_text())
    for key in ("n_accepted_refinements", "n_accepted_repeats", "accepted_refinement_repeat_rate"):
        summary["agentic"].pop(key)
    (cell / "summary.json").write_text(json.dumps(summary))
    tables = analyze_run(guarded_run, tiny_dataset.strata_columns)
    fb = tables.strategies.set_index(["strategy", "configuration"]).loc[("feedback", "ALL")]
    assert fb[columns.REFINEMENT_REPEAT_RATE] == 0.8 and pd.isna(fb[columns.ACCEPTED_REPEAT_RATE])
    assert readable_summary(tables).iloc[0]["fb repeat rate, accepted refinements"] == "-"
    assert pd.isna(tables.agentic.iloc[0][columns.ACCEPTED_REPEAT_RATE])


def test_the_column_spec_names_each_rate_from_two_loop_counts():
    loop = {c.name for c in columns.LOOP}
    for rate in columns.REPEAT_RATES:
        assert {rate.repeats, rate.refinements} <= loop
    assert [r.label for r in columns.REPEAT_RATES] == [
        "repeat rate, all model replies",
        "repeat rate, accepted refinements",
    ]


def test_llm_calls_count_model_calls_not_corrector_attempts(tiny_dataset, tiny_store, tmp_path):
    """A corrector's attempt asks no model: metrics.csv and summary.json take the loop's own count of model calls
    (questions.jsonl `llm_calls`), while `iterations` still counts every attempt."""
    q1, q2, q3 = tiny_dataset.questions
    cell = Cell("feedback", "Zero-Shot", "full_schema")
    log = AttemptLog(cell.directory(tmp_path))
    plan = {
        q1.id: ([recorded(q1.id, 1, BROKEN, SYNTAX), recorded(q1.id, 2, q1.cypher, kind="corrector")], 1),
        q2.id: ([recorded(q2.id, 1, q2.cypher)], 1),
        q3.id: (
            [
                recorded(q3.id, 1, BROKEN, SYNTAX),
                recorded(q3.id, 2, BROKEN, SYNTAX, kind="corrector"),
                recorded(q3.id, 3, q3.cypher),
            ],
            2,
        ),
    }
    for qid, (attempts, calls) in plan.items():
        for a in attempts:
            a.mode = "feedback"
            log.append_attempt(a)
        log.append_question({"question_id": qid, "status": "x", "llm_calls": calls})
    evaluate_cell(cell, tmp_path, tiny_dataset.questions, tiny_dataset, tiny_store, "kg-axel", 3, 10.0)
    metrics = pd.read_csv(cell.directory(tmp_path) / "metrics.csv").set_index("question_id")
    assert metrics.loc[[q1.id, q2.id, q3.id], "llm_calls"].tolist() == [1, 1, 2]
    assert "model_calls" not in metrics  # the same count, once (issue 51)
    assert metrics.loc[[q1.id, q2.id, q3.id], "iterations"].tolist() == [2, 1, 3]
    summary = json.loads((cell.directory(tmp_path) / "summary.json").read_text())
    assert summary["llm_calls_per_question"] == pytest.approx(4 / 3)
