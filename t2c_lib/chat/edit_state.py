"""A follow-up edit as the loop's record: one attempt of kind `follow_up_edit`, judged by the chain, no model call.

The session answers, checks and logs an edited query exactly as it does one the loop returned, so an
edit is an `AgentState` with a single successful attempt (its `kind` says no model wrote it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from t2c_lib.records import AgentState, AgentStatus, Attempt, AttemptKind

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.chat.edits import Edit
    from t2c_lib.cypher.query_result import QueryResult
    from t2c_lib.records import ValidationResult

EDIT_MODE = "follow-up-edit"


def edited_state(
    question: str,
    question_id: str,
    edit: Edit,
    verdicts: list[ValidationResult],
    result: QueryResult | None,
    validation_s: float,
    max_iterations: int,
    config: str,
) -> AgentState:
    """The state of a follow-up answered by `edit`, whose query passed every step (`verdicts`)."""
    attempt = Attempt(
        question_id=question_id,
        iteration=1,
        prompt_hash="",
        raw_response="",
        query=edit.query,
        validations=list(verdicts),
        ok=True,
        error_type=None,
        feedback=None,
        validation_s=validation_s,
        config=config,
        mode=EDIT_MODE,
        parse_note="edit: " + ", ".join(edit.kinds),
        status=AgentStatus.SUCCESS.value,
        kind=AttemptKind.FOLLOW_UP_EDIT,
    )
    return AgentState(
        question=question,
        question_id=question_id,
        config=config,
        mode=EDIT_MODE,
        max_iterations=max_iterations,
        status=AgentStatus.SUCCESS,
        attempts=[attempt],
        final_query=edit.query,
        success=True,
        kg_valid=True,
        validation_time_s=validation_s,
        wall_time_s=validation_s,
        final_iteration=1,
        result=result,
    )
