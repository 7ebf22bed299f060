"""Okapi BM25 over short documents (the schema elements' texts): a lexical ranker.

The curriculum questions are Indonesian and all-MiniLM-L6-v2 was trained on English, so a
word-overlap score against the (Indonesian) descriptions complements the embeddings.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

K1 = 1.2
B = 0.75
_WORD = re.compile(r"[a-z0-9]+")


def terms(text: str) -> list[str]:
    """Lower-cased, accent-free alphanumeric words, identifiers split at `_`, `.` and camelCase."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    plain = "".join(c for c in unicodedata.normalize("NFD", spaced.lower()) if unicodedata.category(c) != "Mn")
    return _WORD.findall(plain.replace("_", " "))


class BM25:
    """Scores of one query against a fixed list of documents."""

    def __init__(self, documents: list[str], k1: float = K1, b: float = B) -> None:
        self.docs = [Counter(terms(d)) for d in documents]
        self.lengths = [sum(c.values()) for c in self.docs]
        self.avg_length = (sum(self.lengths) / len(self.lengths)) if self.docs else 0.0
        self.k1, self.b = k1, b
        frequency = Counter(t for doc in self.docs for t in doc)
        n = len(self.docs)
        self.idf = {t: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}

    def scores(self, query: str) -> list[float]:
        """One score per document (0 where no query term occurs)."""
        query_terms = set(terms(query))
        out = []
        for doc, length in zip(self.docs, self.lengths):
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * length / self.avg_length) if self.avg_length else self.k1
            for term in query_terms:
                tf = doc.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            out.append(score)
        return out
