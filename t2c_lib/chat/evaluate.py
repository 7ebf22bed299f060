"""Conversation metrics on a dataset's dialogues: intent accuracy, turn-level Pass@1, follow-up success.

Each dialogue is played as a real session (router, loop, rewrite, answer), one message at a
time, in its own folder. Definitions:

- **intent accuracy**: share of turns whose routed intent is the expected one;
- **turn Pass@1**: over query turns (expected EXECUTE_QUERY or REQUEST_MODIFICATION), the
  share whose final query's result is equivalent to the gold query's (the study's result
  equivalence, `metrics.output.execution_scores` under a scoring preset; a turn that was not
  routed to a query, or whose query failed, scores 0);
- **follow-up success**: turn Pass@1 over the REQUEST_MODIFICATION turns alone. A follow-up
  modifies the session's own previous query, so it depends on the turns before it;
- **follow-up success after a right previous answer**: the same over the follow-ups whose
  previous query turn in the dialogue passed, so an error carried over from an earlier turn
  does not count against the rewrite: what is left is the routing and the rewrite of a right
  query;
- **rule intent accuracy** (a reference, no model): the rule fallback alone on every turn.
  The rules were written beside this test set, so read it as a ceiling of the rules, not a result.

Only deterministic values are written (no times), so the same model, settings and cache give
the same `turns.csv` and `summary.json`. Beside them, `model_calls.jsonl` (`llm.call_log`) lists
every model call of the evaluation with its response-cache key, in order: what a published
conversation run takes its replies by (`study.publish`); only its `cached` flags change when the
evaluation runs again from a filled cache.

An interactive chat turns a failed model call into a failed turn (or the router's rules, or the
fixed answer template) and goes on. An evaluation must not: a model that is unreachable or
misconfigured says nothing about the dialogue, so the evaluation stops with
`ConversationsStopped` and writes no report; the rerun replays what was answered from the
response cache and asks the rest.
"""

from __future__ import annotations

import csv
import hashlib
import io
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from t2c_lib.chat.intent import rule_intent
from t2c_lib.chat.session import Session
from t2c_lib.datasets import (
    CONVERSATIONS_FILE,
    DEV_CONVERSATIONS,
    QUERY_INTENTS,
    SPLITS,
    TEST_SPLIT,
    DatasetError,
    read_conversations,
)
from t2c_lib.errors import T2CError
from t2c_lib.files.outputs import csv_cell, to_json
from t2c_lib.llm.base import ChatModel, LLMError
from t2c_lib.llm.call_log import CALLS_FILE, CallLog, ModelCall, write_calls
from t2c_lib.llm.stack import StopOnOutage
from t2c_lib.metrics.output import execution_scores
from t2c_lib.metrics.scoring import DEFAULT_SCORING, get_scoring
from t2c_lib.records import AttemptKind

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.chat.engine import ChatEngine
    from t2c_lib.chat.settings import ChatSettings
    from t2c_lib.datasets import Dialogue

TURNS_FILE = "turns.csv"
SUMMARY_FILE = "summary.json"
SESSIONS_DIR = "sessions"
METRICS = ("intent_accuracy", "turn_pass_at_1", "follow_up_success", "new_question_pass_at_1")


@dataclass(frozen=True)
class TurnOutcome:
    """One turn of one dialogue: what was expected, what the session did, and its score."""

    dialogue_id: str
    turn: int
    message: str
    expected_intent: str
    intent: str
    intent_source: str
    intent_ok: bool
    rule_intent: str
    status: str
    gold: str
    query: str
    pass_at_1: float | None  # None for turns without a gold query
    attempts: int
    quality: int | None
    error: str
    kind: str = ""  # a follow-up's FOLLOW_UP_KINDS entry from the dialogue file ("" for other turns)
    made_by: str = ""  # a query turn's maker: `edit` (a token edit, no model call) or `loop`; "" otherwise


@dataclass(frozen=True)
class ConversationReport:
    """Every turn's outcome, the summary and the signature of the settings behind them."""

    turns: tuple[TurnOutcome, ...]
    signature: dict[str, Any]
    scoring: str
    calls: tuple[ModelCall, ...] = ()  # every model call, in order, with its response-cache key

    def summary(self) -> dict[str, Any]:
        """The headline numbers with their counts (a share over no turns is None)."""
        query_turns = [t for t in self.turns if t.expected_intent in QUERY_INTENTS]
        follow_ups = [t for t in query_turns if t.expected_intent == "REQUEST_MODIFICATION"]
        new = [t for t in query_turns if t.expected_intent == "EXECUTE_QUERY"]
        after_right = [t for t in follow_ups if _previous_query_turn_passed(query_turns, t)]
        dialogues = sorted({t.dialogue_id for t in self.turns})
        solved = [d for d in dialogues if all(t.pass_at_1 == 1.0 for t in query_turns if t.dialogue_id == d)]
        return {
            "dialogues": len(dialogues),
            "turns": len(self.turns),
            "query_turns": len(query_turns),
            "follow_up_turns": len(follow_ups),
            "new_question_turns": len(new),
            "follow_up_turns_after_right_previous": len(after_right),
            "intent_accuracy": _share([t.intent_ok for t in self.turns]),
            "turn_pass_at_1": _share([t.pass_at_1 == 1.0 for t in query_turns]),
            "follow_up_success": _share([t.pass_at_1 == 1.0 for t in follow_ups]),
            "follow_up_success_after_right_previous": _share([t.pass_at_1 == 1.0 for t in after_right]),
            "new_question_pass_at_1": _share([t.pass_at_1 == 1.0 for t in new]),
            "dialogue_success": _share([d in solved for d in dialogues]),
            "rule_intent_accuracy": _share([t.rule_intent == t.expected_intent for t in self.turns]),
            "routed_by_model": _share([t.intent_source == "model" for t in self.turns]),
            "follow_ups_made_by_edit": sum(t.made_by == "edit" for t in follow_ups),
            "follow_up_right_by_kind": {
                kind: _count([t.pass_at_1 == 1.0 for t in follow_ups if t.kind == kind])
                for kind in sorted({t.kind for t in follow_ups})
            },
            "follow_up_right_by_previous": {
                "previous_right": _count([t.pass_at_1 == 1.0 for t in after_right]),
                "previous_wrong": _count([t.pass_at_1 == 1.0 for t in follow_ups if t not in after_right]),
            },
            "dialogues_right_at_every_turn": _count([d in solved for d in dialogues]),
            "intent_accuracy_by_intent": {
                intent: _share([t.intent_ok for t in self.turns if t.expected_intent == intent])
                for intent in sorted({t.expected_intent for t in self.turns})
            },
            "scoring": self.scoring,
        }

    def rows(self) -> list[dict[str, Any]]:
        return [asdict(t) for t in self.turns]


class ConversationsStopped(T2CError, RuntimeError):
    """The model failed for good (an outage, a configuration error) during an evaluation: nothing is scored."""


def conversations_stopped(exc: LLMError) -> ConversationsStopped:
    """What an outage or a configuration error becomes during an evaluation (`llm.stack.StopOnOutage`).

    The chat parts catch `LLMError` to keep an interactive session going; this error is not
    one, so it passes through them and stops the evaluation instead of scoring the turn.
    """
    return ConversationsStopped(
        f"{exc}. The conversation evaluation stopped and scored nothing for this turn; "
        "rerun it when the model answers (turns already answered come from the response cache)"
    )


def stop_on_model_failure(model: ChatModel) -> ChatModel:
    """`model` with an outage or a configuration error turned into `ConversationsStopped`."""
    return StopOnOutage(model, conversations_stopped)


def _previous_query_turn_passed(query_turns: Sequence[TurnOutcome], follow_up: TurnOutcome) -> bool:
    """Whether the query turn before `follow_up` in its dialogue (the one it modifies) passed."""
    earlier = [t for t in query_turns if t.dialogue_id == follow_up.dialogue_id and t.turn < follow_up.turn]
    return bool(earlier) and max(earlier, key=lambda t: t.turn).pass_at_1 == 1.0


def _count(flags: Sequence[bool]) -> dict[str, int]:
    """k of N: how many of the turns were right, and how many there were."""
    return {"right": sum(flags), "turns": len(flags)}


def _share(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 6) if flags else None


def evaluate_conversations(
    engine: ChatEngine,
    dialogues: Sequence[Dialogue] | None = None,
    *,
    out_dir: Path | None = None,
    scoring: str = DEFAULT_SCORING,
    progress: bool = False,
) -> ConversationReport:
    """Play every dialogue as a fresh session on `engine` and score each turn (sessions under `out_dir/sessions/`).

    Every model call is recorded with its response-cache key (`ConversationReport.calls`).
    """
    get_scoring(scoring)
    dialogues = list(engine.dataset.conversations if dialogues is None else dialogues)
    if not dialogues:
        raise DatasetError(engine.dataset.path, "no conversations (conversations.yaml)")
    outcomes: list[TurnOutcome] = []
    calls = CallLog()
    stopping = engine.with_models(lambda model: calls.wrap(stop_on_model_failure(model)))
    for number, dialogue in enumerate(dialogues, start=1):
        if progress:
            print(f"[{number}/{len(dialogues)}] {dialogue.id}: {dialogue.title}", flush=True)
        outcomes += play_dialogue(stopping, dialogue, out_dir, scoring, calls)
    return ConversationReport(tuple(outcomes), engine.signature(), scoring, tuple(calls.calls))


def play_dialogue(
    engine: ChatEngine, dialogue: Dialogue, out_dir: Path | None, scoring: str, calls: CallLog | None = None
) -> list[TurnOutcome]:
    """One dialogue, turn by turn, in a fresh session; each query turn scored against its gold query.

    `calls`, when given, is told the dialogue and turn before each message (its models record their calls there).
    """
    directory = Path(out_dir) / SESSIONS_DIR / dialogue.id if out_dir is not None else _scratch(dialogue.id)
    if directory.exists():
        shutil.rmtree(directory)
    session = Session.start(session_id=dialogue.id, directory=directory, engine=engine)
    outcomes = []
    previous_query = False
    try:
        for index, turn in enumerate(dialogue.turns, start=1):
            if calls is not None:
                calls.at(dialogue.id, index)
            answer = session.ask(turn.message)
            route = answer.route
            score = None
            if turn.cypher:
                score = execution_scores(
                    turn.cypher,
                    answer.query if answer.ok else None,
                    engine.store,
                    timeout_s=engine.settings.timeout_s,
                    scoring=scoring,
                ).pass_at_1
            expected_rule = rule_intent(turn.message, previous_query, engine.router.vocabulary).value
            previous_query = previous_query or turn.intent in QUERY_INTENTS
            outcomes.append(
                TurnOutcome(
                    dialogue.id,
                    index,
                    turn.message,
                    turn.intent,
                    answer.intent.value,
                    route.source.value if route else "",
                    answer.intent.value == turn.intent,
                    expected_rule,
                    answer.status.value,
                    turn.cypher,
                    answer.query,
                    score,
                    answer.attempt,
                    answer.quality,
                    answer.error.technical_details if answer.error else "",
                    turn.kind,
                    _made_by(answer) if turn.intent in QUERY_INTENTS else "",
                )
            )
    finally:
        session.close()
    return outcomes


def _made_by(answer: Any) -> str:
    """`edit` when the turn's query is a follow-up edit (no model call), `loop` when the loop ran, else ""."""
    state = answer.state
    if state is None or not state.attempts:
        return ""
    return "edit" if state.attempts[0].kind == AttemptKind.FOLLOW_UP_EDIT else "loop"


def _scratch(dialogue_id: str) -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="t2c-conv-")) / dialogue_id


def write_report(report: ConversationReport, out_dir: Path) -> dict[str, Path]:
    """`turns.csv`, `summary.json` (with the signature) and `model_calls.jsonl` under `out_dir`; same report, same bytes."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    columns = [f.name for f in fields(TurnOutcome)]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in report.rows():  # a message or query a spreadsheet would run as a formula is written as text
        writer.writerow({k: ("" if v is None else csv_cell(v)) for k, v in row.items()})
    turns_path = out_dir / TURNS_FILE
    turns_path.write_text(buffer.getvalue(), encoding="utf-8")
    summary_path = out_dir / SUMMARY_FILE
    summary = {**report.summary(), "signature": report.signature}
    summary_path.write_text(to_json(summary, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    calls_path = write_calls(out_dir / CALLS_FILE, report.calls)
    return {"turns": turns_path, "summary": summary_path, "calls": calls_path}


def run_conversations(
    settings: ChatSettings,
    out_dir: Path,
    *,
    limit: int | None = None,
    scoring: str = DEFAULT_SCORING,
    progress: bool = True,
    split: str = TEST_SPLIT,
) -> ConversationReport:
    """Open an engine for `settings`, play the first `limit` dialogues (all: None) of `split`, write the report.

    `split` `test` plays `conversations.yaml`, `dev` plays `dev/conversations.yaml` (for choosing a design).
    """
    from t2c_lib.chat.engine import ChatEngine

    if split not in SPLITS:
        raise DatasetError(settings.dataset, f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    engine = ChatEngine.open(settings)
    try:
        every = (
            engine.dataset.conversations
            if split == TEST_SPLIT
            else read_conversations(engine.dataset.path / DEV_CONVERSATIONS)
        )
        dialogues = every[:limit] if limit else every
        report = evaluate_conversations(engine, dialogues, out_dir=out_dir, scoring=scoring, progress=progress)
        played = engine.dataset.path / (CONVERSATIONS_FILE if split == TEST_SPLIT else DEV_CONVERSATIONS)
        digest = hashlib.sha256(played.read_bytes()).hexdigest() if played.is_file() else ""
        report = replace(report, signature={**report.signature, "dialogues": {"split": split, "sha256": digest}})
    finally:
        engine.close()
    write_report(report, out_dir)
    return report
