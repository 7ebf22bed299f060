"""Prompts of the `feedback` loop's options: repair as a conversation or as a fresh attempt, the repeat guard's line, the corrector's note.

Their templates live in `templates/<lang>/strategies/` beside the other strategies' ones, apart
from the thesis templates, so the thesis runs' template hashes (and manifests) stay as they were.
"""

from __future__ import annotations

from collections.abc import Sequence

from t2c_lib.llm.base import Message
from t2c_lib.prompts.builder import PromptBuilder
from t2c_lib.prompts.config import PromptType
from t2c_lib.prompts.strategies import load_strategy_template, strategy_template_hashes

REPAIR_TEMPLATES = ("repair_turn", "repair_turn_cot", "repeat_guard", "corrected", "fresh_attempt")


def repair_template_hashes(lang: str) -> dict[str, str]:
    """sha256 of the options' templates (for the strategy's settings in a manifest)."""
    return strategy_template_hashes(lang, REPAIR_TEMPLATES)


def assistant_turn(prompts: PromptBuilder, query: str, reasoning: str = "", raw: str = "") -> str:
    """A failed attempt as the model's own turn: its query (and CoT reasoning) written as the examples' answers are.

    With no query extracted, the reply as it came (or `(empty)`), so the turn is what the model said.
    """
    if not query.strip():
        return raw.strip() or ("(kosong)" if prompts.language == "id" else "(empty)")
    if prompts.config.prompt_type is PromptType.COT:
        return f"<think>{reasoning.strip() or '-'}</think>\n<cypher>{query.strip()}</cypher>"
    return f"<cypher>{query.strip()}</cypher>"


def feedback_turn(prompts: PromptBuilder, feedback: str) -> str:
    """The user's reply to a failed attempt in a conversation: the feedback and the request to fix it."""
    name = "repair_turn_cot" if prompts.config.prompt_type is PromptType.COT else "repair_turn"
    return load_strategy_template(prompts.language, name).substitute(feedback=feedback.strip()).strip()


def conversation_messages(prompts: PromptBuilder, question: str, turns: Sequence[tuple[str, str]]) -> list[Message]:
    """The first request, then each failed attempt as an assistant turn followed by its feedback as the user's reply."""
    messages = prompts.initial(question)
    for reply, feedback in turns:
        messages += [Message("assistant", reply), Message("user", feedback_turn(prompts, feedback))]
    return messages


def fresh_messages(prompts: PromptBuilder, question: str, feedbacks: Sequence[str]) -> list[Message]:
    """The first request again, its question followed by what failed: each failure's feedback, never a failed query.

    The small models answer a request that shows their failed query by copying it (issue 38's
    measurement: 35 of 39 thesis refinements on the development set); with no query to copy,
    the model writes the query again from the question, told what was wrong. Every failure's
    feedback, oldest first, so the model is not led back to an earlier failure (chosen on the
    development set: RESULTS.md, "Loop options on the development set").
    """
    messages = prompts.initial(question)
    feedback = "\n\n".join(f.strip() for f in feedbacks if f.strip())
    text = load_strategy_template(prompts.language, "fresh_attempt").substitute(
        question=question.strip(), feedback=feedback
    )
    messages[-1] = Message("user", text.strip())
    return messages


def corrector_note(prompts: PromptBuilder, changes: Sequence[str], feedback: str) -> str:
    """The corrector's changes and why the corrected query still fails, without the query (for fresh attempts)."""
    head = "Korektor skema sudah mencoba:" if prompts.language == "id" else "A schema corrector already tried:"
    return "\n".join([head, *(f"- {c}" for c in changes), "", feedback.strip()]).strip()


def corrected_feedback(prompts: PromptBuilder, changes: Sequence[str], query: str, feedback: str) -> str:
    """The feedback on a query the corrector changed: what it changed, the corrected query, and why it still fails."""
    return (
        load_strategy_template(prompts.language, "corrected")
        .substitute(changes="\n".join(f"- {c}" for c in changes), query=query.strip(), feedback=feedback.strip())
        .strip()
    )


def with_guard_line(prompts: PromptBuilder, messages: Sequence[Message], repeated: str) -> list[Message]:
    """`messages` with the last user message ending in "your query X failed; do not write it again"."""
    line = load_strategy_template(prompts.language, "repeat_guard").substitute(query=" ".join(repeated.split()))
    out = list(messages)
    last = max(i for i, m in enumerate(out) if m.role == "user")
    out[last] = Message("user", out[last].content.rstrip() + "\n\n" + line.strip())
    return out
