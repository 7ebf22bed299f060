"""The command line shows the library's user errors in one line and a bug as a bug."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from t2c_lib.cli.common import friendly_errors
from t2c_lib.datasets import DatasetError
from t2c_lib.errors import InvalidValue, PathError, T2CError, user_path


def _command(error: BaseException) -> click.Command:
    @click.command()
    @friendly_errors
    def command() -> None:
        raise error

    return command


def test_a_user_error_is_one_line_and_exit_status_1():
    result = CliRunner().invoke(_command(InvalidValue("--prompt Nope is not in the grid\nsecond line")))
    assert result.exit_code == 1 and result.output == "t2c: error: --prompt Nope is not in the grid\n"
    assert isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    "bug",
    [
        KeyError("question_id"),
        ValueError("a library bug"),
        RuntimeError("x"),
        FileNotFoundError("x"),
        AttributeError("x"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_anything_else_is_a_bug_and_keeps_its_traceback(bug):
    result = CliRunner().invoke(_command(bug))
    assert result.exception is bug and "t2c: error" not in result.output


def test_every_library_error_the_cli_shows_is_a_t2c_error():
    assert issubclass(DatasetError, T2CError) and issubclass(DatasetError, ValueError)
    from t2c_lib.llm.base import LLMConfigError
    from t2c_lib.study.manifest import SettingsChanged
    from t2c_lib.study.params import ParamsError

    assert all(issubclass(e, T2CError) for e in (LLMConfigError, SettingsChanged, ParamsError))


def test_an_unwritable_path_is_a_user_error_naming_it(tmp_path):
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(PathError, match=r"cannot write .*taken/out.csv: Not a directory"):
        with user_path(tmp_path / "taken" / "out.csv"):
            (tmp_path / "taken" / "out.csv").write_text("x")


def test_a_damaged_result_file_is_a_user_error_naming_it(tmp_path):
    from t2c_lib.errors import IncompatibleResults
    from t2c_lib.report.analysis import read_table
    from t2c_lib.runs.runlog import read_json

    (tmp_path / "summary.json").write_text('{"n": 6, "scoring": ', encoding="utf-8")  # a writer killed mid-file
    with pytest.raises(IncompatibleResults, match=r"summary.json: not readable JSON"):
        read_json(tmp_path / "summary.json")
    (tmp_path / "metrics.csv").write_bytes(b"\xff\xfe\x00q")
    with pytest.raises(IncompatibleResults, match=r"metrics.csv: not a readable CSV"):
        read_table(tmp_path / "metrics.csv")
