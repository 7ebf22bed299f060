"""Follow-up modifications: the previous query plus the requested change, as one request to the model.

The request ("rewrite this query so that ...") is asked through the same `AgentLoop` as a new
question, so the rewritten query meets the same prompts, the same validator chain (read-only
guard and walls first) and the same feedback and repair. Nothing here runs a query.
"""

from __future__ import annotations

from dataclasses import dataclass

from t2c_lib.chat.prompts import load_template

MAX_CHANGE_CHARS = 500
"""A change request longer than this is cut (it is the user's text, inserted as text)."""


@dataclass(frozen=True)
class Context:
    """What a follow-up modifies: the question that led to the previous query, and that query."""

    question: str
    query: str

    def followed_by(self, change: str, query: str) -> Context:
        """The context after a modification: the question grows by the change, the query is the new one."""
        return Context(f"{self.question} ({_flat(change)})", query)


def rewrite_request(context: Context, change: str, language: str) -> str:
    """The text the loop is asked: previous question and query, then "rewrite this query so that <change>"."""
    if not context.query.strip():
        raise ValueError("a modification needs a previous query")
    return (
        load_template(language, "rewrite")
        .substitute(
            question=_flat(context.question),
            query=context.query.strip(),
            change=_flat(change)[:MAX_CHANGE_CHARS],
        )
        .strip()
    )


def same_query(a: str, b: str) -> bool:
    """Whether two queries differ only in whitespace (a rewrite that changed nothing)."""
    return " ".join(a.split()) == " ".join(b.split())


def _flat(text: str) -> str:
    return " ".join(str(text).split())
