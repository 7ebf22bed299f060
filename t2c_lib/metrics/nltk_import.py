"""NLTK loaded without SciPy: the BLEU and ROUGE-L scores need neither SciPy nor its import time.

`import nltk` (and `rouge_score`, which imports it) runs NLTK's package `__init__`, which loads
nearly all of NLTK; three of those modules import SciPy when it is installed
(`nltk.metrics.association` for `fisher_exact`, `nltk.metrics.scores` for `betai`,
`nltk.translate.gale_church` for `norm`) and that import was about 1.6 s of CPU of the 2.3 s
NLTK cost every evaluation notebook (measured on 2026-11-25 on the 2-core development machine).
t2c uses NLTK's sentence BLEU and, through rouge-score, its Porter stemmer; neither touches
SciPy, so their numbers are the same either way (tests/metrics/test_metrics_text.py pins them).

`load_nltk()` imports NLTK with the SciPy modules NLTK asks for hidden (an entry of None in
`sys.modules` makes an import fail at once), so those three modules take the fallbacks NLTK
itself provides for an installation without SciPy; the hiding entries are removed as soon as
NLTK is loaded, so SciPy imports normally afterwards (the paired statistics need it). Modules
already loaded are never hidden. Cost: in this process NLTK's `fisher_exact` association
measure raises NotImplementedError and its `betai`-based significance test is unavailable;
t2c calls neither. A thread importing SciPy while NLTK loads for the first time would see the
hidden entry: t2c loads NLTK from the scoring functions, before any such thread exists.
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType

HIDDEN = ("scipy", "scipy.stats", "scipy.stats.stats", "scipy.sparse")
"""The SciPy modules NLTK's package import would load; each is hidden only while NLTK loads and only if not yet loaded."""

_LOCK = threading.Lock()


def load_nltk() -> ModuleType:
    """`nltk`, imported on first call with SciPy hidden (see the module docstring); later calls return it."""
    loaded = sys.modules.get("nltk")
    if loaded is not None:
        return loaded
    with _LOCK:
        loaded = sys.modules.get("nltk")
        if loaded is not None:
            return loaded
        hidden = [name for name in HIDDEN if name not in sys.modules]
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]  # None: Python's way to block an import
        try:
            import nltk
        finally:
            for name in hidden:
                if name in sys.modules and sys.modules[name] is None:
                    del sys.modules[name]
        return nltk
