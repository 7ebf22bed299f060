"""`Session`: one conversation, turn by turn, its state written after every turn so a killed session resumes.

A turn: the router decides what the message is; a new question goes through the loop, a
modification goes through the loop as "rewrite this query so that ..."; a successful query's
result is checked (warnings, quality) and answered from a template the result fills; an
acknowledgement gets a short reply; an unclear message gets an error response with
suggestions. `session.json` (atomic write) holds the settings, the turns, the context a
follow-up modifies and the message being answered (`pending`, so a resume can ask it
again); `analytics.jsonl` gets one line per turn (`log.py`).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from t2c_lib import config
from t2c_lib.chat import replies
from t2c_lib.chat.checks import check_result, follow_up_check
from t2c_lib.chat.engine import ChatEngine
from t2c_lib.chat.export import ExportInfo, export_frame, result_frame
from t2c_lib.chat.intent import Intent, RouteDecision, RouteSource
from t2c_lib.chat.log import InteractionLog, TurnLog
from t2c_lib.chat.rewrite import Context, rewrite_request, same_query
from t2c_lib.chat.settings import ChatSettings
from t2c_lib.errors import ExportError, InvalidValue, SessionError
from t2c_lib.files.outputs import decode_json, to_json
from t2c_lib.graph.base import StoreError
from t2c_lib.llm.base import LLMError

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.records import AgentState, Attempt

SESSION_FILE = "session.json"
CHAT_DIR = "chat"
STATE_VERSION = 1
MAX_MESSAGE_CHARS = 2000
EXECUTION_STEPS = ("execution", "non_empty")
"""Validator steps whose time is the query's execution (the rest is validation)."""
UNCHANGED = {
    "id": "Kueri hasil penulisan ulang sama dengan kueri sebelumnya.",
    "en": "The rewritten query is the same as the previous one.",
}


class TurnStatus(str, Enum):
    ANSWERED = "answered"
    FAILED = "failed"
    ACKNOWLEDGED = "acknowledged"
    UNCLEAR = "unclear"


@dataclass
class Turn:
    """One turn as `session.json` keeps it (the result's rows are not kept: the query can run again)."""

    turn: int
    message: str
    intent: str
    intent_source: str
    status: str
    text: str
    query: str = ""
    attempt: int = 0
    attempts_allowed: int = 0
    warnings: list[str] = field(default_factory=list)
    quality: int | None = None
    rows: int | None = None
    error: dict[str, Any] | None = None
    route_note: str = ""
    template: str = ""  # the answer template that was filled (the model's, or the fixed one)
    template_from_model: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Answer:
    """What `Session.ask` returns: the text, the final query, the full result, warnings and quality."""

    text: str
    query: str
    result: pd.DataFrame
    warnings: list[str]
    quality: int | None
    intent: Intent
    status: TurnStatus
    question: str
    turn: int
    attempt: int = 0
    attempts_allowed: int = 0
    error: replies.ErrorResponse | None = None
    display_limit: int = 20
    route: RouteDecision | None = None
    state: AgentState | None = field(default=None, repr=False)
    template: str = ""
    template_from_model: bool = False

    @property
    def ok(self) -> bool:
        return self.status is TurnStatus.ANSWERED

    def table(self, limit: int | None = None) -> str:
        """The first `limit` rows (default: the display limit) as text; the full result stays in `.result`."""
        if self.result.empty and not len(self.result.columns):
            return ""
        limit = limit or self.display_limit
        text = self.result.head(limit).to_string(index=False, max_colwidth=60)
        shown = min(limit, len(self.result))
        total = len(self.result)
        more = f"({shown} of {total} rows shown)" if total > shown else f"({total} row{'s' if total != 1 else ''})"
        return text + "\n" + more

    def export(self, path: str | Path) -> tuple[Path, Path]:
        """Write the full result to `path` (.csv, .json, .xlsx, .parquet) and its `.meta.json` sidecar."""
        if not self.query or self.status is not TurnStatus.ANSWERED:
            raise ExportError(f"turn {self.turn} has no result to export ({self.status.value})")
        info = ExportInfo(self.question, self.query, self.attempt, self.attempts_allowed)
        return export_frame(self.result, path, info)

    def __str__(self) -> str:
        table = self.table()
        return self.text + ("\n" + table if table else "")


def new_session_id() -> str:
    """A fresh id: UTC time plus 6 random hex digits (sortable, unique enough for one machine)."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def session_dir(session_id: str, results_dir: Path | None = None) -> Path:
    """`results/chat/<session id>/`; the id must be a plain name (no path separators)."""
    if not session_id or not all(c.isalnum() or c in "-_." for c in session_id) or session_id.startswith("."):
        raise SessionError(f"invalid session id {session_id!r}: use letters, digits, '-', '_' and '.'")
    return Path(results_dir or config.RESULTS_DIR) / CHAT_DIR / session_id


class Session:
    """One conversation over one engine; `ask` answers a message and persists the turn."""

    def __init__(
        self,
        engine: ChatEngine,
        session_id: str,
        directory: Path,
        *,
        on_attempt: Callable[[Attempt], None] | None = None,
        owns_engine: bool = False,
        on_route: Callable[[RouteDecision], None] | None = None,
    ) -> None:
        self.engine = engine
        self.session_id = session_id
        self.directory = Path(directory)
        self.turns: list[Turn] = []
        self.context: Context | None = None
        self.failed_question: str | None = None  # the question of the last query turn, when it failed
        self.pending: str | None = None
        self.resumed = False
        self.on_attempt = on_attempt
        self.on_route = on_route
        self._owns_engine = owns_engine
        self._log = InteractionLog(self.directory)

    # --- opening, resuming, saving -------------------------------------------------------------

    @classmethod
    def start(
        cls,
        settings: ChatSettings | None = None,
        *,
        session_id: str | None = None,
        results_dir: Path | None = None,
        directory: Path | None = None,
        engine: ChatEngine | None = None,
        on_attempt: Callable[[Attempt], None] | None = None,
        on_route: Callable[[RouteDecision], None] | None = None,
        **overrides: Any,
    ) -> Session:
        """Start a session, or resume `session_id` if its folder has a `session.json`.

        `on_route(decision)` and `on_attempt(attempt)` are called as each happens (the CLI's `--debug`).
        A resumed session keeps its recorded settings; `settings`/`overrides` that contradict
        them are an error naming the differences. `engine` shares a built engine (its settings win).
        """
        session_id = session_id or new_session_id()
        directory = Path(directory) if directory is not None else session_dir(session_id, results_dir)
        recorded = _read_state(directory / SESSION_FILE)
        if recorded is not None:
            chosen = ChatSettings.from_dict(recorded["settings"])
            asked = (settings or chosen).with_overrides(**overrides)
            if engine is not None:
                asked = engine.settings
            changed = sorted(k for k, v in asked.to_dict().items() if chosen.to_dict()[k] != v)
            if changed and (settings is not None or overrides or engine is not None):
                raise SessionError(
                    f"session {session_id} was started with other settings ({', '.join(changed)} differ); "
                    "resume it without them, or start a new session"
                )
        else:
            chosen = (engine.settings if engine is not None else (settings or ChatSettings())).with_overrides(
                **overrides
            )
        owns = engine is None
        engine = engine or ChatEngine.open(chosen)
        session = cls(engine, session_id, directory, on_attempt=on_attempt, owns_engine=owns, on_route=on_route)
        if recorded is not None:
            session._restore(recorded)
        else:
            session._save()
        return session

    def _restore(self, state: dict[str, Any]) -> None:
        self.turns = [Turn.from_dict(t) for t in state.get("turns", [])]
        context = state.get("context")
        self.context = Context(context["question"], context["query"]) if context else None
        self.pending = state.get("pending")
        self.failed_question = state.get("failed_question")
        self.resumed = True

    def _save(self) -> None:
        """Write `session.json` atomically (temporary file, fsync, rename)."""
        state = {
            "version": STATE_VERSION,
            "session_id": self.session_id,
            "settings": self.engine.settings.to_dict(),
            "dataset": self.engine.dataset.name,
            "dataset_hash": self.engine.dataset.hash,
            "store": self.engine.store.name,
            "model": getattr(self.engine.model, "model_id", ""),
            "turns": [asdict(t) for t in self.turns],
            "context": asdict(self.context) if self.context else None,
            "pending": self.pending,
        }
        if self.failed_question is not None:
            state["failed_question"] = self.failed_question
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / SESSION_FILE
        tmp = path.with_name(f".{SESSION_FILE}.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            handle.write(to_json(state, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)

    @property
    def settings(self) -> ChatSettings:
        return self.engine.settings

    @property
    def language(self) -> str:
        return self.engine.language

    def close(self) -> None:
        """Close the engine if this session opened it."""
        if self._owns_engine:
            self.engine.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- one turn ------------------------------------------------------------------------------

    def ask(self, message: str) -> Answer:
        """Answer one message (routed, queried or replied), then persist the turn and log it."""
        message = " ".join(str(message).split())[:MAX_MESSAGE_CHARS]
        if not message:
            raise InvalidValue("empty message")
        number = len(self.turns) + 1
        self.pending = message
        self._save()
        history = [(t.message, t.query) for t in self.turns]
        # with follow-ups by edit, a failed turn's question is something to modify too (`_query` builds on it)
        failed = self._edits_follow_ups and self.failed_question is not None
        decision = self.engine.router.route(
            message,
            history,
            has_previous=self.context is not None or failed,
            previous_failed=failed,
            follow_ons=self._edits_follow_ups,
        )
        if self.on_route is not None:
            self.on_route(decision)
        log = TurnLog(self.session_id, number, message, decision.intent.value, decision.source.value, "")
        log.durations["route"] = decision.elapsed_s
        _count(log, decision.llm_calls, decision.prompt_tokens, decision.completion_tokens)
        if decision.intent is Intent.ACKNOWLEDGE:
            answer = self._reply(
                number, message, decision, replies.acknowledgement(self.language), TurnStatus.ACKNOWLEDGED
            )
        elif decision.intent is Intent.UNKNOWN:
            details = f"router: {decision.intent.value} ({decision.source.value}{'; ' + decision.note if decision.note else ''})"
            error = replies.unclear(self.language, self.engine.suggestions, details)
            answer = self._reply(number, message, decision, error.text(self.language), TurnStatus.UNCLEAR, error)
        else:
            answer = self._query(number, message, decision, log)
        log.status = answer.status.value
        log.quality = answer.quality
        if answer.error is not None and log.error is None:
            log.error = answer.error.technical_details
        self.turns.append(
            Turn(
                number,
                message,
                decision.intent.value,
                decision.source.value,
                answer.status.value,
                answer.text,
                answer.query,
                answer.attempt,
                answer.attempts_allowed,
                list(answer.warnings),
                answer.quality,
                None if answer.result.empty and not len(answer.result.columns) else len(answer.result),
                answer.error.to_dict() if answer.error else None,
                decision.note,
                answer.template,
                answer.template_from_model,
            )
        )
        self.pending = None
        self._save()
        self._log.append(log)
        return answer

    def _reply(
        self,
        number: int,
        message: str,
        decision: RouteDecision,
        text: str,
        status: TurnStatus,
        error: replies.ErrorResponse | None = None,
    ) -> Answer:
        return Answer(
            text,
            "",
            pd.DataFrame(),
            [],
            None,
            decision.intent,
            status,
            message,
            number,
            error=error,
            display_limit=self.settings.display_limit,
            route=decision,
        )

    def _query(self, number: int, message: str, decision: RouteDecision, log: TurnLog) -> Answer:
        """A new question or a modification through the loop; a successful result checked and answered.

        With `follow_up: edit`, a modification is first tried as a token edit of the previous query (no model
        call; judged by the same chain), and a modification of a turn that failed is asked as a new question
        built on that turn's question instead of on an older query.
        """
        editing = self._edits_follow_ups
        modifying = decision.intent is Intent.REQUEST_MODIFICATION and self.context is not None
        if editing and decision.intent is Intent.REQUEST_MODIFICATION and self.failed_question is not None:
            modifying = False
            asked = question = Context(self.failed_question, "").followed_by(message, "").question
        else:
            asked = rewrite_request(self._previous(), message, self.language) if modifying else message
            question = self._previous().followed_by(message, "").question if modifying else message
        try:
            state = self._edited(message, question, number) if editing and modifying else None
            if state is None:
                state = self.engine.loop(self.on_attempt).run(asked, f"{self.session_id}-{number}")
        except (LLMError, StoreError) as exc:
            self.failed_question = question
            log.error = f"{type(exc).__name__}: {exc}"
            return self._unanswered(number, question, decision, log.error)
        if state.success and state.result is not None and self.settings.stable_order:
            state = self._in_stable_order(state)
        _record_loop(log, state)
        if not state.success or state.result is None:
            self.failed_question = question
            last = state.attempts[-1] if state.attempts else None
            failed = next((v for v in last.validations if not v.ok), None) if last else None
            details = (
                f"{state.error_type.value if state.error_type else 'FAILED'} after {state.iterations} attempt(s)"
                + (f"; {failed.validator}: {failed.message}" if failed else "")
                + (f"; last query: {last.query}" if last and last.query else "")
            )
            return self._unanswered(number, question, decision, details, state)
        check = check_result(state.result, self.language, self.engine.graph_size)
        if modifying:  # a follow-up keeps the conversation's filters unless its message lets one go
            check = follow_up_check(check, self._previous().query, state.final_query, message, self.language)
        warnings = check.messages
        if modifying and same_query(self._previous().query, state.final_query):
            warnings.append(UNCHANGED.get(self.language, UNCHANGED["en"]))
        writer = self.engine.writer
        filled = writer.write(question, state.result)
        log.durations["answer"] = writer.elapsed_s
        _count(log, writer.llm_calls, writer.prompt_tokens, writer.completion_tokens)
        log.rows = len(state.result.rows)
        self.failed_question = None
        self.context = (
            self._previous().followed_by(message, state.final_query)
            if modifying
            else Context(question, state.final_query)
        )
        return Answer(
            filled.text,
            state.final_query,
            result_frame(state.result),
            warnings,
            check.quality,
            decision.intent,
            TurnStatus.ANSWERED,
            question,
            number,
            state.final_iteration,
            state.max_iterations,
            None,
            self.settings.display_limit,
            decision,
            state,
            filled.template,
            filled.from_model,
        )

    def _unanswered(
        self, number: int, question: str, decision: RouteDecision, details: str, state: AgentState | None = None
    ) -> Answer:
        """A failed turn's error response: with the loop's `state` when the chain refused every attempt, else
        (the model or the store failed) no query."""
        error = replies.failed(self.language, self.engine.suggestions, details)
        return Answer(
            error.text(self.language),
            (state.final_query or "") if state else "",
            pd.DataFrame(),
            [],
            None,
            decision.intent,
            TurnStatus.FAILED,
            question,
            number,
            state.final_iteration if state else 0,
            state.max_iterations if state else 0,
            error,
            self.settings.display_limit,
            decision,
            state,
        )

    @property
    def _edits_follow_ups(self) -> bool:
        """`follow_up: edit`: a follow-up is first a token edit, and a failed turn's question is one to modify."""
        return self.settings.follow_up == "edit"

    def _previous(self) -> Context:
        """The turn a modification builds on (one is routed as a modification only when there is a turn)."""
        if self.context is None:
            raise RuntimeError("a modification without a previous turn")
        return self.context

    def _in_stable_order(self, state: AgentState) -> AgentState:
        """The answer listed by its returned columns when its query sorts nothing (`in_stable_order`), run through
        the same chain; the attempts keep the query as written, and a sorted query the chain refuses changes nothing."""
        from t2c_lib.chat.query_parts import in_stable_order
        from t2c_lib.validation.chain import run_chain

        ordered = in_stable_order(state.final_query, self.engine.store.facts.dialect)
        if ordered is None:
            return state
        parts = self.engine.parts
        started = time.perf_counter()
        verdicts = run_chain(ordered, parts.chain, parts.context)
        elapsed = time.perf_counter() - started
        if len(verdicts) != len(parts.chain) or not all(v.ok for v in verdicts) or parts.context.result is None:
            return state
        return replace(
            state,
            final_query=ordered,
            result=parts.context.result,
            validation_time_s=state.validation_time_s + elapsed,
            wall_time_s=state.wall_time_s + elapsed,
        )

    def _edited(self, message: str, question: str, number: int) -> AgentState | None:
        """The previous query edited as `message` asks and judged by the chain; None when no edit passes it."""
        from t2c_lib.chat.edit_state import edited_state
        from t2c_lib.validation.chain import run_chain

        edit = self.engine.edit(self._previous().query, message)
        if edit is None:
            return None
        parts = self.engine.parts
        started = time.perf_counter()
        verdicts = run_chain(edit.query, parts.chain, parts.context)
        elapsed = time.perf_counter() - started
        if not verdicts or not all(v.ok for v in verdicts) or len(verdicts) != len(parts.chain):
            return None
        state = edited_state(
            question,
            f"{self.session_id}-{number}",
            edit,
            verdicts,
            parts.context.result,
            elapsed,
            self.settings.max_iterations,
            parts.configuration.name,
        )
        if self.on_attempt is not None:
            self.on_attempt(state.attempts[0])
        return state


def _count(log: TurnLog, calls: int, prompt: int, completion: int) -> None:
    log.llm_calls += calls
    log.prompt_tokens += prompt
    log.completion_tokens += completion


def _record_loop(log: TurnLog, state: AgentState) -> None:
    """The loop's share of a turn's log line: time per step, calls, tokens, labels, repair."""
    from t2c_lib.metrics.schema_recall import used_elements

    validations = [v for a in state.attempts for v in a.validations]
    log.durations["generate"] = max(0.0, state.wall_time_s - state.validation_time_s)  # wall time, cache hits included
    log.durations["execute"] = sum(v.elapsed_s for v in validations if v.validator in EXECUTION_STEPS)
    log.durations["validate"] = max(0.0, state.validation_time_s - log.durations["execute"])
    _count(log, state.llm_calls, state.prompt_tokens, state.completion_tokens)
    log.query = state.final_query or ""
    log.attempts = state.iterations
    log.repaired = bool(state.success and state.final_iteration > 1)
    log.labels = sorted(e for e in used_elements(state.final_query) if "." not in e) if state.final_query else []


def _read_state(path: Path) -> dict[str, Any] | None:
    """A session file, or None when there is none; a clear error for a damaged one."""
    if not path.is_file():
        return None
    try:
        state = decode_json(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SessionError(f"{path}: the session file is damaged ({exc}); start a new session") from None
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION or "settings" not in state:
        raise SessionError(f"{path}: not a t2c session file (version {STATE_VERSION})")
    return state


__all__ = ["Answer", "Session", "Turn", "TurnStatus", "new_session_id", "session_dir", "RouteSource"]
