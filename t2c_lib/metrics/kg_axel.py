"""The kg-axel metric definitions, reimplemented from their published facts (scoring preset `kg-axel`).

The thesis this study compares against scored queries with kg-axel's code; these are its
rules, written here from the facts (see the `kg-axel` row of the presets table in docs/metrics.md):

- Special characters (`SPECIAL`, one alternation in this order): ( ) : { } -> <- - [ ] , . * / < >.
  *Spaced* form: a space before and after every match, whitespace runs collapsed, trimmed.
  *Stripped* form: every match replaced by a space, collapsed, trimmed.
- Keyword upper-casing: whole-word, case-insensitive matches of `KEYWORDS` are upper-cased.
- BLEU: NLTK `sentence_bleu`, default 4-gram weights, no smoothing, on whitespace tokens
  of the spaced forms (gold is the reference).
- ROUGE-L F1: `rouge_score.RougeScorer(["rougeL"], use_stemmer=True)` (its own tokenizer)
  on the spaced forms.
- Jaro-Winkler: `textdistance`'s Jaro-Winkler on the upper-cased spaced forms.
- Token Jaccard: whitespace-token sets of the upper-cased stripped forms; two empty sets 1.0.
- Output Jaccard (`output_jaccard`): each row becomes the set of its values (numbers as
  floats, strings unchanged, unhashable values as their `str`; a node or relationship
  contributes its property values instead of itself). When the gold query's lower-cased
  text contains `order by`, rows pair by index; otherwise a greedy alignment puts, for each
  row i of the shorter list (gold when equally long), the most similar remaining row of the
  longer list (set Jaccard, first maximum wins) at position i. The score is the Jaccard of
  the sets of (row index, value) pairs; both empty 1.0; a failed query 0.
- Pass@1 = output Jaccard == 1.0 (the `kg-axel` preset's `ScoringPreset.pass_at_1`, in `scoring.py`).

A missing query counts as the empty string. Nothing here raises on odd input. Like the `t2c`
text metrics, each reads the first `max_chars` characters of each query (`text.MAX_TEXT_CHARS`,
4,000: a bound on time and memory that no study query reaches; see `t2c_lib/metrics/text.py`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Hashable, Sequence
from functools import cache
from typing import Any

import textdistance

from t2c_lib.graph.base import GraphNode, GraphRel, QueryResult
from t2c_lib.metrics.nltk_import import load_nltk
from t2c_lib.metrics.text import MAX_TEXT_CHARS, RougeL, capped

SPECIAL = re.compile(r"\(|\)|:|\{|\}|->|<-|-|\[|\]|,|\.|\*|/|<|>")
KEYWORDS = (
    "MATCH",
    "WHERE",
    "RETURN",
    "OPTIONAL",
    "MERGE",
    "DELETE",
    "CREATE",
    "ORDER BY",
    "LIMIT",
    "COUNT",
    "DISTINCT",
    "EXISTS",
    "IN",
    "AND",
    "OR",
    "MIN",
    "MAX",
    "AVG",
    "UNWIND",
    "WITH",
    "SET",
    "REMOVE",
    "FILTER",
    "COLLECT",
    "AS",
    "FOREACH",
    "REDUCE",
    "CASE",
    "toFloat",
    "NOT",
    "NULL",
    "THEN",
    "ELSE",
    "END",
    "TRUE",
    "FALSE",
    "DESC",
    "ASC",
    "IS",
    "WHEN",
    "SIZE",
)
_KEYWORD = re.compile(r"\b(?:" + "|".join(re.escape(k) for k in KEYWORDS) + r")\b", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


@cache
def _rouge_scorer() -> Any:
    """rouge-score's stemming scorer, built on first use (it imports NLTK: `load_nltk` loads it without SciPy)."""
    load_nltk()
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


_JARO_WINKLER = textdistance.JaroWinkler(external=False)


def spaced(query: str | None) -> str:
    """Special characters set off by single spaces."""
    return _SPACES.sub(" ", SPECIAL.sub(lambda m: f" {m.group(0)} ", query or "")).strip()


def stripped(query: str | None) -> str:
    """Special characters replaced by spaces."""
    return _SPACES.sub(" ", SPECIAL.sub(" ", query or "")).strip()


def upper_keywords(text: str) -> str:
    """Cypher keywords (whole words, any case) upper-cased."""
    return _KEYWORD.sub(lambda m: m.group(0).upper(), text)


def bleu(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """NLTK sentence BLEU, 4-gram uniform weights, no smoothing, on spaced-form tokens."""
    load_nltk()
    from nltk.translate.bleu_score import sentence_bleu

    ref, hyp = spaced(capped(gold, max_chars)).split(), spaced(capped(generated, max_chars)).split()
    if not hyp:
        return 0.0
    with warnings.catch_warnings():  # NLTK warns on zero n-gram matches; the unsmoothed value is the point
        warnings.simplefilter("ignore")
        return float(sentence_bleu([ref], hyp))


def rouge_l(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> RougeL:
    """ROUGE-L with rouge-score's default tokenizer and Porter stemming, on spaced forms."""
    s = _rouge_scorer().score(spaced(capped(gold, max_chars)), spaced(capped(generated, max_chars)))["rougeL"]
    return RougeL(float(s.precision), float(s.recall), float(s.fmeasure))


def rouge_l_f1(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """ROUGE-L F1 (the number the thesis reports)."""
    return rouge_l(gold, generated, max_chars).f1


def jaro_winkler(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """Character Jaro-Winkler of the keyword-upper-cased spaced forms."""
    a, b = upper_keywords(spaced(capped(gold, max_chars))), upper_keywords(spaced(capped(generated, max_chars)))
    if not a and not b:
        return 1.0
    return float(_JARO_WINKLER.similarity(a, b))


def jaccard_tokens(gold: str | None, generated: str | None, max_chars: int = MAX_TEXT_CHARS) -> float:
    """Jaccard of the token sets of the keyword-upper-cased stripped forms; both empty 1.0."""
    gold, generated = capped(gold, max_chars), capped(generated, max_chars)
    a, b = set(upper_keywords(stripped(gold)).split()), set(upper_keywords(stripped(generated)).split())
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _value(v: Any) -> Hashable:
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        return v
    try:
        hash(v)
    except TypeError:
        return str(v)
    return v


def row_set(row: Sequence[Any]) -> frozenset:
    """The set of a row's values (a node or relationship stands for its property values)."""
    values: list[Any] = []
    for v in row:
        if isinstance(v, (GraphNode, GraphRel)):
            values.extend(val for key, val in sorted(v.properties.items()) if not key.startswith("_"))
        else:
            values.append(v)
    return frozenset(_value(v) for v in values)


def _set_jaccard(a: frozenset, b: frozenset) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def align(short: list[frozenset], long: list[frozenset]) -> list[frozenset]:
    """The longer list reordered greedily so row i best matches `short[i]` (first maximum wins)."""
    long = list(long)
    for i, row in enumerate(short):
        best, best_score = i, -1.0
        for j in range(i, len(long)):
            score = _set_jaccard(row, long[j])
            if score > best_score:
                best, best_score = j, score
        long[i], long[best] = long[best], long[i]
    return long


def output_jaccard(gold_query: str, gold: QueryResult | None, generated: QueryResult | None) -> float:
    """kg-axel's output Jaccard of two results; 0.0 when either query failed (None)."""
    if gold is None or generated is None:
        return 0.0
    g = [row_set(r) for r in gold.rows]
    p = [row_set(r) for r in generated.rows]
    if "order by" not in (gold_query or "").lower():
        if len(g) <= len(p):
            p = align(g, p)
        else:
            g = align(p, g)
    a = {(i, v) for i, row in enumerate(g) for v in row}
    b = {(i, v) for i, row in enumerate(p) for v in row}
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
