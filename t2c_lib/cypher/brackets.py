"""Brackets over lexer tokens: which closer ends which opener, for the gate, its limits and the dialect rewriter.

One matcher, so what a bracket encloses is decided in one place; its callers differ only in what a closer that does
not close the innermost open bracket means (`Stray`), which matters only for text the database would refuse anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from t2c_lib.cypher.lexer import Kind, Token

BRACKETS = {"(": ")", "[": "]", "{": "}"}
"""Each opening bracket and its closer."""

CLOSERS = frozenset(BRACKETS.values())


class Stray(Enum):
    """What a closer that does not close the innermost open bracket does."""

    SKIP = "skip"  # nothing: the brackets open before it stay open (the read-only gate)
    RESET = "reset"  # ends the matching of every bracket open before it (the dialect rewriter leaves that text alone)
    UNWIND = "unwind"  # closes the nearest open bracket of its kind, dropping those inside it (the loop limits)


def bracket_pairs(tokens: Sequence[Token], stray: Stray) -> tuple[dict[int, int], list[int]]:
    """Each closed opener's token index -> its closer's, and the indexes of the openers left open, innermost last."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.kind is not Kind.PUNCT:
            continue
        if tok.text in BRACKETS:
            stack.append(i)
        elif tok.text in CLOSERS:
            if stack and BRACKETS[tokens[stack[-1]].text] == tok.text:
                pairs[stack.pop()] = i
            elif stray is Stray.RESET:
                stack.clear()
            elif stray is Stray.UNWIND:
                while stack:
                    opener = stack.pop()
                    if BRACKETS[tokens[opener].text] == tok.text:
                        pairs[opener] = i
                        break
    return pairs, stack


__all__ = ["BRACKETS", "CLOSERS", "Stray", "bracket_pairs"]
