"""The README's and docs' headline tables, rendered from a published run (issue 37, item 4).

A table that reports a run lives in a Markdown page between two marker comments:

    <!-- t2c:table thesis -->
    (generated: do not edit by hand)
    <!-- /t2c:table -->

and is rendered from `results/published/<run_id>/analysis/headline.csv` (the paper's headline,
`study.paper_tables`); `<!-- t2c:table R strategies_headline -->` renders the strategies table
instead, and `<!-- t2c:table conversations conversations -->` a published conversation evaluation
(`make conversations`) from its `summary.json`: each measure as k/N and share, the model and build
from its `published.json`. Only a published run (committed under `results/published/`) is rendered: a table
block whose run is not published is refused, so no number reaches the front door without the
run behind it. `tests/project/test_readme_numbers.py` checks that every table block equals its rendering.

A run still being produced gets a hand-written placeholder instead:

    <!-- t2c:pending thesis -->
    The published run is being produced; ...
    <!-- /t2c:pending -->

Rendering leaves it alone until the run is published, then replaces it by the table; the check
reports a pending block whose run is already published (render it).

`t2c study tables` writes the blocks in place; `t2c study tables --check` only says which differ.
Every problem (an unclosed marker, a table the run lacks, a CSV that is not the headline's) is a
one-line `ReadmeTablesError`.
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from t2c_lib.agent.names import canonical_strategy, default_strategy
from t2c_lib.agent.options import OPTION_KEYS
from t2c_lib.agent.strategies import loop_name, recorded_loop
from t2c_lib.errors import StudyError, T2CError
from t2c_lib.publish.loop_summary import SIGNIFICANT, Pooled, loop_rows, read_json_object
from t2c_lib.publish.publish import INDEX_FILE, published_run_dir
from t2c_lib.report.analysis import BASELINE, TREATMENT
from t2c_lib.report.table_text import p_text
from t2c_lib.runs.gold_screen import read_gold_note
from t2c_lib.study.paper_tables import HEADLINE, MEANS_COLUMNS, PAIRED_COLUMNS, STRATEGIES_HEADLINE
from t2c_lib.study.params import check_run_id

TABLE, PENDING = "table", "pending"
CONVERSATIONS = "conversations"
FOLLOW_UPS = "follow-ups"
"""`<!-- t2c:table BASELINE+TREATMENT follow-ups -->`: two published conversation runs of the same dialogues, follow-up
success by kind and by the previous turn, k/N each, and McNemar's exact test on the paired follow-ups (issue 53)."""
LOOPS = "loops"
TABLES = (HEADLINE, STRATEGIES_HEADLINE, CONVERSATIONS, FOLLOW_UPS, LOOPS)
RUNS_JOINED = "+"
"""`<!-- t2c:table thesis+thesis-strict+movies loops -->`: the loops table sets several published runs side by side."""
"""The tables a block may name: `analysis/<name>.csv` of the published run, or a conversation run's summary."""
CONVERSATION_SUMMARY = "summary.json"
CONVERSATION_ROWS = (
    ("intent accuracy", "turns", "intent_accuracy", "turns"),
    ("turn Pass@1", "query turns", "turn_pass_at_1", "query_turns"),
    ("Pass@1 of new questions", "new-question turns", "new_question_pass_at_1", "new_question_turns"),
    ("follow-up success", "follow-up turns", "follow_up_success", "follow_up_turns"),
    (
        "follow-up success after a right answer",
        "follow-ups whose previous query turn passed",
        "follow_up_success_after_right_previous",
        "follow_up_turns_after_right_previous",
    ),
    ("dialogues right at every turn", "dialogues", "dialogue_success", "dialogues"),
    ("routed by the model", "turns", "routed_by_model", "turns"),
    ("rule intent accuracy (reference)", "turns", "rule_intent_accuracy", "turns"),
)
"""The conversation table's rows: measure, what it is over, the summary's share and the summary's count of N."""
_OPEN = re.compile(r"^<!--\s*t2c:(\S+)(.*?)-->\s*$")
_CLOSE = re.compile(r"^<!--\s*/t2c:(\S+)\s*-->\s*$")
_ANY_MARKER = re.compile(r"<!--\s*/?t2c:")
RENDER_COMMAND = "t2c study tables"


class ReadmeTablesError(StudyError):
    """A marked block that cannot be rendered or checked: a broken marker, an unpublished run, a bad headline file."""


@dataclass(frozen=True)
class Block:
    """One marked block of a page: its kind (`table` or `pending`), run, table, and where it is (0-based lines)."""

    kind: str
    run_id: str
    table: str
    start: int  # the opening marker's line
    end: int  # the closing marker's line
    body: tuple[str, ...]  # the lines between the markers

    def where(self, doc: str) -> str:
        return f"{doc} line {self.start + 1} ({self.kind} {self.run_id} {self.table})"


def find_blocks(text: str, doc: str = "<page>") -> list[Block]:
    """The marked blocks of a page, in order; a marker that is unclosed, nested, unknown or malformed is refused."""
    blocks: list[Block] = []
    lines = text.split("\n")
    opened: tuple[str, str, str, int] | None = None
    fenced = False
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
        if fenced or not (stripped.startswith("<!--") and _ANY_MARKER.search(stripped)):
            continue
        close = _CLOSE.match(stripped)
        start = _OPEN.match(stripped)
        if close:
            if opened is None or close.group(1) != opened[0]:
                raise ReadmeTablesError(
                    f"{doc} line {number + 1}: a closing t2c:{close.group(1)} marker without its opening"
                )
            kind, run_id, table, first = opened
            blocks.append(Block(kind, run_id, table, first, number, tuple(lines[first + 1 : number])))
            opened = None
        elif start:
            if opened is not None:
                raise ReadmeTablesError(
                    f"{doc} line {number + 1}: a t2c marker inside the block opened at line {opened[3] + 1}"
                )
            opened = (*_opening(start, doc, number), number)
        else:
            raise ReadmeTablesError(
                f"{doc} line {number + 1}: a malformed t2c marker; write <!-- t2c:table RUN_ID [TABLE] --> "
                "... <!-- /t2c:table --> on lines of their own"
            )
    if opened is not None:
        raise ReadmeTablesError(
            f"{doc} line {opened[3] + 1}: the t2c:{opened[0]} block is never closed (<!-- /t2c:{opened[0]} -->)"
        )
    return blocks


def _opening(match: re.Match[str], doc: str, number: int) -> tuple[str, str, str]:
    kind, words = match.group(1), match.group(2).split()
    if kind not in (TABLE, PENDING):
        raise ReadmeTablesError(
            f"{doc} line {number + 1}: unknown marker t2c:{kind[:40]!r}; use t2c:{TABLE} or t2c:{PENDING}"
        )
    if not 1 <= len(words) <= 2:
        raise ReadmeTablesError(
            f"{doc} line {number + 1}: t2c:{kind} takes a run id and, optionally, a table ({', '.join(TABLES)})"
        )
    table = words[1] if len(words) == 2 else HEADLINE
    if table not in TABLES:
        raise ReadmeTablesError(f"{doc} line {number + 1}: unknown table {table[:40]!r}; one of {', '.join(TABLES)}")
    runs = words[0].split(RUNS_JOINED) if table in (LOOPS, FOLLOW_UPS) else [words[0]]
    try:
        for run_id in runs:
            check_run_id(run_id)
    except T2CError as exc:
        raise ReadmeTablesError(f"{doc} line {number + 1}: {exc}") from None
    return kind, words[0], table


def _published(run_id: str, table: str, results_dir: Path | None) -> bool:
    """Whether every run a block names is published."""
    runs = run_id.split(RUNS_JOINED) if table in (LOOPS, FOLLOW_UPS) else [run_id]
    return all(published_run_dir(r, results_dir).is_dir() for r in runs)


# --- rendering -----------------------------------------------------------------------------------


def table_source(run_id: str, table: str = HEADLINE, results_dir: Path | None = None) -> Path:
    """The published file a table block is rendered from: `analysis/<table>.csv`, or a conversation run's summary."""
    run_dir = published_run_dir(run_id, results_dir)
    return run_dir / CONVERSATION_SUMMARY if table == CONVERSATIONS else run_dir / "analysis" / f"{table}.csv"


def table_sources(run_id: str, table: str = HEADLINE, results_dir: Path | None = None) -> list[Path]:
    """Every published file a table block is rendered from (the loops table reads three tables of each run)."""
    if table == FOLLOW_UPS:
        return [
            published_run_dir(run, results_dir) / name
            for run in run_id.split(RUNS_JOINED)
            for name in (CONVERSATION_SUMMARY, "turns.csv")
        ]
    if table != LOOPS:
        return [table_source(run_id, table, results_dir)]
    return [
        published_run_dir(run, results_dir) / "analysis" / name
        for run in run_id.split(RUNS_JOINED)
        for name in ("headline.csv", "agentic.csv", "strategies.csv")
    ]


def render_table(run_id: str, table: str = HEADLINE, results_dir: Path | None = None) -> list[str]:
    """The lines of a table block for a published run: a caption paragraph and a Markdown table."""
    if table == LOOPS:
        return _loops_table(run_id.split(RUNS_JOINED), results_dir)
    if table == FOLLOW_UPS:
        return _follow_ups_table(run_id.split(RUNS_JOINED), results_dir)
    run_dir = published_run_dir(run_id, results_dir)
    source = table_source(run_id, table, results_dir)
    if not run_dir.is_dir():
        raise ReadmeTablesError(
            f"run {run_id} is not published (no results/published/{run_id}/); publish it first "
            f"(`make publish RUN={run_id}`) or keep its block a t2c:{PENDING} placeholder"
        )
    if not source.is_file() or source.is_symlink():
        raise ReadmeTablesError(f"{source}: the published run {run_id} has no {table} table (a regular file)")
    if table == CONVERSATIONS:
        return _conversation_table(run_dir, run_id, source)
    columns, rows = _read_rows(source, run_loops(run_dir))
    paired = "k_strategy" in columns
    reference = _reference(run_dir) if paired and table == HEADLINE else {}
    caption = _caption(run_dir, run_id, table, paired, rows)
    if reference:
        caption = caption[:-1] + (
            "; thesis: the thesis's published agentic Pass@1 of that model (its own graph and wording, "
            "`analysis/reference.csv`), a comparison of setting."
        )
    body = _paired_table(rows, table, reference) if paired else _means_table(rows)
    return ["", caption, "", *body, ""]


def _read_rows(path: Path, loops: dict[str, str]) -> tuple[tuple[str, ...], list[dict[str, str]]]:
    """The headline's rows, each with its `loop` (a file written before the column gets its run's, `run_loops`)."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = tuple(reader.fieldnames or ())
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ReadmeTablesError(f"{path}: not a readable CSV ({type(exc).__name__})") from None
    known = (
        PAIRED_COLUMNS,
        MEANS_COLUMNS,
        *(tuple(c for c in t if c != "loop") for t in (PAIRED_COLUMNS, MEANS_COLUMNS)),
    )
    if columns not in known:
        raise ReadmeTablesError(f"{path}: not a headline table (columns {', '.join(columns)[:120]})")
    for number, row in enumerate(rows, 2):
        if None in row or any(v is None for v in row.values()):
            raise ReadmeTablesError(f"{path} line {number}: {len(columns)} cells expected")
        ran = loops.get(row["strategy"], row["strategy"])
        if row.setdefault("loop", ran) != ran:
            raise ReadmeTablesError(
                f"{path} line {number}: names loop {row['loop'][:40]!r} but its cells' manifests ran {ran!r}"
            )
    return columns, rows


def run_loops(run_dir: Path) -> dict[str, str]:
    """Strategy -> the loop its cells' manifests ran (`agent.strategies.recorded_loop`), for a published run."""
    loops: dict[str, str] = {}
    for path in sorted(run_dir.glob("*/*/manifest.json")):
        try:
            loop = recorded_loop(_json(path), str(path))
        except T2CError as exc:
            raise ReadmeTablesError(str(exc)) from None
        strategy = canonical_strategy(path.parent.parent.name)
        if loops.setdefault(strategy, loop.name) != loop.name:
            raise ReadmeTablesError(f"{run_dir}: strategy {strategy!r} ran loops {loops[strategy]!r} and {loop.name!r}")
    return loops


def _caption(run_dir: Path, run_id: str, table: str, paired: bool, rows: list[dict[str, str]]) -> str:
    """Where the table comes from and what it holds: run, dataset, model(s) and build(s), scoring preset, tests."""
    params = _json(run_dir / "manifest.json").get("parameters") or {}
    models, builds = set(), set()
    for manifest in sorted(run_dir.glob("*/*/manifest.json")):
        cell = _json(manifest)
        models.add(str(cell.get("model_id") or "unknown"))
        build = (cell.get("llama_build") or {}).get("id") if isinstance(cell.get("llama_build"), dict) else None
        if build:
            builds.add(str(build))
    who = ", ".join(_code(m) for m in sorted(models)) or "`unknown`"
    if builds:
        who += f" (llama.cpp build {', '.join(_code(b) for b in sorted(builds))})"
    loops = {row["strategy"]: row["loop"] for row in rows}
    compared = loops.get(TREATMENT, TREATMENT)
    what = (
        f"questions right as k/N, {_code(BASELINE)} (SP) -> "
        + (f"{_code(compared)} (FB: {_loop_description(run_dir, compared)})" if table == HEADLINE else "the loop (S)")
        + "; diff: the paired difference of the shares with its bootstrap 95% CI; "
        "p: exact McNemar, Holm-adjusted"
        if paired
        else "questions right as k/N and the share's bootstrap 95% CI; one strategy, so no paired test"
    )
    return (
        f"Rendered by `{RENDER_COMMAND}` from `results/published/{run_id}/analysis/{table}.csv` "
        f"(do not edit by hand): run {_code(run_id)}, dataset {_code(params.get('dataset', 'unknown'))}, "
        f"answered by {who}, Pass@1 under the {_code(params.get('scoring', 'unknown'))} scoring preset, "
        f"KG-valid: the final query passes the whole validator chain; {what}{_gold(run_dir)}."
    )


def _gold(run_dir: Path) -> str:
    """`; gold pairs: kept k of N, ...` from the run's gold screen ("" for a run published without one)."""
    note = read_gold_note(run_dir / "gold_screen")
    return f"; {note}" if note else ""


def _loop_description(run_dir: Path, name: str) -> str:
    """What loop `name` of this run does (from a cell manifest that ran it), in one line."""
    for path in sorted(run_dir.glob("*/*/manifest.json")):
        loop = recorded_loop(_json(path), str(path))
        if loop.name == name:
            return loop.description
    return loop_name(TREATMENT).description if name == loop_name(TREATMENT).name else name


def _loops_table(run_ids: list[str], results_dir: Path | None) -> list[str]:
    """The loops side by side (`publish.loop_summary`): per dataset single-pass, then each run's loop, pooled."""
    dirs = [published_run_dir(r, results_dir) for r in run_ids]
    missing = [r for r, d in zip(run_ids, dirs) if not d.is_dir()]
    if missing:
        raise ReadmeTablesError(
            f"run {missing[0]} is not published (no results/published/{missing[0]}/); publish it first"
        )
    try:
        rows = loop_rows(dirs)
    except T2CError as exc:
        raise ReadmeTablesError(str(exc)) from None
    head = ["dataset", "loop", "run", "Pass@1", "KG-valid", "made valid", "repeats", "model calls per question"]
    lines = [_row(head), _row(["---"] * len(head))]
    for r in rows:
        lines.append(
            _row(
                [
                    f"{_text(r.dataset)} ({_text(r.scoring)})",
                    _code(r.loop),
                    _code(r.run_id),
                    _pooled_text(r.pass_at_1, r.loop == BASELINE),
                    _pooled_text(r.kg_valid, r.loop == BASELINE),
                    "-" if r.made_valid is None else f"{r.made_valid[0]}/{r.made_valid[1]}",
                    "-" if r.repeats is None else f"{r.repeats[0]}/{r.repeats[1]}",
                    f"{r.calls_per_question:.2f}",
                ]
            )
        )
    models = sorted(
        {str(_json(p).get("model_id") or "unknown") for d in dirs for p in sorted(d.glob("*/*/manifest.json"))}
    )
    sources = ", ".join(f"`results/published/{r}/`" for r in run_ids)
    caption = (
        f"Rendered by `{RENDER_COMMAND}` from {sources} (`analysis/headline.csv`, `agentic.csv`, `strategies.csv` and "
        f"the cells' manifests; do not edit by hand), answered by {', '.join(_code(m) for m in models)}: each loop "
        "against single-pass on the same questions, all configurations of its run pooled, Pass@1 under the dataset's "
        "headline scoring preset (in brackets) and KG-valid (the final query passes the whole validator chain) as k/N; "
        "in brackets, the configurations where the loop differs from single-pass after Holm (exact McNemar, "
        f"p < {SIGNIFICANT:g}) and the largest such Holm p; made valid: chain-invalid first attempts whose final query "
        "passes the chain; repeats: refinements (all model replies) repeating a query that already failed; model calls "
        "per question: the mean."
    )
    return ["", caption, "", *lines, ""]


def _pooled_text(pooled: Pooled, baseline: bool) -> str:
    counted = f"{pooled.k}/{pooled.n}"
    if baseline:
        return counted
    if not pooled.significant:
        return f"{counted} (0 of {pooled.configurations})"
    p = pooled.max_significant_p
    bound = "< 0.001" if p < 0.001 else f"≤ {p:.3f}"
    return f"{counted} ({pooled.significant} of {pooled.configurations}, Holm p {bound})"


def _conversation_table(run_dir: Path, run_id: str, source: Path) -> list[str]:
    """A published conversation evaluation: a caption (settings, model, build, preset) and each measure as k/N."""
    summary = _json(source)
    signature = _object(summary.get("signature"))
    chat = _object(signature.get("chat_settings"))
    loop = _object(signature.get("loop"))
    lines = [_row(["measure", "over", "k/N", "share"]), _row(["---"] * 4)]
    for measure, over, share_name, count_name in CONVERSATION_ROWS:
        n = _summary_count(summary, count_name, source)
        share = summary.get(share_name)
        if share is None and n == 0:
            lines.append(_row([measure, over, "0/0", "-"]))
            continue
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ReadmeTablesError(f"{source}: {share_name} is not a share between 0 and 1")
        k = round(share * n)
        if n == 0 or abs(k / n - share) > 1e-5:
            raise ReadmeTablesError(f"{source}: {share_name} {share!r} is no count of {count_name} {n}")
        lines.append(_row([measure, over, f"{k}/{n}", f"{share:.2f}"]))
    models = _json(run_dir / INDEX_FILE).get("models")
    models = models if isinstance(models, dict) else {}
    builds = sorted(
        {_short_build(str(b)) for parts in models.values() if isinstance(parts, dict) for b in parts.get("builds", [])}
    )
    who = ", ".join(_code(m) for m in sorted(models)) or _code(loop.get("model", "unknown"))
    if builds:
        who += f" (llama.cpp build {', '.join(_code(b) for b in builds)})"
    caption = (
        f"Rendered by `{RENDER_COMMAND}` from `results/published/{run_id}/{CONVERSATION_SUMMARY}` (do not edit by "
        f"hand): run {_code(run_id)}, dataset {_code(signature.get('dataset', 'unknown'))}, "
        f"{_summary_count(summary, 'dialogues', source)} dialogues played as chat sessions, answered by {who}; "
        f"configuration {_code(loop.get('config', 'unknown'))}, loop {_code(_chat_loop(chat))} "
        f"(strategy {_code(chat.get('strategy', 'unknown'))}, "
        f"{_code('max_iterations: ' + str(chat.get('max_iterations', '?')))}), router {_code(chat.get('router', 'unknown'))}, "
        f"follow-ups {_code(chat.get('follow_up', 'rewrite'))}, "
        f"rows {'in a stable order' if chat.get('stable_order', False) else 'as the store lists them'}, "
        f"{'value hints under the schema' if chat.get('value_hints', False) else 'no value hints'}; "
        f"a query turn is right when its final query's result equals the gold query's under the "
        f"{_code(summary.get('scoring', 'unknown'))} scoring preset. The rule router's accuracy is a reference: the "
        "rules were written beside these dialogues."
    )
    return ["", caption, "", *lines, ""]


def _chat_loop(chat: dict[str, Any]) -> str:
    """The loop a conversation run's chat settings ran (`thesis-loop`, `vote`, ...), named as the study names loops."""
    try:
        strategy = chat.get("strategy") or default_strategy(int(chat.get("max_iterations", 3) or 3))
        return loop_name(str(strategy), {key: chat[key] for key in OPTION_KEYS if key in chat}).name
    except (T2CError, ValueError, TypeError) as exc:
        raise ReadmeTablesError(f"a conversation run's chat settings name no loop t2c knows: {exc}"[:300]) from None


def _follow_ups_table(run_ids: list[str], results_dir: Path | None) -> list[str]:
    """Two conversation runs of the same dialogues: follow-up success by kind and by the previous turn, and the test."""
    from t2c_lib.chat.compare import compare_follow_ups

    if len(run_ids) != 2:
        raise ReadmeTablesError(f"a {FOLLOW_UPS} block names two runs, BASELINE+TREATMENT (got {len(run_ids)})")
    dirs = [published_run_dir(r, results_dir) for r in run_ids]
    for run_id, run_dir in zip(run_ids, dirs):
        if not (run_dir / CONVERSATION_SUMMARY).is_file():
            raise ReadmeTablesError(f"run {run_id} is not a published conversation run (no {CONVERSATION_SUMMARY})")
    summaries = [_json(d / CONVERSATION_SUMMARY) for d in dirs]
    try:
        paired = compare_follow_ups(*dirs)
    except T2CError as exc:
        raise ReadmeTablesError(str(exc)) from None

    def count(summary: dict, *keys: str) -> str:
        value: Any = summary
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, dict) or not all(isinstance(value.get(k), int) for k in ("right", "turns")):
            return "-"
        return f"{value['right']}/{value['turns']}"

    kinds = sorted({k for s in summaries for k in (s.get("follow_up_right_by_kind") or {}) if k})
    lines = [_row(["follow-ups", *(_code(r) for r in run_ids)]), _row(["---"] * 3)]
    lines.append(
        _row(["every follow-up", f"{paired.baseline_right}/{paired.turns}", f"{paired.treatment_right}/{paired.turns}"])
    )
    for kind in kinds:
        lines.append(_row([f"kind {_code(kind)}", *(count(s, "follow_up_right_by_kind", kind) for s in summaries)]))
    for key, text in (
        ("previous_right", "after a right previous turn"),
        ("previous_wrong", "after a wrong previous turn"),
    ):
        lines.append(_row([text, *(count(s, "follow_up_right_by_previous", key) for s in summaries)]))
    lines.append(
        _row(["made by an edit (no model call)", *(str(s.get("follow_ups_made_by_edit", 0)) for s in summaries)])
    )
    lines.append(
        _row(
            [
                "dialogues right at every turn",
                *(
                    f"{n}/{paired.dialogues}"
                    for n in (paired.baseline_dialogues_right, paired.treatment_dialogues_right)
                ),
            ]
        )
    )
    caption = (
        f"Rendered by `{RENDER_COMMAND}` from `results/published/{run_ids[0]}/` and `results/published/{run_ids[1]}/` "
        f"(`turns.csv`, `{CONVERSATION_SUMMARY}`; do not edit by hand): the same {paired.turns} follow-ups played by "
        f"both runs; right in {_code(run_ids[0])} only: {paired.only_baseline}, in {_code(run_ids[1])} only: "
        f"{paired.only_treatment}; exact McNemar p = {paired.p_value:.3g} (two-sided). A follow-up after a wrong "
        "previous turn is right only when its own answer equals its gold query's."
    )
    return ["", caption, "", *lines, ""]


def _summary_count(summary: dict, name: str, source: Path) -> int:
    value = summary.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ReadmeTablesError(f"{source}: {name} is not a count")
    return value


def _short_build(fingerprint: str) -> str:
    """`0.3.36/x86-64-v3@<12 hex>` for a llama.cpp build fingerprint (`llm.build.LlamaBuild.short`), else as it is."""
    words = fingerprint.split()
    if len(words) < 3 or words[0] != "llama-cpp-python":
        return fingerprint
    return f"{words[1]}/{words[2]}@{hashlib.sha256(fingerprint.encode('utf-8')).hexdigest()[:12]}"


def _json(path: Path) -> dict:
    return read_json_object(path, ReadmeTablesError)


def _object(value: object) -> dict:
    """`value` when it is a JSON object, else {} (a part a summary lacks)."""
    return value if isinstance(value, dict) else {}


def _reference(run_dir: Path) -> dict[str, dict[str, str]]:
    """The thesis's published agentic Pass@1 per model and configuration (`analysis/reference.csv`), if the run has it."""
    path = run_dir / "analysis" / "reference.csv"
    if not path.is_file() or path.is_symlink():
        return {}
    found: dict[str, dict[str, str]] = {}
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if str(row.get("source") or "").startswith("published") and row.get("model"):
                    value = _number(row.get("pass_at_1_final_pct"), path, "pass_at_1_final_pct")
                    shown = "" if math.isnan(value) else f"{value:.2f}%"
                    found.setdefault(str(row["model"]), {})[str(row.get("configuration"))] = shown
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ReadmeTablesError(f"{path}: not a readable CSV ({type(exc).__name__})") from None
    return found


def _groups(rows: list[dict[str, str]]) -> list[tuple[tuple[str, str], dict[str, dict[str, str]]]]:
    """Rows by (strategy, configuration) in file order, each with its measures by name."""
    grouped: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
    for row in rows:
        grouped.setdefault((row["strategy"], row["configuration"]), {})[row["measure"]] = row
    return list(grouped.items())


def _paired_table(rows: list[dict[str, str]], table: str, reference: dict[str, dict[str, str]]) -> list[str]:
    measures = list(dict.fromkeys(r["measure"] for r in rows)) or ["Pass@1", "KG-valid"]
    other = "FB" if table == HEADLINE else "S"
    lead = ["configuration"] if table == HEADLINE else ["loop", "configuration"]
    head = [*lead]
    for measure in measures:
        head += [f"{_text(measure)} SP -> {other}", "diff [95% CI]", "p (Holm)"]
    if table == HEADLINE:
        head += [f"thesis {_text(model)}" for model in reference]
    lines = [_row(head), _row(["---"] * len(head))]
    for (_strategy, configuration), by_measure in _groups(rows):
        loop = next(iter(by_measure.values()))["loop"]
        cells = [_text(configuration)] if table == HEADLINE else [_text(loop), _text(configuration)]
        for measure in measures:
            r = by_measure.get(measure)
            if r is None:
                cells += ["", "", ""]
                continue
            n = _count(r, "n")
            cells += [
                f"{_count(r, 'k_baseline')}/{n} -> {_count(r, 'k_strategy')}/{n}",
                f"{_share(r, 'diff')} [{_share(r, 'diff_low')}, {_share(r, 'diff_high')}]",
                p_text(_number(r["p_holm"], None, "p_holm"), latex=False),
            ]
        if table == HEADLINE:
            cells += [reference[model].get(configuration, "") for model in reference]
        lines.append(_row(cells))
    if not rows:
        lines.append(_row(["no paired questions"] + [""] * (len(head) - 1)))
    return lines


def _means_table(rows: list[dict[str, str]]) -> list[str]:
    measures = list(dict.fromkeys(r["measure"] for r in rows))
    head = ["loop", "configuration"]
    for measure in measures:
        head += [f"{_text(measure)} k/N", "share [95% CI]"]
    lines = [_row(head), _row(["---"] * len(head))]
    for (_strategy, configuration), by_measure in _groups(rows):
        cells = [_text(next(iter(by_measure.values()))["loop"]), _text(configuration)]
        for measure in measures:
            r = by_measure.get(measure)
            if r is None:
                cells += ["", ""]
                continue
            share = f"{_share(r, 'share', sign=False)} [{_share(r, 'share_low', sign=False)}, {_share(r, 'share_high', sign=False)}]"
            cells += [f"{_count(r, 'k')}/{_count(r, 'n')}", share]
        lines.append(_row(cells))
    return lines


def _number(value: str | None, path: Path | None, column: str) -> float:
    text = (value or "").strip()
    if text.lower() in ("", "nan"):
        return math.nan
    try:
        return float(text)
    except ValueError:
        where = f"{path}: " if path else ""
        raise ReadmeTablesError(f"{where}column {column}: {text[:40]!r} is not a number") from None


def _count(row: dict[str, str], column: str) -> int:
    value = _number(row[column], None, column)
    if math.isnan(value) or value != int(value) or value < 0:
        raise ReadmeTablesError(f"headline column {column}: {row[column][:40]!r} is not a count")
    return int(value)


def _share(row: dict[str, str], column: str, sign: bool = True) -> str:
    value = _number(row[column], None, column)
    if math.isnan(value):
        return "-"
    return f"{value:+.2f}" if sign else f"{value:.2f}"


_MARKDOWN = re.compile(r"([\\|`*\[\]<>])")


def _text(value: object) -> str:
    """A cell's text as Markdown shows it literally: control characters to spaces, markup and `|` escaped."""
    text = " ".join(re.sub(r"[\x00-\x1f\x7f]", " ", str(value)).split())
    text = _MARKDOWN.sub(r"\\\1", text)
    return re.sub(r"(?<!\w)_|_(?!\w)", r"\\_", text)


def _code(value: object) -> str:
    """A value in a code span (backticks inside it dropped: a name never needs one)."""
    text = " ".join(re.sub(r"[\x00-\x1f\x7f`]", " ", str(value)).split())
    return f"`{text}`"


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


# --- pages ---------------------------------------------------------------------------------------


def rendered_page(text: str, doc: str = "<page>", results_dir: Path | None = None) -> str:
    """`text` with every table block rendered anew and every pending block whose run is published made a table."""
    lines = text.split("\n")
    for block in reversed(find_blocks(text, doc)):
        if block.kind == PENDING and not _published(block.run_id, block.table, results_dir):
            continue
        opening = f"<!-- t2c:{TABLE} {block.run_id}" + ("" if block.table == HEADLINE else f" {block.table}") + " -->"
        try:
            body = render_table(block.run_id, block.table, results_dir)
        except ReadmeTablesError as exc:
            raise ReadmeTablesError(f"{block.where(doc)}: {exc}") from None
        lines[block.start : block.end + 1] = [opening, *body, f"<!-- /t2c:{TABLE} -->"]
    return "\n".join(lines)


def page_problems(text: str, doc: str = "<page>", results_dir: Path | None = None) -> list[str]:
    """What differs from the published runs: table blocks not equal to their rendering, pending blocks already published."""
    problems = []
    for block in find_blocks(text, doc):
        if block.kind == PENDING:
            if _published(block.run_id, block.table, results_dir):
                problems.append(
                    f"{block.where(doc)}: run {block.run_id} is published now; render it (`{RENDER_COMMAND}`)"
                )
            continue
        try:
            body = render_table(block.run_id, block.table, results_dir)
        except ReadmeTablesError as exc:
            problems.append(f"{block.where(doc)}: {exc}")
            continue
        if list(block.body) != body:
            changed = next(
                (i for i, (a, b) in enumerate(zip(block.body, body)) if a != b), min(len(block.body), len(body))
            )
            problems.append(
                f"{block.where(doc)}: differs from the published run {block.run_id} at line "
                f"{block.start + 2 + changed}; render it (`{RENDER_COMMAND}`)"
            )
    return problems


def table_pages() -> list[Path]:
    """The pages whose blocks `t2c study tables` renders by default: README.md, RESULTS.md and docs/*.md."""
    from t2c_lib import config

    root = config.PROJECT_ROOT
    pages = [root / "README.md", root / "RESULTS.md", *sorted((root / "docs").glob("*.md"))]
    return [p for p in pages if p.is_file()]
