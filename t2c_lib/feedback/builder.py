"""Turn a failing validator result into feedback the model can act on.

The template of the error type (in the dataset's language) gets the validator's message
plus what helps repair it: the valid labels and relationship patterns, the properties of
the labels the query uses, the closest valid name for each wrong one ("did you mean
`semester`?"), the right direction of a reversed relationship, and the stored values
closest to a filter literal that matched nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from t2c_lib.feedback.dialect_hints import dialect_hints
from t2c_lib.feedback.templates import load_feedback_template, load_phrases
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S
from t2c_lib.records import ErrorType, ValidationResult
from t2c_lib.schema import GraphSchema

MAX_PATTERNS = 30


class FeedbackBuilder:
    """Feedback texts for one schema and language."""

    def __init__(self, schema: GraphSchema, language: str = "id", timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.schema = schema
        self.language = language
        self.timeout_s = timeout_s
        self.phrases = load_phrases(language)

    def build(self, result: ValidationResult, query: str = "", repeated: bool = False) -> str:
        """The feedback for a failing result (raises ValueError for a passing one).

        `repeated`: the query (or the lack of one) already failed in an earlier attempt; say so, which also
        makes the next request differ from the last one (a deterministic model would
        otherwise answer an identical request identically).
        """
        if result.ok or result.error_type is None:
            raise ValueError(f"validator {result.validator!r} passed; there is nothing to feed back")
        details = result.details or {}
        used = self._labels_used(details)
        suggestions = self._suggestions(details)
        values = {
            "message": self._message(result, bool(suggestions)),
            "query": query.strip(),
            "clause": str(details.get("clause", "")),
            "timeout": f"{float(details.get('timeout_s', self.timeout_s)):g}",
            "suggestions": _with_hints(suggestions, self.phrases, result, self.language),
            "labels": self._labels_block(),
            "patterns": self._patterns_block(used),
            "properties": self._properties_block(used),
            "values": self._values_block(details),
        }
        text = load_feedback_template(self.language, result.error_type).safe_substitute(values)
        if repeated:
            text = self.phrases["repeated" if query.strip() else "repeated_empty"] + "\n" + text
        return _tidy(text)

    def _message(self, result: ValidationResult, has_suggestions: bool) -> str:
        """The failure in the template's language: validators write English, so other languages rebuild it.

        What only the database can say (a parser or runtime error) is quoted, labelled as the
        database's own words; everything the validators explain is said in the phrases' language.
        """
        english = result.message.strip().rstrip(".")
        if self.language == "en":
            return english
        details = result.details or {}
        store_words = str(details.get("store_message") or english).strip().rstrip(".")
        kind = result.error_type
        if kind is ErrorType.EMPTY_RESULT:
            rows = int(details.get("rows", 0) or 0)
            return self._p("empty_all_null", rows=rows) if rows else self.phrases["empty_no_rows"]
        if kind is ErrorType.TIMEOUT:
            return self._p("timed_out", timeout=f"{float(details.get('timeout_s', self.timeout_s)):g}")
        if kind is ErrorType.UNSAFE_QUERY:
            clause = str(details.get("clause", "")).strip()
            return self._p("clause_refused", clause=clause) if clause else self._p("store_message", message=store_words)
        if kind in (ErrorType.SCHEMA_ERROR, ErrorType.PROPERTIES_ERROR) and has_suggestions:
            return self.phrases["see_suggestions"]
        if kind is ErrorType.SYNTAX_ERROR and "offset" in details:  # the guard's lexer could not read it
            return self._p("unreadable", offset=int(details["offset"]) + 1)
        return self._p("store_message", message=store_words)

    # -- blocks -----------------------------------------------------------------------
    def _p(self, key: str, **fields: Any) -> str:
        return self.phrases[key].format(**fields)

    def _options(self, names: Iterable[str]) -> str:
        items = [f"`{n}`" for n in names]
        if len(items) <= 1:
            return "".join(items)
        return ", ".join(items[:-1]) + f" {self.phrases['or']} " + items[-1]

    def _labels_used(self, details: dict[str, Any]) -> list[str]:
        names = list(details.get("labels_used") or [])
        for entry in details.get("unknown_properties") or []:
            names.extend(o for o in entry.get("owners", []) if o in self.schema.node_props)
        for hint in details.get("value_hints") or []:
            names.append(hint["label"])
        return [n for n in dict.fromkeys(names) if n in self.schema.node_props]

    def _suggestions(self, details: dict[str, Any]) -> str:
        lines: list[str] = []
        suggestions: dict[str, list[str]] = details.get("suggestions") or {}
        wrong_props = {e["property"]: e for e in details.get("unknown_properties") or []}
        for wrong, options in suggestions.items():
            if wrong in wrong_props:
                continue
            lines.append(
                self._p("did_you_mean", wrong=wrong, options=self._options(options))
                if options
                else self._p("not_found", wrong=wrong)
            )
        for entry in wrong_props.values():
            owner = "|".join(entry.get("owners") or []) or entry.get("variable", "?")
            if entry.get("closest"):
                lines.append(
                    self._p(
                        "property_did_you_mean",
                        owner=owner,
                        wrong=entry["property"],
                        options=self._options(entry["closest"]),
                    )
                )
            elif entry.get("elsewhere"):
                lines.append(
                    self._p(
                        "belongs_to", owner=owner, wrong=entry["property"], options=self._options(entry["elsewhere"])
                    )
                )
            else:
                lines.append(self._p("property_not_found", owner=owner, wrong=entry["property"]))
        for edge in details.get("bad_edges") or []:
            valid = ", ".join(edge.get("valid", [])[:8])
            key = "direction" if edge.get("reversed") else "no_connection"
            lines.append(self._p(key, written=edge["pattern"], valid=valid or "-"))
        if not lines:
            return ""
        return self.phrases["suggestions_heading"] + "\n" + "\n".join(lines)

    def _labels_block(self) -> str:
        return self.phrases["labels_heading"] + " " + ", ".join(self.schema.labels)

    def _patterns_block(self, used: list[str]) -> str:
        patterns = sorted(set(self.schema.patterns))
        if used:
            near = [p for p in patterns if p.source in used or p.target in used]
            patterns = near or patterns
        lines = [f"- {p.render()}" for p in patterns[:MAX_PATTERNS]]
        return self.phrases["patterns_heading"] + "\n" + "\n".join(lines) if lines else ""

    def _properties_block(self, used: list[str]) -> str:
        labels = used or self.schema.labels
        lines = []
        for label in labels:
            props = self.schema.node_props.get(label, {})
            listed = ", ".join(f"{k} ({t.value})" for k, t in sorted(props.items())) or self.phrases["no_properties"]
            lines.append(f"- {label}: {listed}")
        return self.phrases["properties_heading"] + "\n" + "\n".join(lines) if lines else ""

    def _values_block(self, details: dict[str, Any]) -> str:
        lines = []
        for hint in details.get("value_hints") or []:
            fields = dict(label=hint["label"], property=hint["property"], op=hint["op"], value=hint["value"])
            if hint.get("closest"):
                options = ", ".join(f"'{v}'" for v in hint["closest"])
                lines.append(self._p("value_closest", options=options, **fields))
            else:
                lines.append(self._p("value_none", **fields))
        return self.phrases["values_heading"] + "\n" + "\n".join(lines) if lines else ""


def _with_hints(suggestions: str, phrases: dict[str, str], result: ValidationResult, language: str) -> str:
    """The suggestions block with the LadybugDB form of a Neo4j form the store's message reports (`dialect_hints`)."""
    hints = dialect_hints(str((result.details or {}).get("store_message") or result.message), language)
    if not hints:
        return suggestions
    return "\n".join([suggestions or phrases["suggestions_heading"], *hints])


def _tidy(text: str) -> str:
    """Drop trailing spaces and runs of blank lines left by empty blocks."""
    lines = [line.rstrip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def build_feedback(result: ValidationResult, schema: GraphSchema, language: str = "id", query: str = "") -> str:
    """One-call form of `FeedbackBuilder(schema, language).build(result, query)`."""
    return FeedbackBuilder(schema, language).build(result, query)
