"""Query-text metrics: how close the generated Cypher string is to the gold one.

Settings, fixed here and named in the metric signature (`registry.signature`):

- Tokens are whitespace tokens (`str.split()`), case preserved: Cypher string literals
  and property names are case-sensitive, and punctuation such as `(m:MK)` or `m.sks`
  carries the query's meaning, so it is not stripped.
- BLEU: `nltk.translate.bleu_score.sentence_bleu` with `SmoothingFunction().method1`
  (epsilon 0.1 added to zero n-gram matches). The n-gram order is
  `min(4, len(reference_tokens), len(hypothesis_tokens))` with uniform weights: an order
  longer than one of the two token lists has no n-grams at all, so it is dropped rather
  than smoothed. This keeps a short query scored against itself at exactly 1.0.
- ROUGE-L: `rouge_score.RougeScorer(["rougeL"], tokenizer=<whitespace>)`; the package's
  default tokenizer lowercases and drops every non-alphanumeric character, which would
  erase most of Cypher's structure. Precision is over the generated tokens, recall over
  the gold tokens.
- Jaro-Winkler: `textdistance.JaroWinkler(external=False)` on characters (prefix scale
  0.1, up to 4 characters) of the whitespace-normalised query (tokens joined by one
  space, so line breaks and indentation do not count); `external=False` pins the pure-Python implementation so the
  number does not depend on which optional accelerators happen to be installed.
- Jaccard over token sets: |A & B| / |A | B|.
- Length cap: every metric reads the first `MAX_TEXT_CHARS` (4,000) characters of each
  query (the `max_chars` argument of each metric). ROUGE-L's table and Jaro-Winkler's
  matching grow with the product of the two lengths: `t2c score` on one pair of 120 KB
  queries held 3.5 GB and was still running after 40 s; capped, it ends in 2.4 s at 141 MB,
  and the worst pair measured (a side of 2,000 one-letter tokens) takes under 1 s and 125 MB
  more. The shipped gold queries are at most 452 characters and a reply of 256 tokens (the
  default `max_tokens`) about 1,000, so no study number changes; a longer query is scored on
  its first 4,000 characters.

An empty or missing query (either side) scores 0 on every metric; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

import textdistance

from t2c_lib.metrics.nltk_import import load_nltk

MAX_NGRAM = 4
MAX_TEXT_CHARS = 4_000
"""Characters of each query the text metrics read (see the module notes); the rest is not scored."""
BLEU_SETTING = "nltk-sentence-method1-ws"
ROUGE_SETTING = "rougeL-ws"
JARO_WINKLER_SETTING = "textdistance-char"


class RougeL(NamedTuple):
    """ROUGE-L precision, recall and F1 of one generated query against its gold query."""

    precision: float
    recall: float
    f1: float


def capped(query: str | None, max_chars: int = MAX_TEXT_CHARS) -> str | None:
    """The query's first `max_chars` characters (None and short queries unchanged): bounds every metric's time and memory."""
    return query[:max_chars] if query is not None and len(query) > max_chars else query


def tokenize(query: str | None) -> list[str]:
    """Whitespace tokens of a query; no tokens for None or blank text."""
    return query.split() if query else []


class WhitespaceTokenizer:
    """rouge-score tokenizer that keeps Cypher punctuation and case (see module notes).

    rouge-score only calls `tokenize`; not subclassing its `Tokenizer` keeps NLTK (which
    rouge_score.tokenizers imports, about 2 s) out of the import of this module.
    """

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text)


@cache
def _rouge_scorer() -> Any:
    """rouge-score's scorer, built on first use: importing NLTK costs time a notebook that only runs inference need not pay."""
    load_nltk()  # rouge_score imports NLTK: load it without SciPy first
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=WhitespaceTokenizer())


_JARO_WINKLER = textdistance.JaroWinkler(external=False)


def bleu(
    gold: str | None,
    generated: str | None,
    smoothing: str | Callable[..., Any] = "method1",
    max_chars: int = MAX_TEXT_CHARS,
) -> float:
    """Sentence BLEU of the generated query against the gold query (orders capped by length).

    `smoothing`: a method name of NLTK's `SmoothingFunction` or the function itself;
    `max_chars`: the characters of each query read.
    """
    load_nltk()
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    if isinstance(smoothing, str):
        smoothing = getattr(SmoothingFunction(), smoothing)
    ref, hyp = tokenize(capped(gold, max_chars)), tokenize(capped(generated, max_chars))
    if not ref or not hyp:
        return 0.0
    n = min(MAX_NGRAM, len(ref), len(hyp))
    weights = tuple([1.0 / n] * n)
    return float(sentence_bleu([ref], hyp, weights=weights, smoothing_function=smoothing))


def rouge_l(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> RougeL:
    """ROUGE-L (longest common token subsequence) precision, recall and F1, of each query's first `max_chars` characters."""
    gold, generated = capped(gold, max_chars), capped(generated, max_chars)
    if not tokenize(gold) or not tokenize(generated):
        return RougeL(0.0, 0.0, 0.0)
    s = _rouge_scorer().score(gold, generated)["rougeL"]
    return RougeL(float(s.precision), float(s.recall), float(s.fmeasure))


def rouge_l_precision(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """ROUGE-L precision: LCS length over the generated query's token count."""
    return rouge_l(gold, generated, max_chars).precision


def rouge_l_recall(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """ROUGE-L recall: LCS length over the gold query's token count."""
    return rouge_l(gold, generated, max_chars).recall


def rouge_l_f1(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """ROUGE-L F1: harmonic mean of precision and recall."""
    return rouge_l(gold, generated, max_chars).f1


def jaro_winkler(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """Character-level Jaro-Winkler similarity of the two query strings (first `max_chars` characters of each)."""
    a, b = " ".join(tokenize(capped(gold, max_chars))), " ".join(tokenize(capped(generated, max_chars)))
    if not a or not b:
        return 0.0
    return float(_JARO_WINKLER.normalized_similarity(a, b))


def jaccard_tokens(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """Jaccard similarity of the two queries' whitespace-token sets (first `max_chars` characters of each)."""
    a, b = set(tokenize(capped(gold, max_chars))), set(tokenize(capped(generated, max_chars)))
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def jarou(jaro_winkler_score: float, rouge_l_f1_score: float) -> float:
    """JaRou: the mean of Jaro-Winkler and ROUGE-L F1 (the baseline study's text term)."""
    return (jaro_winkler_score + rouge_l_f1_score) / 2.0
