"""A loopback OpenAI-compatible endpoint that answers from recorded replies, for endpoint benchmarks and tests.

What the replies are (no model is involved): a reply is the `<cypher>` answer the
*recording rule* (`GoldRule`) gives for the request, and the rule uses only the dataset's
own material. It finds the question in the last user message (the ground-truth question
text), and which attempt this is from the wrong queries an earlier attempt of the rule sent
(the refinement prompt quotes the failed query). A hash of the system prompt and the
question id puts each (configuration, question) in one of four fixed classes:

- 10 in 20: the gold query at once;
- 5 in 20: an unknown label first (a schema error), then the gold query;
- 3 in 20: the unknown label, then a filter on a course that does not exist (an empty
  result), then the gold query;
- 2 in 20: never right: the unknown label, the empty filter, then a syntax error.

So single-pass and feedback cells differ and the feedback loop really iterates (one to
three calls per question). `record()` runs the rule and keeps every request's reply in a
`Recording` (sha256 of the request's messages -> reply text), written once to a JSONL
file; a `ReplayServer` then answers only from that file: a request it has no reply for is
answered HTTP 400 naming the miss, so a benchmark never runs on replies made up on the fly.
Each reply takes `latency_s` (a model's think time, slept per request on its own thread).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from t2c_lib.datasets import GroundTruthItem
from tests.helpers.fault_server import FaultServer

WRONG = (
    "MATCH (k:Kursus) RETURN k.nama",
    "MATCH (m:MK) WHERE m.nama = 'Mata Kuliah Yang Tidak Ada' RETURN m.nama",
    "MATCH (m:MK RETURN m.nama",
)
"""The rule's wrong answers, in the order it gives them: schema error, empty result, syntax error."""

CLASSES = ((10, 0), (5, 1), (3, 2), (2, 3))
"""(share in 20, wrong answers before the gold one; 3 = never right)."""


def request_key(messages: Sequence[dict[str, Any]]) -> str:
    """sha256 of a request's messages (role and content), the key of a recorded reply."""
    blob = json.dumps([[m.get("role"), m.get("content")] for m in messages], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def wrapped(query: str) -> str:
    return f"<cypher>{query}</cypher>"


@dataclass(frozen=True)
class RuleAnswer:
    """What the rule answered and why: the question, the attempt (1-based) and the reply."""

    question_id: str
    attempt: int
    reply: str


class GoldRule:
    """The recording rule: the gold query, after 0-3 fixed wrong ones chosen by a hash (see the module)."""

    def __init__(self, questions: Sequence[GroundTruthItem]) -> None:
        # longest first: a question text that contains another one is found as itself
        self.questions = sorted(questions, key=lambda q: len(q.question), reverse=True)

    def question_in(self, text: str) -> GroundTruthItem:
        for item in self.questions:
            if item.question in text:
                return item
        raise LookupError(f"no ground-truth question in the last user message: {text[:120]!r}")

    def answer(self, messages: Sequence[dict[str, Any]]) -> RuleAnswer:
        users = [m for m in messages if m.get("role") == "user"]
        if not users:
            raise LookupError("the request has no user message")
        last = str(users[-1].get("content", ""))
        item = self.question_in(last)
        attempt = 1 + max((i + 1 for i, query in enumerate(WRONG) if query in last), default=0)
        system = next((str(m.get("content", "")) for m in messages if m.get("role") == "system"), "")
        wrong_first = self.wrong_answers(system, item.id)
        query = WRONG[attempt - 1] if attempt <= min(wrong_first, len(WRONG)) else item.cypher
        return RuleAnswer(item.id, attempt, wrapped(query))

    @staticmethod
    def wrong_answers(system: str, question_id: str) -> int:
        """How many wrong answers this (configuration, question) gets before the gold one (3: never right)."""
        slot = int(hashlib.sha256(f"{system}\n{question_id}".encode()).hexdigest(), 16) % 20
        for share, wrong in CLASSES:
            if slot < share:
                return wrong
            slot -= share
        raise AssertionError("CLASSES must add up to 20")  # pragma: no cover


class Recording:
    """Recorded replies: request key -> reply text, read from and written to a JSONL file."""

    def __init__(self, replies: dict[str, str] | None = None) -> None:
        self.replies: dict[str, str] = dict(replies or {})
        self.notes: dict[str, tuple[str, int]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.replies)

    def add(self, key: str, reply: str, question_id: str = "", attempt: int = 0) -> None:
        with self._lock:
            previous = self.replies.setdefault(key, reply)
            if previous != reply:  # pragma: no cover - the rule is a function of the messages
                raise AssertionError(f"two replies recorded for request {key}")
            self.notes[key] = (question_id, attempt)

    def reply(self, messages: Sequence[dict[str, Any]]) -> str:
        key = request_key(messages)
        try:
            return self.replies[key]
        except KeyError:
            raise LookupError(
                f"no recorded reply for request {key[:16]} (prompts changed since the recording? record again)"
            ) from None

    def write(self, path: Path) -> None:
        """One line per reply, sorted by key: the same replies give the same bytes."""
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for key in sorted(self.replies):
            question_id, attempt = self.notes.get(key, ("", 0))
            record = {"key": key, "question_id": question_id, "attempt": attempt, "reply": self.replies[key]}
            lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        path.write_text("".join(lines), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> Recording:
        recording = cls()
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                recording.add(record["key"], record["reply"], record.get("question_id", ""), record.get("attempt", 0))
        return recording


class ReplayServer(FaultServer):
    """`with ReplayServer(answer, latency_s=1.0) as srv:`: every normal answer is `answer(messages)` after the latency.

    `answer` is `Recording.reply` (replay) or `RecordingRule(...)` (record while answering).
    """

    def __init__(
        self, answer: Callable[[Sequence[dict[str, Any]]], str], latency_s: float = 0.0, port: int = 0
    ) -> None:
        super().__init__(port=port, latency_s=latency_s)
        self.answer = answer

    def reply_for(self, body: dict[str, Any]) -> str:
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise LookupError("the request has no messages")
        return self.answer(messages)


class RecordingRule:
    """Answer by `GoldRule` and keep every reply in `recording` (the one pass that makes the recording)."""

    def __init__(self, rule: GoldRule, recording: Recording) -> None:
        self.rule = rule
        self.recording = recording

    def __call__(self, messages: Sequence[dict[str, Any]]) -> str:
        answer = self.rule.answer(messages)
        self.recording.add(request_key(messages), answer.reply, answer.question_id, answer.attempt)
        return answer.reply
