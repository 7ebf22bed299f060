"""Query-text metrics pinned to hand-computed values (tests/fixtures/metrics/text.yaml)."""

from __future__ import annotations

import inspect

import pytest
import yaml
from nltk.translate.bleu_score import SmoothingFunction

from t2c_lib.metrics import registry, text
from tests.helpers import METRIC_FIXTURES as FIXTURES
from tests.helpers import ROOT

TEXT_CASES = yaml.safe_load((FIXTURES / "text.yaml").read_text(encoding="utf-8"))
METRIC_NAMES = ("bleu", "rouge_l_p", "rouge_l_r", "rouge_l_f1", "jaro_winkler", "jaccard_tokens")


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c["name"] for c in TEXT_CASES])
def test_text_metric_matches_hand_computed_value(case):
    for name in METRIC_NAMES:
        expected = case[name]
        if expected is None:
            continue
        got = registry.TEXT_METRICS[name](case["gold"], case["generated"])
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15), name


def test_every_text_metric_is_pinned_somewhere():
    for name in METRIC_NAMES:
        assert sum(1 for c in TEXT_CASES if c[name] not in (None, 0.0, 1.0)) >= 2, name


def test_bleu_smoothing_is_explicit_in_the_signature():
    default = inspect.signature(text.bleu).parameters["smoothing"].default
    assert default == "method1"
    gold, gen = "MATCH (n) RETURN n", "MATCH (n) RETURN n.nama"
    assert text.bleu(gold, gen) == text.bleu(gold, gen, smoothing=SmoothingFunction().method1)
    assert "method1" in registry.signature()


def test_bleu_other_smoothing_changes_the_score():
    gold, gen = "MATCH (n) RETURN n", "MATCH (n) RETURN n.nama"
    with pytest.warns(UserWarning, match="4-gram"):  # nltk's own warning for unsmoothed zero counts
        method0 = text.bleu(gold, gen, smoothing=SmoothingFunction().method0)
    assert method0 == pytest.approx(0.0, abs=1e-12)
    assert method0 != pytest.approx(text.bleu(gold, gen))


@pytest.mark.parametrize("n_tokens", [1, 2, 3, 4, 5, 12])
def test_bleu_of_a_query_against_itself_is_exactly_one(n_tokens):
    q = " ".join(f"t{i}" for i in range(n_tokens))
    assert text.bleu(q, q) == 1.0


def test_rouge_keeps_cypher_punctuation():
    # the default rouge-score tokenizer would reduce both to "m sks" / "m nama" tokens
    r = text.rouge_l("RETURN m.sks", "RETURN m.nama")
    assert (r.precision, r.recall, r.f1) == (0.5, 0.5, 0.5)


def test_jaro_winkler_uses_the_pure_python_implementation():
    assert text._JARO_WINKLER.external is False


def test_jarou_is_the_mean_of_jaro_winkler_and_rouge_l_f1():
    assert text.jarou(0.9, 0.5) == pytest.approx(0.7)


# --- the length cap (issue 36: two 120 KB queries took 4 GB in 15 s) ----------------------------

KG_AXEL_TEXT = ("bleu", "rouge_l", "rouge_l_f1", "jaro_winkler", "jaccard_tokens")


def test_every_text_metric_names_its_length_cap_in_its_signature():
    from t2c_lib.metrics import kg_axel

    functions = [*registry.TEXT_METRICS.values(), text.rouge_l, *(getattr(kg_axel, n) for n in KG_AXEL_TEXT)]
    for function in functions:
        assert inspect.signature(function).parameters["max_chars"].default == text.MAX_TEXT_CHARS, function


@pytest.mark.parametrize("scoring", ["t2c", "kg-axel"])
def test_text_past_the_cap_is_not_scored(scoring):
    from t2c_lib.metrics.scoring import get_scoring

    start = " ".join(f"MATCH (n{i}:MK) RETURN n{i}.sks" for i in range(200))[: text.MAX_TEXT_CHARS]
    gold, generated = start + " WHERE a = 1" * 100, start + " ORDER BY b" * 100
    scores = get_scoring(scoring).text_scores(gold, generated)
    assert scores == get_scoring(scoring).text_scores(start, start)
    assert scores["rouge_l_f1"] == 1.0 and scores["jaccard_tokens"] == 1.0
    assert text.rouge_l_f1(gold, generated, max_chars=len(gold)) < 1.0  # a larger cap reads the tails


_BOUNDED = r"""
import resource, sys
from t2c_lib.metrics.scoring import get_scoring
scorers = [get_scoring(name) for name in ("t2c", "kg-axel")]
for scorer in scorers:
    scorer.text_scores("MATCH (n) RETURN n", "MATCH (m) RETURN m")  # every import done before the limit
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + (512 << 20), resource.RLIM_INFINITY))
unit = "MATCH (n:MK) WHERE n.nama = 'Basis Data' RETURN n.sks a b c d e f g h "
gold = (unit * 2000)[:120_000]
for generated in (gold.replace("Basis", "Sistem", 50), "a " * 60_000, gold[::-1]):
    for scorer in scorers:
        scorer.text_scores(gold, generated)
print("ok")
"""


@pytest.mark.slow  # seconds of scoring two huge queries: `make test` runs it
def test_two_120_kb_queries_are_scored_within_half_a_gib():
    """A real process allowed 512 MiB more than it holds after its imports (before the cap: MemoryError in seconds)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _BOUNDED], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-500:]
