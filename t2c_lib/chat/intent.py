"""The router: what a user message is (new question, modification, acknowledgement, unclear).

The model decides first; when its reply names no category, or more than one, a
deterministic rule decides instead (`rule_intent`). In the `hybrid` mode (the default) the
rules also get a second look at a model's UNKNOWN: a small model calls plain questions about
the graph "unclear", and an unanswered question costs more than one sent to the validated loop;
and, when the caller says the previous turn failed, at a model's EXECUTE_QUERY (it saw no query).
Either way the decision says who made it, so a log can tell the model's routing from the
rules'. A modification with no previous query to modify is routed as a new question, and the
decision says so.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from t2c_lib.chat.prompts import load_examples, load_template
from t2c_lib.llm.base import LLMError, Message

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.llm.base import ChatModel, Usage
    from t2c_lib.schema import GraphSchema


class Intent(str, Enum):
    """What a message asks the assistant to do."""

    EXECUTE_QUERY = "EXECUTE_QUERY"
    REQUEST_MODIFICATION = "REQUEST_MODIFICATION"
    ACKNOWLEDGE = "ACKNOWLEDGE"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def parse(cls, text: str) -> Intent:
        """An intent by its name; the error names the valid ones."""
        try:
            return cls(str(text).strip().upper())
        except ValueError:
            raise ValueError(f"unknown intent {text!r} (valid: {', '.join(i.value for i in cls)})") from None


ONE_LINE = ["\n"]
"""Side calls (routing, answer templates) want one line; stopping there saves the model's time."""


class RouterMode(str, Enum):
    """Who routes: the model (rules when its reply is unusable), the model with the rules checking its UNKNOWN, or the rules alone."""

    HYBRID = "hybrid"
    MODEL = "model"
    RULES = "rules"


class RouteSource(str, Enum):
    """Who decided: the model's reply, or the rules (reply unusable, a hybrid check of the model's UNKNOWN, or routing set to rules)."""

    MODEL = "model"
    RULES = "rules"


@dataclass(frozen=True)
class RouteDecision:
    """One routing decision, as recorded with the turn."""

    intent: Intent
    source: RouteSource
    model_reply: str = ""
    note: str = ""
    elapsed_s: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "intent": self.intent.value,
            "source": self.source.value,
            "model_reply": self.model_reply,
            "note": self.note,
        }


# --- the model's reply -----------------------------------------------------------------------

_ALIASES = {
    "EXECUTE_QUERY": Intent.EXECUTE_QUERY,
    "EXECUTE": Intent.EXECUTE_QUERY,
    "NEW_QUERY": Intent.EXECUTE_QUERY,
    "REQUEST_MODIFICATION": Intent.REQUEST_MODIFICATION,
    "MODIFICATION": Intent.REQUEST_MODIFICATION,
    "MODIFY": Intent.REQUEST_MODIFICATION,
    "ACKNOWLEDGE": Intent.ACKNOWLEDGE,
    "ACKNOWLEDGEMENT": Intent.ACKNOWLEDGE,
    "UNKNOWN": Intent.UNKNOWN,
}
_WORD = re.compile(r"[A-Z_]+")


def parse_intent(reply: str) -> Intent | None:
    """The one category a reply names (by name or a short alias), else None (none, or several)."""
    named = {_ALIASES[w] for w in _WORD.findall((reply or "").upper()[:400]) if w in _ALIASES}
    return named.pop() if len(named) == 1 else None


# --- the rule fallback -----------------------------------------------------------------------

ACK_WORDS = frozenset(
    "terima kasih makasih trims thanks thank you ok oke okay baik sip mantap siap bagus noted paham mengerti "
    "iya ya sudah cukup great good nice perfect cool alright fine banyak much very".split()
)
"""Words an acknowledgement is made of (Indonesian and English); every word of the message must be one."""

MODIFY_OPENERS = (
    "urutkan",
    "urut",
    "saring",
    "filter",
    "hanya",
    "cuma",
    "batasi",
    "tampilkan juga",
    "tambahkan",
    "sertakan",
    "tanpa",
    "hilangkan",
    "hapus",
    "kecuali",
    "bagaimana dengan",
    "kalau",
    "lalu",
    "sekarang",
    "ambil",
    "pilih",
    "tampilkan hanya",
    "sort",
    "order",
    "only",
    "limit",
    "also",
    "add",
    "include",
    "remove",
    "drop",
    "without",
    "exclude",
    "kelompokkan",
    "group",
    "how about",
    "what about",
    "and for",
    "now",
    "just",
    "keep",
    "show only",
    "top",
)
"""How a request to change the previous result usually begins."""

MODIFY_REFERENCES = (
    "tadi",
    "tersebut",
    "hasil itu",
    "hasilnya",
    "daftar itu",
    "di atas",
    "sebelumnya",
    "previous",
    "the result",
    "those",
    "that list",
    "above",
)
"""Words that point back at the previous result."""

QUESTION_WORDS = frozenset(
    "apa apakah berapa siapa mana manakah kapan bagaimana mengapa kenapa sebutkan tampilkan tunjukkan cari carikan "
    "daftar jelaskan what which who how list show find give tell name count".split()
)
STOPWORDS = frozenset(
    "yang dan atau dari pada untuk dengan dalam sebagai oleh adalah saja setiap semua seluruh ini itu ada "
    "the and for with from that this what which are has have into each".split()
)


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).lower()
    return re.findall(r"[^\W_]+", folded)


def domain_vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """Content words (4+ letters, no stopwords) of the dataset's schema and questions: what the graph is about."""
    return frozenset(
        w for text in texts for w in _words(text) if len(w) >= 4 and w not in STOPWORDS and not w.isdigit()
    )


def rule_intent(message: str, has_previous: bool, vocabulary: frozenset[str] = frozenset()) -> Intent:
    """The deterministic router: acknowledgement words, modification openers or references, question about the graph."""
    words = _words(message)
    text = " ".join(words)
    if not words:
        return Intent.UNKNOWN
    if "?" not in message and len(words) <= 6 and all(w in ACK_WORDS for w in words):
        return Intent.ACKNOWLEDGE
    if has_previous and (
        any(text == o or text.startswith(o + " ") for o in MODIFY_OPENERS)
        or any(re.search(rf"\b{re.escape(r)}\b", text) for r in MODIFY_REFERENCES)
    ):
        return Intent.REQUEST_MODIFICATION
    about_graph = bool(vocabulary & set(words)) or "'" in message or '"' in message
    asks = "?" in message or words[0] in QUESTION_WORDS or any(w in QUESTION_WORDS for w in words[:3])
    if about_graph and (asks or len(words) >= 3):
        return Intent.EXECUTE_QUERY
    return Intent.UNKNOWN


FOLLOW_ON_OPENERS = ("and", "dan", "what about", "how about", "bagaimana dengan", "kalau", "lalu", "terus", "then")
"""Words a message opens with when it continues the previous turn rather than asking anew."""
FOLLOW_ON_MOST_WORDS = 4


def schema_words(schema: GraphSchema) -> frozenset[str]:
    """The words of a graph's labels, relationship types and properties (`ACTED_IN` gives `acted`; pieces of
    fewer than three letters only when a name is one word, like `MK`)."""
    out: set[str] = set()
    kinds = [*schema.labels, *schema.rel_types]
    for name in [*kinds, *(p for kind in kinds for p in schema.properties_of(kind))]:
        pieces = _words(name.replace("_", " "))
        out.update(p for p in pieces if len(p) >= 3 or len(pieces) == 1)
    return frozenset(out)


def follows_on(message: str, names: frozenset[str]) -> bool:
    """Whether a message cannot stand alone: it opens with a continuation word ("And in 'Cast Away'?"), or it is at
    most four words with no quoted value and no word of the graph's own names ("Ada berapa banyak?")."""
    words = _words(message)
    text = " ".join(words)
    if not words or all(w in ACK_WORDS for w in words):
        return False
    if any(text == o or text.startswith(o + " ") for o in FOLLOW_ON_OPENERS):
        return True
    quoted = "'" in message or '"' in message
    return len(words) <= FOLLOW_ON_MOST_WORDS and not quoted and not names & set(words)


# --- routing ---------------------------------------------------------------------------------


@dataclass
class Router:
    """Route messages with a model and the rules (see `RouterMode`), in one language over one graph's vocabulary."""

    model: ChatModel | None
    language: str
    vocabulary: frozenset[str] = field(default_factory=frozenset)
    mode: RouterMode = RouterMode.HYBRID
    names: frozenset[str] = field(default_factory=frozenset)  # `schema_words`: what `follows_on` looks for
    max_tokens: int = 16
    history_turns: int = 3

    def messages(self, message: str, history: Sequence[tuple[str, str]]) -> list[Message]:
        """System instructions, the few-shot examples as user/assistant pairs, then the last turns and the message."""
        out = [Message("system", load_template(self.language, "router").template.strip())]
        for example in load_examples(self.language, "router_examples"):
            pairs = [(str(said), str(query)) for said, query in example.get("history") or []]
            out += [
                Message("user", self._user(str(example["message"]), pairs)),
                Message("assistant", str(example["intent"])),
            ]
        return [*out, Message("user", self._user(message, list(history)[-self.history_turns :]))]

    def _user(self, message: str, history: Sequence[tuple[str, str]]) -> str:
        lines = []
        for said, query in history:
            lines.append(("Pengguna: " if self.language == "id" else "User: ") + " ".join(said.split())[:300])
            if query:
                lines.append(("Kueri: " if self.language == "id" else "Query: ") + " ".join(query.split())[:300])
        empty = "(belum ada)" if self.language == "id" else "(none yet)"
        return (
            load_template(self.language, "router_user")
            .substitute(history="\n".join(lines) or empty, message=" ".join(message.split()))
            .strip()
        )

    def route(
        self,
        message: str,
        history: Sequence[tuple[str, str]],
        has_previous: bool,
        previous_failed: bool = False,
        follow_ons: bool = False,
    ) -> RouteDecision:
        """Decide the message's intent; the model first (if used), the rules when its reply is unusable or (hybrid) UNKNOWN.

        `previous_failed`: the last query turn found no query, so the model sees none in the history and calls a
        follow-up of it a new question; hybrid routing then lets the rules read a modification (issue 53, chosen on
        the development dialogues). `follow_ons`: a message that cannot stand alone (`follows_on`) is a
        modification even when the model calls it a new question (issue 53, third round).
        """
        started = time.perf_counter()
        reply, usage, calls, chosen, source, note = "", None, 0, None, RouteSource.RULES, "routing by rules"
        if self.mode is not RouterMode.RULES and self.model is not None:
            calls = 1
            try:
                completion = self.model.complete(
                    self.messages(message, history), temperature=0.0, max_tokens=self.max_tokens, stop=ONE_LINE
                )
            except LLMError as exc:
                note = f"model call failed ({exc}); rules decided"
            else:
                reply, usage = completion.text, completion.usage
                chosen = parse_intent(reply)
                if chosen is None:
                    note = "model reply names no single category; rules decided"
                else:
                    source, note = RouteSource.MODEL, ""
        if chosen is None:
            chosen = rule_intent(message, has_previous, self.vocabulary)
        elif self.mode is RouterMode.HYBRID and (overrulable := _overrulable(chosen, previous_failed)):
            ruled = rule_intent(message, has_previous, self.vocabulary)
            if ruled in overrulable:
                after = " after a failed turn" if chosen is Intent.EXECUTE_QUERY else ""
                note = f"model said {chosen.value}{after}; the rules read {ruled.value} (hybrid routing)"
                chosen, source = ruled, RouteSource.RULES
        if (
            self.mode is RouterMode.HYBRID
            and follow_ons
            and has_previous
            and source is RouteSource.MODEL
            and chosen is Intent.EXECUTE_QUERY
            and follows_on(message, self.names)
        ):
            note = f"model said {chosen.value}; the message cannot stand alone: a modification (hybrid routing)"
            chosen, source = Intent.REQUEST_MODIFICATION, RouteSource.RULES
        if chosen is Intent.REQUEST_MODIFICATION and not has_previous:
            chosen, note = (
                Intent.EXECUTE_QUERY,
                (note + "; " if note else "") + "no previous query to modify: a new question",
            )
        return _decision(chosen, source, reply, note, time.perf_counter() - started, calls, usage)


def _overrulable(said: Intent, previous_failed: bool) -> tuple[Intent, ...]:
    """What the rules may put in place of the model's `said` in hybrid routing: a question or a modification for
    UNKNOWN; a modification for EXECUTE_QUERY after a failed turn (the model saw no query); nothing otherwise."""
    if said is Intent.UNKNOWN:
        return (Intent.EXECUTE_QUERY, Intent.REQUEST_MODIFICATION)
    if said is Intent.EXECUTE_QUERY and previous_failed:
        return (Intent.REQUEST_MODIFICATION,)
    return ()


def _decision(
    intent: Intent, source: RouteSource, reply: str, note: str, elapsed: float, calls: int, usage: Usage | None
) -> RouteDecision:
    return RouteDecision(
        intent,
        source,
        reply.strip()[:200],
        note,
        elapsed,
        calls,
        usage.prompt_tokens if usage else 0,
        usage.completion_tokens if usage else 0,
    )
