"""A finished run, published into the repository: `results/published/<run_id>/`.

`t2c publish --run-id R` (or `make publish RUN=R`) copies what a reader needs to check the run
without a model: every cell's per-question results, attempt logs (gzipped: `attempts.jsonl.gz`), metrics and manifests, the
run's analysis tables (CSV and LaTeX), its figures with their captions (`figures/`), and
`replies.jsonl.gz`: the response-cache rows the run used (`publish.published`). `published.json`
lists every file with its size and sha256. Left out: the executed notebooks and their logs
(they carry clock times), the step stamps, torn lines set aside on resume.

Which cache rows a run used. The cache key is a hash (`llm.cache.cache_key`) over the model
id, the model's fingerprint (packaged models: the GGUF's sha256 and the llama.cpp build),
messages, temperature, max_tokens, stop and seed; an attempt records the hash of its messages
(`prompt_hash`), its temperature, per-call seed and the raw reply, and its cell's manifest the
model id and build. A cache row was used by the run when its stored request is of the cell's
model and build, its messages hash to an attempt's `prompt_hash`, its temperature (and seed,
where the attempt set one) are the attempt's, and its text is the attempt's raw reply. The keys
are recomputed from the stored requests, not recorded per attempt, so runs made before this
module publish too; every model call of the run must find its row, or publishing is refused
(a cleared cache cannot be published from). The same rule, against a published file instead of
the cache, counts how many published replies a rerun was answered from (`replies_used`), and, against
the published run's own attempt logs, which of its replies seeding admits (`own_replies`: a row keyed
to a request none of its cells made, such as a user's own `t2c ask`, is refused).

A conversation evaluation (`make conversations`: `results/conversations/`, or any folder under results/
holding its `summary.json` and `turns.csv`) publishes the same way under its folder's name
(`t2c publish --run-id conversations`): every file of the folder but the executed notebook and logs
(`turns.csv`, `summary.json`, the figure, each dialogue's session files, `model_calls.jsonl`), and the
replies. It records no prompts, so its replies are found by the cache keys its `model_calls.jsonl` lists
(`llm.call_log`): every listed key must be a row of the cache whose key is the hash of its request, or
publishing is refused; `published.json`'s `model_attempts` counts its model calls.

Publishing is all or nothing: the tree is written beside its place, its size checked against
`PUBLISHED_CAP_BYTES` (all published runs together), and only then swapped in. The same run
publishes the same bytes (files copied as they are; replies sorted, gzip mtime 0; no dates).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2c_lib import config
from t2c_lib.errors import MissingResults, StudyError
from t2c_lib.files.gzipped import gzip_bytes
from t2c_lib.files.outputs import JsonLineError, decode_json, numbered_json_lines
from t2c_lib.llm.base import Message
from t2c_lib.llm.cache import CacheRow, ResponseCache, cache_key
from t2c_lib.llm.call_log import CALLS_FILE, CallLogError, ModelCall, read_calls
from t2c_lib.prompts.builder import prompt_hash
from t2c_lib.publish.published import REPLIES_FILE, PublishedReply, read_replies, write_replies
from t2c_lib.records import NO_MODEL_CALL
from t2c_lib.runs.layout import ATTEMPTS_FILE, MANIFEST_FILE, attempt_log_cells, attempts_text
from t2c_lib.study.params import check_run_id, valid_run_id

PUBLISHED_DIR = "published"
"""Under results/: one folder per published run (tracked by git, unlike the rest of results/)."""
PUBLISHED_CAP_BYTES = 40_000_000
"""All published runs together stay under 40 MB (the repository carries them)."""
INDEX_FILE = "published.json"
PUBLISHER_FILES = frozenset({INDEX_FILE, REPLIES_FILE})
"""Files of a published run that the publisher writes itself (the index, the replies), not copied from the run."""
FIGURES = "figures"
GZIPPED_FILES = frozenset({ATTEMPTS_FILE})
"""A grid's files published gzipped (`<name>.gz`, deterministic): attempt logs are half of a run's bytes and
shrink about elevenfold; `runs.layout.attempts_text` reads either form."""
LEFT_OUT_DIRS = frozenset({"notebooks"})
"""Folders of a run that are not published: the executed notebooks and their logs carry clock times."""
CONVERSATION_FILES = ("summary.json", "turns.csv")
"""A run folder holding both is a conversation evaluation (`chat.evaluate.write_report`), not a study grid."""
CONVERSATION_LEFT_OUT = (".ipynb", ".log")
"""Files of a conversation run that are not published: the executed notebook and logs carry clock times."""


class PublishError(StudyError):
    """A run that cannot be published as asked (missing replies, over the size cap, a link in its folder)."""


def published_root(results_dir: Path | None = None) -> Path:
    return Path(results_dir or config.RESULTS_DIR) / PUBLISHED_DIR


def published_run_dir(run_id: str, results_dir: Path | None = None) -> Path:
    """`results/published/<run_id>` for a valid run id (a path-like id is a one-line error)."""
    check_run_id(run_id)
    return published_root(results_dir) / run_id


# --- which replies a run used -------------------------------------------------------------------


@dataclass
class RepliesUsed:
    """The rows a run's model-call attempts were answered with, and what had none."""

    rows: dict[str, CacheRow] = field(default_factory=dict)
    model_attempts: int = 0  # attempts that asked a model (from the cache or not)
    model_calls: int = 0  # of those, the ones the model answered (not `cached`) when the run recorded them
    unmatched: list[str] = field(default_factory=list)  # `<cell> <question> #<iteration>` without a row


def is_conversation_run(run_dir: Path) -> bool:
    """Whether `run_dir` holds a conversation evaluation (`make conversations`) rather than a study grid."""
    return all((Path(run_dir) / name).is_file() for name in CONVERSATION_FILES)


def _cells(run_dir: Path) -> list[Path]:
    return sorted(p.parent for p in run_dir.glob(f"*/*/{ATTEMPTS_FILE}") if (p.parent / MANIFEST_FILE).is_file())


def _read_json(path: Path) -> Any:
    try:
        return decode_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PublishError(f"{path}: not readable JSON ({type(exc).__name__}); rerun the step that wrote it") from None


def _attempts(cell: Path) -> Iterator[dict[str, Any]]:
    """The records of a cell's attempt log: a run's `attempts.jsonl`, or a published cell's gzipped one."""
    try:
        text = attempts_text(cell)
    except UnicodeDecodeError:
        raise PublishError(f"{cell}: the attempt log is not UTF-8") from None
    try:
        for _, record in numbered_json_lines(text):
            if isinstance(record, dict):
                yield record
    except JsonLineError as exc:
        raise PublishError(f"{cell / ATTEMPTS_FILE} {exc}") from None


def _cell_model(cell: Path) -> tuple[str, str | None]:
    """(model id, llama.cpp build fingerprint or None for an endpoint) from the cell's manifest."""
    manifest = _read_json(cell / MANIFEST_FILE)
    build = (manifest.get("llama_build") or {}).get("fingerprint")
    return str(manifest.get("model_id", "")), build


def _row_build(row: CacheRow) -> str:
    return PublishedReply(row).build


def _match_index(rows: Iterable[CacheRow]) -> dict[tuple[str, str], list[CacheRow]]:
    """Rows by (hash of their messages, text): what an attempt's `prompt_hash` and raw reply look up."""
    index: dict[tuple[str, str], list[CacheRow]] = defaultdict(list)
    for row in rows:
        messages = row.request.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, list) and len(m) == 2 for m in messages):
            continue
        digest = prompt_hash([Message(str(role), str(content)) for role, content in messages])
        index[(digest, row.text)].append(row)
    return index


def replies_used(run_dir: Path, rows_of: Any, cells: list[Path] | None = None) -> RepliesUsed:
    """Match every model-call attempt of the run to its rows; `rows_of(model_id)` gives the candidate rows.

    Candidates are narrowed to the cell's build (a packaged model's manifest names it), then
    to the attempt's messages, reply text, temperature and per-call seed (module docstring).
    A conversation run's calls are matched by the keys its `model_calls.jsonl` lists.
    `cells`: only these cell folders (default: every cell of `run_dir` with an attempt log and a manifest).
    """
    if is_conversation_run(run_dir):
        return _conversation_replies_used(run_dir, rows_of)
    used = RepliesUsed()
    groups: dict[tuple[str, str | None], list[Path]] = defaultdict(list)
    for cell in _cells(run_dir) if cells is None else cells:
        groups[_cell_model(cell)].append(cell)
    for (model_id, build), cells in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1] or "")):
        index = _match_index(r for r in rows_of(model_id) if build is None or _row_build(r) == build)
        for cell in cells:
            name = cell.relative_to(run_dir).as_posix()
            for attempt in _attempts(cell):
                if attempt.get("kind") in NO_MODEL_CALL:
                    continue
                used.model_attempts += 1
                used.model_calls += not attempt.get("cached", False)
                found = [
                    row
                    for row in index.get(
                        (str(attempt.get("prompt_hash", "")), str(attempt.get("raw_response", ""))), []
                    )
                    if float(row.request.get("temperature", -1)) == float(attempt.get("temperature", 0.0))
                    and (attempt.get("seed") is None or row.request.get("seed") == attempt.get("seed"))
                ]
                if not found:
                    used.unmatched.append(f"{name} {attempt.get('question_id')} #{attempt.get('iteration')}")
                used.rows.update((row.key, row) for row in found)
    return used


def conversation_calls(run_dir: Path) -> list[ModelCall]:
    """The model calls a conversation run recorded (`model_calls.jsonl`); a missing or bad log is one `PublishError`."""
    path = Path(run_dir) / CALLS_FILE
    if not path.exists() and not path.is_symlink():
        raise PublishError(
            f"{run_dir}: no {CALLS_FILE}; the run was made before conversation runs recorded their model calls, "
            "rerun it (`make conversations`)"
        )
    try:
        return read_calls(path)
    except CallLogError as exc:
        raise PublishError(str(exc)) from None


def _conversation_replies_used(run_dir: Path, rows_of: Any) -> RepliesUsed:
    """Every call of a conversation run matched to the row of its key (of its model, the key its request's hash)."""
    used = RepliesUsed()
    by_model: dict[str, list[ModelCall]] = defaultdict(list)
    for call in conversation_calls(run_dir):
        by_model[call.model_id].append(call)
    for model_id, calls in sorted(by_model.items()):
        wanted = {call.key for call in calls}
        rows = {row.key: row for row in rows_of(model_id) if row.key in wanted and _keyed_by_request(row)}
        for call in calls:
            used.model_attempts += 1
            used.model_calls += not call.cached
            row = rows.get(call.key)
            if row is None:
                used.unmatched.append(f"{call.dialogue} turn {call.turn} key {call.key[:12]}")
            else:
                used.rows[row.key] = row
    return used


def _keyed_by_request(row: CacheRow) -> bool:
    try:
        return cache_key(row.request) == row.key
    except (TypeError, ValueError):
        return False


# --- the published tree ---------------------------------------------------------------------------


def _files(root: Path, prefix: str, conversation: bool = False) -> dict[str, Path]:
    """Every regular file under `root` to publish, by its path in the published tree; a link is refused.

    Left out: hidden and torn files, a grid's executed notebooks (`LEFT_OUT_DIRS`), a conversation run's
    executed notebook and logs (`CONVERSATION_LEFT_OUT`).
    """
    found: dict[str, Path] = {}
    if not root.is_dir():
        return found
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_symlink():
            raise PublishError(f"{path}: a link; a published run holds only the run's own files (remove the link)")
        if not path.is_file() or any(part.startswith(".") for part in rel.parts):
            continue
        if rel.parts[0] in LEFT_OUT_DIRS or path.name.endswith(".torn"):
            continue
        if conversation and len(rel.parts) == 1 and path.suffix in CONVERSATION_LEFT_OUT:
            continue
        found[f"{prefix}{rel.as_posix()}"] = path
    return found


def run_files(run_id: str, results_dir: Path | None = None, figures_dir: Path | None = None) -> dict[str, Path]:
    """The files a published run takes from the run, by their path in `results/published/<run_id>/`.

    `results/<run_id>/<path>` becomes `<path>` (not the executed notebooks, hidden or torn files) and
    `figures/<run_id>/<path>` becomes `figures/<path>`; a cell's `attempts.jsonl` becomes `attempts.jsonl.gz`
    (`GZIPPED_FILES`, written by `published_bytes`); the publisher adds `published.json` and the replies
    (`PUBLISHER_FILES`). A rerun is checked against its published run through the same map (`publish.rerun_check`).
    A conversation run keeps its figure in its own folder (`figures/`), so its map is its folder alone.
    """
    run_dir = Path(results_dir or config.RESULTS_DIR) / check_run_id(run_id)
    if is_conversation_run(run_dir):
        return _files(run_dir, "", conversation=True)
    files = {_published_name(name): path for name, path in _files(run_dir, "").items()}
    files.update(_files(Path(figures_dir or config.FIGURES_DIR) / run_id, f"{FIGURES}/"))
    return files


def _published_name(name: str) -> str:
    """A cell's attempt log is published gzipped (`<cell>/attempts.jsonl.gz`); every other file keeps its name."""
    return f"{name}.gz" if Path(name).name in GZIPPED_FILES else name


def is_gzipped_copy(name: str, source: Path) -> bool:
    """Whether the published file `name` is the run's file `source` gzipped by the publisher (`GZIPPED_FILES`)."""
    return name.endswith(".gz") and not source.name.endswith(".gz")


def published_bytes(name: str, source: Path) -> bytes:
    """What the published run holds at `name` for the run's file `source`: its bytes, gzipped when the name says so."""
    data = source.read_bytes()
    return gzip_bytes(data) if is_gzipped_copy(name, source) else data


def tree_bytes(root: Path) -> int:
    """Bytes of every file under `root` (0 when it does not exist)."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink()) if root.is_dir() else 0


@dataclass(frozen=True)
class Publication:
    """What `publish_run` wrote."""

    run_id: str
    directory: Path
    files: int
    replies: int
    bytes: int
    all_published_bytes: int

    def line(self) -> str:
        return (
            f"published run {self.run_id}: {self.directory}/ ({self.files} files, {self.replies} replies, "
            f"{self.bytes / 1e6:.2f} MB; all published runs {self.all_published_bytes / 1e6:.2f} MB "
            f"of the {PUBLISHED_CAP_BYTES / 1e6:.0f} MB cap)"
        )


def publish_run(
    run_id: str,
    cache: ResponseCache,
    results_dir: Path | None = None,
    figures_dir: Path | None = None,
    cap_bytes: int = PUBLISHED_CAP_BYTES,
) -> Publication:
    """Write `results/published/<run_id>/` from `results/<run_id>/`, `figures/<run_id>/` and `cache`; all or nothing."""
    target = published_run_dir(run_id, results_dir)
    if run_id == PUBLISHED_DIR:
        raise PublishError(f"run_id {run_id!r} is the folder published runs live in; use another run id")
    run_dir = Path(results_dir or config.RESULTS_DIR) / run_id
    conversation = is_conversation_run(run_dir)
    if not conversation and not _cells(run_dir):
        raise MissingResults(
            f"{run_dir}: no cell with attempts and a manifest, and no conversation evaluation; "
            "run it first (`make all`, `make conversations`)"
        )
    files = run_files(run_id, results_dir, figures_dir)
    if not conversation and not any(name.startswith("analysis/") for name in files):
        raise PublishError(f"{run_dir}: no analysis tables; finish the run first (`make all` or `t2c analyze`)")
    used = replies_used(run_dir, lambda model_id: cache.rows(model=model_id))
    if used.unmatched:
        raise PublishError(
            f"{len(used.unmatched)} of the run's {used.model_attempts} model replies are not in the response cache "
            f"{cache.path} (first: {used.unmatched[0]}); publish from the cache the run filled"
        )

    root = published_root(results_dir)
    incoming = root / f".incoming-{run_id}"
    shutil.rmtree(incoming, ignore_errors=True)
    try:
        index = _write_tree(incoming, run_id, files, used)
        size = tree_bytes(incoming)
        others = sum(tree_bytes(p) for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and p != target)
        if size + others > cap_bytes:
            raise PublishError(
                f"publishing {run_id} would make results/{PUBLISHED_DIR} {(size + others) / 1e6:.2f} MB "
                f"({size / 1e6:.2f} MB this run, {others / 1e6:.2f} MB the others), over the "
                f"{cap_bytes / 1e6:.0f} MB cap; nothing was written"
            )
        outgoing = root / f".outgoing-{run_id}"
        shutil.rmtree(outgoing, ignore_errors=True)
        if target.exists():
            target.rename(outgoing)
        incoming.rename(target)
        shutil.rmtree(outgoing, ignore_errors=True)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
    return Publication(run_id, target, len(index["files"]) + 1, len(used.rows), size, size + others)


def _write_tree(out: Path, run_id: str, files: dict[str, Path], used: RepliesUsed) -> dict[str, Any]:
    """Copy the files, write the replies and the index (`published.json`); no dates, sorted, so the bytes repeat."""
    for name, source in sorted(files.items()):
        destination = out / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(published_bytes(name, source))
    replies = write_replies(out / REPLIES_FILE, used.rows.values())
    listed = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        listed[path.relative_to(out).as_posix()] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    models: dict[str, dict[str, set[str]]] = defaultdict(lambda: {"sha256": set(), "builds": set()})
    for row in used.rows.values():
        reply = PublishedReply(row)
        models[reply.model_id]["sha256"].add(reply.model_sha256)
        models[reply.model_id]["builds"].add(reply.build)
    index = {
        "run_id": run_id,
        "replies": replies,
        "model_attempts": used.model_attempts,
        "models": {m: {k: sorted(v - {""}) for k, v in parts.items()} for m, parts in sorted(models.items())},
        "files": listed,
        "replies_key": "llm.cache.cache_key over each row's request (model, fingerprint, messages, "
        "temperature, max_tokens, stop, seed)",
    }
    (out / INDEX_FILE).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return index


def read_published_replies(run_id: str, results_dir: Path | None = None) -> list[PublishedReply] | None:
    """The published replies of `run_id`, checked (`publish.published.read_replies`); None when the run is not published."""
    path = published_run_dir(run_id, results_dir) / REPLIES_FILE
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        raise PublishError(f"{path}: not a regular file")
    return read_replies(path)


@dataclass(frozen=True)
class OwnReplies:
    """Published replies split by whether the run's own attempt logs asked for them (what seeding admits)."""

    admitted: list[PublishedReply]
    refused: int  # replies keyed to a request no attempt of the run's own cells made


def own_replies(run_id: str, results_dir: Path | None = None) -> OwnReplies | None:
    """The published replies of `run_id` that its own cells' attempt logs asked for; None when it is not published.

    A published run is hostile input: a reply keyed to any other request (one of the user's own `t2c ask`)
    would answer that request from the file. A grid's own cells are those its `manifest.json` names; a
    reply is admitted when `replies_used` matches it to one of their attempts (or, for a conversation
    run, when its `model_calls.jsonl` lists its key)."""
    replies = read_published_replies(run_id, results_dir)
    if replies is None:
        return None
    run_dir = published_run_dir(run_id, results_dir)
    by_model: dict[str, list[CacheRow]] = defaultdict(list)
    for reply in replies:
        by_model[reply.model_id].append(reply.row)
    cells = None if is_conversation_run(run_dir) else _named_cells(run_dir)
    used = replies_used(run_dir, lambda model_id: by_model.get(model_id, []), cells)
    admitted = [reply for reply in replies if reply.row.key in used.rows]
    return OwnReplies(admitted, len(replies) - len(admitted))


def _named_cells(run_dir: Path) -> list[Path]:
    """The cells a published grid's `manifest.json` names that hold an attempt log and a manifest of their own."""
    manifest = _read_json(run_dir / MANIFEST_FILE)
    named = manifest.get("cells") if isinstance(manifest, dict) else None
    if not isinstance(named, dict):
        raise PublishError(f"{run_dir / MANIFEST_FILE}: no 'cells' mapping, so no cell is the run's own")
    present = {
        c.relative_to(run_dir).as_posix(): c for c in attempt_log_cells(run_dir) if (c / MANIFEST_FILE).is_file()
    }
    return [present[name] for name in sorted(named) if name in present]


def every_published_reply(results_dir: Path | None = None) -> OwnReplies:
    """The own replies (`own_replies`) of every published run, each key once (the first run by name that holds it).

    What a run that is not published itself (a part of a published grid, a new parameter file over the same
    questions) seeds from: a reply is keyed by its whole request, so it only ever answers that request."""
    root = published_root(results_dir)
    if not root.is_dir():
        return OwnReplies([], 0)
    seen: dict[str, PublishedReply] = {}
    refused = 0
    for run in sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink() and valid_run_id(p.name)):
        own = own_replies(run, results_dir)
        if own is None:
            continue
        refused += own.refused
        for reply in own.admitted:
            seen.setdefault(reply.row.key, reply)
    return OwnReplies(list(seen.values()), refused)
