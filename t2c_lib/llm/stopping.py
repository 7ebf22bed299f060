"""When a packaged model's reply is over: the rules both local engines (one sequence, lanes) share.

A reply ends at the model's end-of-turn token, at a caller's stop string, at `max_tokens`,
or when `answer_complete` says so: a closed `</cypher>` tag, a line repeated
`REPEAT_LIMIT` times, or a token loop. `ReplyText` turns generated tokens into the text
llama-cpp-python's `create_completion` returns for the same tokens, so the two engines
give the same text for the same tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

REPEAT_LIMIT = 3  # a generated line seen this often means the model is looping
LOOP_WINDOW = 32  # ... as do this many tokens repeating with a period of at most 8

Detokenize = Callable[[list[int]], bytes]


def periodic_tail(tokens: Sequence[int], window: int = LOOP_WINDOW, max_period: int = 8) -> bool:
    """True when the last `window` tokens repeat with a short period ("0000...", "abab...")."""
    if len(tokens) < window:
        return False
    tail = tokens[-window:]
    return any(all(tail[i] == tail[i - p] for i in range(p, window)) for p in range(1, max_period + 1))


def answer_complete(generated: Sequence[int], detokenize: Detokenize) -> bool:
    """A closed `</cypher>` tag, a line repeated `REPEAT_LIMIT` times, or a token loop.

    A model that has answered tends to keep going; one that is lost tends to loop over
    the same line until `max_tokens`. Both waste minutes per question on 2 cores.
    """
    if not generated:
        return False
    if periodic_tail(generated):
        return True
    text = detokenize(list(generated)).decode("utf-8", "ignore")
    if "</cypher>" in text.lower():
        return True
    lines = [line.strip() for line in text.split("\n")[:-1] if line.strip()]
    return bool(lines) and lines.count(lines[-1]) >= REPEAT_LIMIT


def _incomplete_utf8(tail: bytes) -> int:
    """Tokens to hold back for an unfinished multi-byte character in the last 3 bytes (0: none).

    The same reckoning as llama-cpp-python's `create_completion` (byte i of the last three
    counts as 3 - i from the end, also when fewer than three bytes exist), so both engines
    check stop strings after the same tokens.
    """
    missing = 0
    for i, byte in enumerate(tail[-3:]):
        k = 3 - i
        for width, lead in ((2, 0xC0), (3, 0xE0), (4, 0xF0)):
            if width > k and byte & lead == lead:
                missing = width - k
    return missing


@dataclass
class ReplyText:
    """Generated tokens -> reply text, token by token, with llama-cpp-python's completion rules.

    Order per token: end-of-turn ends the reply (not part of it); a token that leaves a
    multi-byte character unfinished skips the stop-string and length checks; the first
    caller stop string found (in the caller's order) cuts the text; `max_tokens` ends it;
    then `answer_complete` on the tokens so far.
    """

    detokenize: Detokenize
    stops: tuple[bytes, ...]
    max_tokens: int
    tokens: list[int] = field(default_factory=list)
    text: bytes | None = None
    _pending_bytes: int = 0

    def push(self, token: int, is_end_of_turn: bool) -> bool:
        """Take the next sampled token; True once the reply is finished (then `.text` is set)."""
        if is_end_of_turn:
            self.text = self.detokenize(self.tokens)
            return True
        self.tokens.append(token)
        so_far = self.detokenize(self.tokens)
        missing = _incomplete_utf8(so_far)
        if missing:
            self._pending_bytes = missing
        if self._pending_bytes > 0:
            self._pending_bytes -= 1
        else:
            found = [s for s in self.stops if s in so_far]
            if found:
                self.text = so_far[: so_far.index(found[0])]
                return True
            if len(self.tokens) >= self.max_tokens:
                self.text = so_far
                return True
        if answer_complete(self.tokens, self.detokenize):
            self.text = so_far
            return True
        return False

    def reply(self) -> str:
        return (self.text or b"").decode("utf-8", errors="ignore")
