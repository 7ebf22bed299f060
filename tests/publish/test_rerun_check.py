"""A rerun checked against its published run file by file (`publish.rerun_check`, `t2c study reproduced`).

The run is a real study run built in the test (`tests.publish.test_publish.make_run`: the notebook steps on the embedded
curriculum store, a real response cache; the model behind the cache is that module's scripted stand-in), published,
and then its files are changed the way a rerun could change them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from t2c_lib.cli import main
from t2c_lib.llm.cache import ResponseCache
from t2c_lib.publish.publish import publish_run
from t2c_lib.publish.rerun_check import check_rerun
from tests.publish.test_publish import make_run

# runs and reruns a small study: `make test` runs it, `make test-fast` stays under a minute
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A finished run `pub`, published (built once: the run takes seconds)."""
    root = tmp_path_factory.mktemp("rerun")
    cache = ResponseCache(root / "cache.sqlite")
    make_run(root, "pub", cache)
    publish_run("pub", cache, root / "results", root / "figures")
    return root


@pytest.fixture
def run(built, tmp_path):
    """A copy of the published run and of the run it was published from, free to change."""
    for part in ("results", "figures"):
        shutil.copytree(built / part, tmp_path / part)
    return tmp_path


def check(root: Path):
    return check_rerun("pub", root / "results", root / "figures")


def test_an_unchanged_run_is_byte_identical_in_every_file(run):
    result = check(run)
    published = run / "results/published/pub"
    files = [p for p in published.rglob("*") if p.is_file() and p.name not in ("published.json", "replies.jsonl.gz")]
    assert len(result.identical) == len(files) > 20
    assert any(n.startswith("figures/") for n in result.identical)
    assert any(n.startswith("analysis/") for n in result.identical)
    assert not (result.differ or result.missing or result.commit_only or result.run_time_only or result.extra)
    assert result.lines() == [
        f"byte-identical to {published}/: {len(files)} of {len(files)} published files",
        "differ: none; missing from the rerun: none",
    ]


def test_a_changed_table_differs_and_is_named(run):
    table = run / "results/pub/analysis/headline.csv"
    table.write_text(table.read_text().replace("0", "1", 1))
    result = check(run)
    assert result.differ == ["analysis/headline.csv"]
    assert "differ: 1 (analysis/headline.csv); missing from the rerun: none" in result.lines()[1]


def test_a_manifest_that_differs_only_in_git_commit_is_equal_and_says_so(run):
    manifest = run / "results/pub/feedback/Zero-Shot_Full/manifest.json"
    data = json.loads(manifest.read_text())
    data["git_commit"] = "0" * 40 + "-dirty"
    manifest.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    result = check(run)
    assert result.commit_only == ["feedback/Zero-Shot_Full/manifest.json"] and not result.differ
    assert "; 1 manifests equal but for git_commit" in result.lines()[0]
    # any other field of a manifest must repeat
    data["model_id"] = "local/another"
    manifest.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    assert check(run).differ == ["feedback/Zero-Shot_Full/manifest.json"]


def test_a_missing_figure_is_reported_missing(run):
    figure = sorted((run / "figures/pub").glob("*.png"))[0]
    figure.unlink()
    result = check(run)
    assert result.missing == [f"figures/{figure.name}"]
    assert result.lines()[1] == f"differ: none; missing from the rerun: 1 (figures/{figure.name})"


def _rewrite_attempts(path: Path, change) -> None:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        change(record)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))


def _clock(record: dict) -> None:
    record["validation_s"] += 1.5
    record["cached"] = True
    for step in record["validations"]:
        step["elapsed_s"] += 0.25
        step["message"] = step["message"].replace("ran in 0.0", "ran in 9.9")


def test_logs_that_differ_only_in_wall_clock_fields_are_not_called_identical(run):
    log = run / "results/pub/feedback/Zero-Shot_Full/attempts.jsonl"
    _rewrite_attempts(log, _clock)
    result = check(run)
    name = "feedback/Zero-Shot_Full/attempts.jsonl.gz"
    assert name not in result.identical and not result.differ
    assert result.run_time_only == {
        name: {"validation_s", "cached", "validations[].elapsed_s", "validations[].message(clock)"}
    }
    first = result.lines()[0]
    assert "1 logs not byte-identical, equal but for the rerun's wall-clock and cache fields" in first
    assert "validation_s" in first and "'ran in N s'" in first and first.endswith("attempts.jsonl.gz x1")


def test_a_log_whose_query_or_length_changed_differs(run):
    log = run / "results/pub/feedback/Zero-Shot_Full/attempts.jsonl"
    original = log.read_text()
    _rewrite_attempts(log, lambda r: (_clock(r), r.update(query=r["query"] + " LIMIT 1")))
    assert check(run).differ == ["feedback/Zero-Shot_Full/attempts.jsonl.gz"]
    log.write_text(original + original.splitlines(keepends=True)[0])
    assert check(run).differ == ["feedback/Zero-Shot_Full/attempts.jsonl.gz"]
    log.write_text("not json\n")
    assert check(run).differ == ["feedback/Zero-Shot_Full/attempts.jsonl.gz"]


def test_the_command_make_all_ends_with_reports_and_exits_0(run, monkeypatch):
    monkeypatch.setattr("t2c_lib.config.RESULTS_DIR", run / "results")
    monkeypatch.setattr("t2c_lib.config.FIGURES_DIR", run / "figures")
    runner = CliRunner()
    out = runner.invoke(main, ["study", "reproduced", "--run-id", "pub"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert len(lines) == 3 and lines[0].startswith("reproduced from ") and lines[1].startswith("byte-identical to ")
    assert lines[2] == "differ: none; missing from the rerun: none"
    (run / "results/pub/analysis/headline.csv").write_text("changed\n")
    out = runner.invoke(main, ["study", "reproduced", "--run-id", "pub"])
    assert out.exit_code == 0 and "differ: 1 (analysis/headline.csv)" in out.output, out.output
    out = runner.invoke(main, ["study", "reproduced", "--run-id", "nothing"])
    assert out.exit_code == 0 and out.output.count("\n") == 1 and "not published" in out.output


def test_a_published_log_that_is_not_gzip_or_decompresses_past_its_limit_differs(run, monkeypatch):
    name = "feedback/Zero-Shot_Full/attempts.jsonl.gz"
    packed = run / "results/published/pub" / name
    original = packed.read_bytes()
    packed.write_bytes(original[: len(original) // 2])  # cut short
    assert check(run).differ == [name]
    packed.write_bytes(b"plain text, not gzip")
    assert check(run).differ == [name]
    packed.write_bytes(original)
    assert check(run).differ == []
    monkeypatch.setattr("t2c_lib.publish.rerun_check.MAX_ATTEMPTS_BYTES", 100)  # a bomb stops at the limit
    every_log = sorted(
        p.relative_to(packed.parents[2]).as_posix() for p in packed.parents[2].rglob("attempts.jsonl.gz")
    )
    assert len(every_log) == 2 and check(run).differ == every_log
