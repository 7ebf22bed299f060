"""A rerun checked file by file against its published run: what `make all` says after its counts.

`make all` reproduces a published run from its committed replies (`publish.replicate.reproduced_line`
counts them); this module checks the result. Every file the published run holds, except the two the
publisher writes itself (`published.json`, the replies), is looked up in the rerun through the map
the publisher used (`publish.publish.run_files`: `results/<run_id>/...` and `figures/<run_id>/...`)
and compared byte for byte; a cell's gzipped attempt log is compared decompressed with the rerun's log.

Some files cannot repeat byte for byte, and are not called identical when they do not:

- a manifest records the checkout's `git_commit`; a manifest that differs only there is reported as
  "equal but for git_commit" (the rerun of a published run is made at a later commit by design);
- `attempts.jsonl` records wall-clock times (`validation_s`, each validator's `elapsed_s`, the
  execution step's "ran in N s", `model_latency_s`) and whether a reply came from the cache
  (`cached`, true for every reply of a rerun); `questions.jsonl` records `model_time_s` and
  `validation_time_s`. A log whose lines differ only in those fields is reported as "equal but for"
  the fields that actually differed, by name. A conversation run's logs likewise: each session's
  `analytics.jsonl` records the durations of a turn's steps, and `model_calls.jsonl` whether each
  reply came from the cache.

Any other difference, a file that does not parse, or lines added or lost, makes the file differ.
The check never fails the run: it reports (`RerunCheck.lines`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2c_lib.files.gzipped import GzipReadError, read_gzip
from t2c_lib.files.outputs import decode_json, numbered_json_lines
from t2c_lib.llm.call_log import CALLS_FILE
from t2c_lib.publish.publish import PUBLISHER_FILES, is_gzipped_copy, published_run_dir, run_files
from t2c_lib.runs.layout import ATTEMPTS_FILE, MANIFEST_FILE, MAX_ATTEMPTS_BYTES

ANALYTICS_STEPS = ("route", "generate", "validate", "execute", "answer")
"""The steps whose durations a conversation session logs per turn (`chat.log.STEPS`; study does not import chat)."""
CLOCK_ONLY = "(clock)"
"""Marks a text field whose two values differ only in a wall time they name (`CLOCK_IN_TEXT`)."""
COMMIT_FIELDS = frozenset({"git_commit"})
"""Manifest fields a rerun at another commit rewrites."""
RUN_TIME_FIELDS: dict[str, frozenset[str]] = {
    ATTEMPTS_FILE: frozenset(
        {"validation_s", "model_latency_s", "cached", "validations[].elapsed_s", f"validations[].message{CLOCK_ONLY}"}
    ),
    "questions.jsonl": frozenset({"model_time_s", "validation_time_s"}),
    "analytics.jsonl": frozenset(f"durations.{step}" for step in ANALYTICS_STEPS),
    CALLS_FILE: frozenset({"cached"}),
}
"""Per log file: the fields a rerun rewrites with its own clock (and `cached`), as `field` or `list[].field` paths;
a message only where it differs in the time it names."""
CLOCK_IN_TEXT = re.compile(r"\bran in \d+(?:\.\d+)? s\b")
"""The execution step's message names its wall time (`validation.steps`: "ran in 0.002 s, 1 row(s)")."""
SHOWN = 3
"""How many names a line shows of a list (the rest are counted)."""


@dataclass
class RerunCheck:
    """The published run's files sorted by what the rerun made of them."""

    published_dir: Path
    identical: list[str] = field(default_factory=list)
    commit_only: list[str] = field(default_factory=list)  # manifests equal but for git_commit
    run_time_only: dict[str, set[str]] = field(default_factory=dict)  # log -> the run-time fields that differed
    differ: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # files the rerun would publish that the published run lacks

    @property
    def compared(self) -> int:
        return len(self.identical) + len(self.commit_only) + len(self.run_time_only) + len(self.differ)

    def lines(self) -> list[str]:
        """One line for what repeated, one for what did not (`none` when nothing)."""
        total = self.compared + len(self.missing)
        first = f"byte-identical to {_shown(self.published_dir)}/: {len(self.identical)} of {total} published files"
        if self.commit_only:
            first += f"; {len(self.commit_only)} manifests equal but for git_commit"
        if self.run_time_only:
            fields = sorted(set().union(*self.run_time_only.values()))
            first += (
                f"; {len(self.run_time_only)} logs not byte-identical, equal but for the rerun's wall-clock "
                f"and cache fields ({', '.join(_field_name(f) for f in fields)}): {_kinds(self.run_time_only)}"
            )
        second = f"differ: {_listed(self.differ)}; missing from the rerun: {_listed(self.missing)}"
        if self.extra:
            second += f"; not in the published run: {_listed(self.extra)}"
        return [first, second]


def check_rerun(run_id: str, results_dir: Path | None = None, figures_dir: Path | None = None) -> RerunCheck:
    """Compare every file of `results/published/<run_id>/` with the rerun's file it was published from."""
    published = published_run_dir(run_id, results_dir)
    rerun = run_files(run_id, results_dir, figures_dir)
    check = RerunCheck(published)
    names = sorted(
        p.relative_to(published).as_posix()
        for p in published.rglob("*")
        if p.is_file() and p.relative_to(published).as_posix() not in PUBLISHER_FILES
    )
    for name in names:
        ours = rerun.get(name)
        if ours is None:
            check.missing.append(name)
            continue
        try:
            theirs_bytes = _published_content(published / name, ours)
        except GzipReadError:
            check.differ.append(name)
            continue
        ours_bytes = ours.read_bytes()
        if theirs_bytes == ours_bytes:
            check.identical.append(name)
            continue
        fields = _tolerated_difference(Path(name).name.removesuffix(".gz"), theirs_bytes, ours_bytes)
        if fields is None:
            check.differ.append(name)
        elif fields <= COMMIT_FIELDS:
            check.commit_only.append(name)
        else:
            check.run_time_only[name] = fields
    check.extra = sorted(set(rerun) - set(names))
    return check


def _published_content(path: Path, rerun_file: Path) -> bytes:
    """The published file's bytes as the rerun wrote them: a log the publisher gzipped is decompressed (within its limit)."""
    if is_gzipped_copy(path.name, rerun_file):
        return read_gzip(path, MAX_ATTEMPTS_BYTES)
    return path.read_bytes()


def _tolerated_difference(filename: str, published: bytes, rerun: bytes) -> set[str] | None:
    """The tolerated fields in which two unequal files differ, or None when they differ in anything else."""
    tolerated = COMMIT_FIELDS if filename == MANIFEST_FILE else RUN_TIME_FIELDS.get(filename)
    if tolerated is None:
        return None
    try:
        if filename.endswith(".jsonl"):
            left = [value for _, value in numbered_json_lines(published.decode("utf-8"))]
            right = [value for _, value in numbered_json_lines(rerun.decode("utf-8"))]
        else:
            left, right = [decode_json(published)], [decode_json(rerun)]
    except (UnicodeDecodeError, ValueError):
        return None
    if len(left) != len(right):
        return None
    differing = {path for a, b in zip(left, right, strict=True) for path in _differing_paths(a, b, "")}
    if not differing or not differing <= tolerated:
        return None  # bytes differ but the values do not (formatting), or a field that must repeat changed
    return differing


def _differing_paths(a: Any, b: Any, path: str) -> Iterator[str]:
    """The paths (`key`, `list[].key`) at which two JSON values differ; a time in a message is no difference."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            child = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                yield f"{child}(added or removed)"
            else:
                yield from _differing_paths(a[key], b[key], child)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for x, y in zip(a, b, strict=True):
            yield from _differing_paths(x, y, f"{path}[]")
    elif isinstance(a, str) and isinstance(b, str) and a != b:
        clock_only = CLOCK_IN_TEXT.sub("ran in N s", a) == CLOCK_IN_TEXT.sub("ran in N s", b)
        yield f"{path}{CLOCK_ONLY}" if clock_only else path
    elif a != b or type(a) is not type(b):
        yield path


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it is under it (`results/published/R`), else as it is."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _field_name(path: str) -> str:
    return "the execution step's 'ran in N s'" if path.endswith(CLOCK_ONLY) else path


def _kinds(files: dict[str, set[str]]) -> str:
    """`attempts.jsonl x6, questions.jsonl x6`: how many logs of each name."""
    counts: dict[str, int] = {}
    for name in files:
        counts[Path(name).name] = counts.get(Path(name).name, 0) + 1
    return ", ".join(f"{kind} x{n}" for kind, n in sorted(counts.items()))


def _listed(names: list[str]) -> str:
    if not names:
        return "none"
    more = f", +{len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return f"{len(names)} ({', '.join(names[:SHOWN])}{more})"
