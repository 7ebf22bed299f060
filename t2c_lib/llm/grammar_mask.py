"""Hold llama.cpp generation to a GBNF grammar, checking the likeliest tokens first.

llama-cpp-python's own grammar sampler checks every token of the vocabulary at every
step; Gemma 3's vocabulary has 262,144 tokens, so a constrained reply ran at a few
tokens per second. This logits processor asks llama.cpp's grammar engine about the
`shortlist` highest-scoring tokens only (and every token tied with the last of them),
and about the whole vocabulary only when none of those is allowed. With greedy decoding
(temperature 0) the chosen token is exactly the one full-vocabulary masking would choose:
the best allowed token is in the shortlist whenever any shortlisted token is allowed.
At a temperature above 0 tokens outside the shortlist are not sampled (like a top-k of
`shortlist` among the allowed tokens).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

SHORTLIST = 64


class GrammarError(ValueError):
    """llama.cpp could not parse the grammar text."""


class GrammarMask:
    """A logits processor for one generation: tokens the grammar forbids get -inf.

    Tokens generated so far are read from `input_ids` (after the `n_prompt` prompt tokens)
    and fed to the grammar state before each step. Call `close()` when generation ends.
    """

    def __init__(self, llama: Any, grammar: str, n_prompt: int, shortlist: int = SHORTLIST) -> None:
        import llama_cpp.llama_cpp as lc

        self._lc = lc
        self._sampler = lc.llama_sampler_init_grammar(llama._model.vocab, grammar.encode("utf-8"), b"root")
        if not self._sampler:
            raise GrammarError("llama.cpp could not parse the GBNF grammar (see the llama.cpp log for the rule)")
        self._fed = n_prompt
        self._shortlist = shortlist

    def close(self) -> None:
        if self._sampler:
            self._lc.llama_sampler_free(self._sampler)
            self._sampler = None

    def _allowed(self, ids: np.ndarray) -> np.ndarray:
        """Which of `ids` the grammar allows next (a boolean array)."""
        lc = self._lc
        data = (lc.llama_token_data * len(ids))()
        view = np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ctypes.c_int32)), shape=(len(ids) * 3,))
        view[0::3] = ids.astype(np.int32)
        view.view(np.float32)[1::3] = 0.0
        array = lc.llama_token_data_array(data, len(ids), -1, False)
        lc.llama_sampler_apply(self._sampler, ctypes.byref(array))
        return ~np.isinf(view.view(np.float32)[1::3])

    def __call__(self, input_ids: Any, scores: np.ndarray) -> np.ndarray:
        for token in input_ids[self._fed :]:
            self._lc.llama_sampler_accept(self._sampler, int(token))
        self._fed = len(input_ids)
        finite = np.isfinite(scores)
        k = min(self._shortlist, int(finite.sum()))
        if k == 0:
            return scores
        kth = np.partition(np.where(finite, scores, -np.inf), -k)[-k]
        candidates = np.flatnonzero(finite & (scores >= kth))
        allowed = self._allowed(candidates)
        if not allowed.any():
            candidates = np.flatnonzero(finite)
            allowed = self._allowed(candidates)
        masked = np.full_like(scores, -np.inf)
        keep = candidates[allowed]
        masked[keep] = scores[keep]
        return masked
