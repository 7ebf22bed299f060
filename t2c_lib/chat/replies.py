"""The replies that need no query: a short acknowledgement, and error responses in the design's shape.

An error response has three parts: a message for the user, technical details for whoever
debugs it, and suggestions (questions the graph can answer, from the dataset's examples).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

ACKNOWLEDGEMENTS = {
    "id": "Sama-sama! Silakan ajukan pertanyaan lain tentang graf ini.",
    "en": "You're welcome! Ask another question about this graph any time.",
}
UNCLEAR = {
    "id": "Maaf, saya tidak memahami pesan itu sebagai pertanyaan tentang graf ini.",
    "en": "Sorry, I could not read that message as a question about this graph.",
}
FAILED = {
    "id": "Maaf, saya tidak berhasil menyusun kueri yang valid untuk pertanyaan itu.",
    "en": "Sorry, I could not write a valid query for that question.",
}
SUGGESTIONS_SHOWN = 3


@dataclass(frozen=True)
class ErrorResponse:
    """What the user reads, what went wrong technically, and what they could ask instead."""

    user_message: str
    technical_details: str
    suggestions: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_message": self.user_message,
            "technical_details": self.technical_details,
            "suggestions": list(self.suggestions),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ErrorResponse:
        return cls(
            str(data.get("user_message", "")),
            str(data.get("technical_details", "")),
            tuple(str(s) for s in data.get("suggestions") or ()),
        )

    def text(self, language: str) -> str:
        """The response as chat text: the message, then the suggestions."""
        if not self.suggestions:
            return self.user_message
        heading = "Contoh pertanyaan yang bisa dijawab:" if language == "id" else "Questions this graph can answer:"
        return self.user_message + "\n" + heading + "\n" + "\n".join(f"  - {s}" for s in self.suggestions)


def acknowledgement(language: str) -> str:
    """The short reply to thanks or agreement."""
    return ACKNOWLEDGEMENTS.get(language, ACKNOWLEDGEMENTS["en"])


def unclear(language: str, suggestions: Sequence[str], details: str) -> ErrorResponse:
    """The response to a message routed UNKNOWN."""
    return ErrorResponse(UNCLEAR.get(language, UNCLEAR["en"]), details, tuple(suggestions[:SUGGESTIONS_SHOWN]))


def failed(language: str, suggestions: Sequence[str], details: str) -> ErrorResponse:
    """The response when no query passed the validator chain."""
    return ErrorResponse(FAILED.get(language, FAILED["en"]), details, tuple(suggestions[:SUGGESTIONS_SHOWN]))
