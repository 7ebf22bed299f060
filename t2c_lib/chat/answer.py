"""Grounded answers: the model writes a template, t2c fills its placeholders from the result.

A placeholder names a result column (`{m.sks}`: its value, or its values when there are
several rows), an aggregate of a numeric column (`{sum:total_sks}`, `avg`, `min`, `max`) or
the row count (`{rows}`). The model's reply is hostile input: it is cut to one short line,
read with one regular expression, and every placeholder is looked up in a table of names this
module built from the result: no `str.format`, no attribute or index access, no evaluation.
A template with a number or a stray brace in its own text, an unknown placeholder, or none
at all is refused, and a fixed template for the result's shape is filled instead. So every
number in an answer comes from the result, formatted for the language (`numbers.py`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from t2c_lib.chat.numbers import format_value
from t2c_lib.chat.prompts import load_examples, load_template
from t2c_lib.graph.base import QueryResult
from t2c_lib.llm.base import LLMError, Message

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.llm.base import ChatModel

MAX_TEMPLATE_CHARS = 300
"""The part of the model's reply read as a template (its first non-empty line, cut here)."""

MAX_LISTED = 10
"""Values a multi-row `{column}` lists before "and N more"."""

PLACEHOLDER = re.compile(r"\{([^{}\n]{1,80})\}")
AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "sum": lambda xs: sum(xs),
    "avg": lambda xs: sum(xs) / len(xs),
    "min": min,
    "max": max,
}
ROWS = "rows"
MORE = {"id": "dan {n} lainnya", "en": "and {n} more"}
FALLBACK = {
    "id": {
        "empty": "Tidak ada hasil untuk pertanyaan ini.",
        "value": "Jawabannya: {%s}.",
        "row": "Hasilnya: %s.",
        "rows": "Ditemukan {rows} baris; lihat tabel di bawah.",
        "pair": "%s {%s}",
    },
    "en": {
        "empty": "The query returned no rows.",
        "value": "The answer is {%s}.",
        "row": "The result: %s.",
        "rows": "Found {rows} rows; see the table below.",
        "pair": "%s {%s}",
    },
}


@dataclass(frozen=True)
class FilledAnswer:
    """The answer text, the template it came from, whether the model's template was used, and why not."""

    text: str
    template: str
    from_model: bool
    problems: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()


@dataclass
class AnswerWriter:
    """Asks the model for a template (`model` None: the fixed template) and fills it from a result."""

    model: ChatModel | None
    language: str
    max_tokens: int = 96
    llm_calls: int = field(default=0, init=False)
    prompt_tokens: int = field(default=0, init=False)
    completion_tokens: int = field(default=0, init=False)
    elapsed_s: float = field(default=0.0, init=False)

    def write(self, question: str, result: QueryResult) -> FilledAnswer:
        """A grounded answer to `question` from `result` (the model's template if it is usable)."""
        started = time.perf_counter()
        self.llm_calls = self.prompt_tokens = self.completion_tokens = 0
        reply, failure = "", ""
        if self.model is not None and result.rows:
            self.llm_calls = 1
            try:
                completion = self.model.complete(
                    answer_messages(question, result, self.language),
                    temperature=0.0,
                    max_tokens=self.max_tokens,
                    stop=["\n"],
                )
            except LLMError as exc:  # the answer falls back to the fixed template; the turn still succeeds
                failure = f"model call failed: {exc}"
            else:
                reply = completion.text
                self.prompt_tokens, self.completion_tokens = (
                    completion.usage.prompt_tokens,
                    completion.usage.completion_tokens,
                )
        filled = fill_answer(reply, result, self.language)
        if failure:
            filled = FilledAnswer(filled.text, filled.template, False, (failure,), filled.placeholders)
        self.elapsed_s = time.perf_counter() - started
        return filled


def answer_messages(question: str, result: QueryResult, language: str) -> list[Message]:
    """Instructions, the few-shot examples as pairs, then the question with the placeholders this result offers (no values)."""
    messages = [Message("system", load_template(language, "answer").template.strip())]
    for example in load_examples(language, "answer_examples"):
        sample = QueryResult([str(c) for c in example["columns"]], [list(example["row"])])
        messages += [
            Message("user", _answer_user(str(example["question"]), sample, language)),
            Message("assistant", str(example["template"])),
        ]
    return [*messages, Message("user", _answer_user(question, result, language))]


def _answer_user(question: str, result: QueryResult, language: str) -> str:
    return (
        load_template(language, "answer_user")
        .substitute(
            question=" ".join(question.split()),
            columns=", ".join(result.columns),
            placeholders=" ".join("{" + n + "}" for n in placeholder_names(result)),
        )
        .strip()
    )


def placeholder_names(result: QueryResult) -> list[str]:
    """Every placeholder `result` can fill: `rows`, each column, and aggregates of its numeric columns."""
    names = [ROWS, *result.columns]
    for index, column in enumerate(result.columns):
        if _numbers(result, index) is not None:
            names += [f"{agg}:{column}" for agg in AGGREGATES]
    return names


def placeholder_values(result: QueryResult, language: str) -> dict[str, str]:
    """The table placeholders are looked up in: name -> text, every value formatted for `language`."""
    values = {ROWS: format_value(len(result.rows), language)}
    for index, column in enumerate(result.columns):
        cells = [row[index] for row in result.rows]
        values[column] = _listed(cells, language)
        numbers = _numbers(result, index)
        if numbers:
            for agg, fn in AGGREGATES.items():
                values[f"{agg}:{column}"] = format_value(fn(numbers), language)
    return values


def fill_answer(reply: str, result: QueryResult, language: str) -> FilledAnswer:
    """Fill the model's template from `result`; on any problem, fill the fixed template for the result's shape."""
    values = placeholder_values(result, language)
    template = clean_template(reply)
    problems = check_template(template, values) if template else ("no template in the reply",)
    if not result.rows:
        problems = problems or ("the result is empty",)
    from_model = not problems
    if not from_model:
        template = fallback_template(result, language)
    text, used = substitute(template, values)
    return FilledAnswer(text, template, from_model, tuple(problems), tuple(used))


def clean_template(reply: str) -> str:
    """The first non-empty line of the reply, without a label, quotes or markup around it, cut to MAX_TEMPLATE_CHARS."""
    for line in (reply or "").splitlines():
        line = re.sub(r"[\x00-\x1f\x7f]", "", line).strip()
        line = re.sub(r"^(template( jawaban)?|answer( template)?|jawaban)\s*:\s*", "", line, flags=re.I)
        line = line.strip().strip("`\"'*").strip()
        if line:
            return line[:MAX_TEMPLATE_CHARS]
    return ""


def check_template(template: str, values: dict[str, str]) -> list[str]:
    """Why a template cannot be used: unknown placeholders, no placeholder, a number or brace in its own text."""
    problems = []
    found = [_key(m.group(1), values) for m in PLACEHOLDER.finditer(template)]
    unknown = [m.group(1) for m, key in zip(PLACEHOLDER.finditer(template), found) if key is None]
    if unknown:
        problems.append("unknown placeholder(s): " + ", ".join(repr(u) for u in unknown[:5]))
    if not found:
        problems.append("no placeholder")
    literal = PLACEHOLDER.sub("", template)
    if re.search(r"\d", literal):
        problems.append("a number in the template's own text")
    if "{" in literal or "}" in literal:
        problems.append("a brace outside a placeholder")
    return problems


def substitute(template: str, values: dict[str, str]) -> tuple[str, list[str]]:
    """Replace each known placeholder by its value in one pass (a value is never read as a template)."""
    used: list[str] = []

    def replace(match: re.Match[str]) -> str:
        key = _key(match.group(1), values)
        if key is None:
            return match.group(0)
        used.append(key)
        return values[key]

    return PLACEHOLDER.sub(replace, template), used


def fallback_template(result: QueryResult, language: str) -> str:
    """The fixed template for a result's shape: empty, one value, one row, or many rows."""
    words = FALLBACK.get(language, FALLBACK["en"])
    if not result.rows:
        return words["empty"]
    if len(result.rows) == 1 and len(result.columns) == 1:
        return words["value"] % _escape(result.columns[0])
    if len(result.rows) == 1:
        return words["row"] % ", ".join(words["pair"] % (_escape(c), _escape(c)) for c in result.columns)
    return words["rows"]


def _key(name: str, values: dict[str, str]) -> str | None:
    """The table key a placeholder names (exact, else ignoring case and spaces), or None."""
    name = name.strip()
    if name in values:
        return name
    folded = {re.sub(r"\s+", "", k).lower(): k for k in values}
    return folded.get(re.sub(r"\s+", "", name).lower())


def _escape(column: str) -> str:
    """A column name as template text (braces cannot occur in it as a placeholder's delimiter)."""
    return column.replace("{", "(").replace("}", ")")


def _numbers(result: QueryResult, index: int) -> list[float] | None:
    """The column's numbers when every non-null cell is a number (not a boolean) and one is there, else None."""
    cells = [row[index] for row in result.rows if row[index] is not None]
    if not cells or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in cells):
        return None
    return cells


def _listed(cells: list[Any], language: str) -> str:
    shown = [format_value(c, language) for c in cells[:MAX_LISTED]]
    text = ", ".join(shown)
    if len(cells) > MAX_LISTED:
        text += " " + MORE.get(language, MORE["en"]).format(n=format_value(len(cells) - MAX_LISTED, language))
    return text
