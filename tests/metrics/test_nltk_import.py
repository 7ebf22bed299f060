"""The text metrics load NLTK without SciPy, give NLTK's own numbers, and leave SciPy importable."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# In a fresh interpreter: score with both presets, report which SciPy modules got loaded, then
# import SciPy's statistics (the analysis needs them after the metrics ran).
CODE = """
import json, sys
from t2c_lib.metrics import kg_axel, text
gold, gen = "MATCH (m:MK) RETURN m.sks", "MATCH (m:MK) WHERE m.nama = 'x' RETURN m.sks"
scores = [text.bleu(gold, gen), text.rouge_l_f1(gold, gen), kg_axel.bleu(gold, gen), kg_axel.rouge_l_f1(gold, gen)]
loaded = sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy."))
from scipy.stats import binomtest
print(json.dumps({"scores": scores, "scipy": loaded, "binomtest": binomtest(3, 10).pvalue}))
"""


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_metrics_load_nltk_without_scipy_and_scipy_still_imports() -> None:
    out = json.loads(subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True).stdout)
    assert out["scipy"] == []
    assert out["binomtest"] > 0.3
    # the same numbers as NLTK and rouge-score loaded the ordinary way, SciPy and all, in this process
    import scipy.stats  # noqa: F401  (loaded first, so nothing is hidden here)

    from t2c_lib.metrics import kg_axel, text

    gold, gen = "MATCH (m:MK) RETURN m.sks", "MATCH (m:MK) WHERE m.nama = 'x' RETURN m.sks"
    here = [text.bleu(gold, gen), text.rouge_l_f1(gold, gen), kg_axel.bleu(gold, gen), kg_axel.rouge_l_f1(gold, gen)]
    assert out["scores"] == here
    assert 0.0 < min(here) < max(here) < 1.0


@pytest.mark.slow  # runs a subprocess: `make test` runs it, `make test-fast` leaves it out
def test_load_nltk_hides_nothing_already_loaded_and_restores_sys_modules() -> None:
    code = (
        "import sys, scipy.special; from t2c_lib.metrics.nltk_import import load_nltk; load_nltk(); "
        "print([n for n, m in sys.modules.items() if m is None and n.startswith('scipy')], "
        "'scipy.special' in sys.modules, 'nltk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[] True True"
