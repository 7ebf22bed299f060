"""BERT's uncased WordPiece tokenizer, read from the packaged `vocab.txt` (no extra dependency).

Basic tokenization (clean, lower-case, strip accents, split on whitespace and punctuation,
isolate CJK characters), then greedy longest-match WordPiece with `##` continuations, as
the original BERT tokenizer does.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

CLS, SEP, UNK = "[CLS]", "[SEP]", "[UNK]"
MAX_WORD_CHARS = 100


class WordPiece:
    """Text -> token ids for an uncased BERT vocabulary."""

    def __init__(self, vocab_path: Path) -> None:
        tokens = vocab_path.read_text(encoding="utf-8").split("\n")
        self.vocab = {tok: i for i, tok in enumerate(tokens) if tok}
        for special in (CLS, SEP, UNK):
            if special not in self.vocab:
                raise ValueError(f"{vocab_path}: vocabulary lacks {special}")

    def encode(self, text: str, max_length: int) -> list[int]:
        """`[CLS] pieces [SEP]`, cut to `max_length` ids."""
        pieces = [p for word in basic_tokens(text) for p in self._wordpiece(word)]
        ids = [self.vocab[CLS], *(self.vocab[p] for p in pieces[: max_length - 2]), self.vocab[SEP]]
        return ids

    def _wordpiece(self, word: str) -> list[str]:
        if len(word) > MAX_WORD_CHARS:
            return [UNK]
        out, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return [UNK]
            out.append(piece)
            start = end
        return out


def basic_tokens(text: str) -> list[str]:
    """Cleaned, lower-cased, accent-free words and single punctuation marks."""
    cleaned = []
    for ch in text:
        code = ord(ch)
        if code == 0 or code == 0xFFFD or (_is_control(ch)):
            continue
        if _is_cjk(code):
            cleaned.append(f" {ch} ")
        else:
            cleaned.append(" " if ch.isspace() else ch)
    words = []
    for word in "".join(cleaned).split():
        word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
        current = ""
        for ch in word:
            if _is_punct(ch):
                if current:
                    words.append(current)
                words.append(ch)
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return words


def _is_control(ch: str) -> bool:
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def _is_punct(ch: str) -> bool:
    code = ord(ch)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(code: int) -> bool:
    return any(
        lo <= code <= hi
        for lo, hi in (
            (0x4E00, 0x9FFF),
            (0x3400, 0x4DBF),
            (0x20000, 0x2A6DF),
            (0x2A700, 0x2B73F),
            (0x2B740, 0x2B81F),
            (0x2B820, 0x2CEAF),
            (0xF900, 0xFAFF),
            (0x2F800, 0x2FA1F),
        )
    )
