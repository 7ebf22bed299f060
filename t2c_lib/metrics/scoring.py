"""Scoring presets: which definitions of the text and output metrics a number was made with.

A preset is one record in a plain registry (like sacrebleu's metric dict); adding a third
is one `register_scoring(ScoringPreset(...))` call. Every preset gives, for one (gold,
generated) pair, the text metrics `TEXT_NAMES` and, from the two results, Pass@1 and
Jaccard output; it also says which KG-valid enters LLMetric. Shipped:

- `t2c`: this package's definitions (`text.py`, result equivalence eq:v1 in
  `equivalence.py`: columns permutable, rows as bags, order only under ORDER BY);
  LLMetric takes KG-valid structural (guard, syntax, schema, properties).
- `kg-axel`: the thesis's definitions (`kg_axel.py`); LLMetric takes KG-valid chain (the
  final attempt passed every validator, execution and non-empty result included), as
  the thesis's run-level numbers do.
- `cypherbench`: CypherBench's execution accuracy as Pass@1 (`cypherbench.py`), so a
  number can sit beside its published ones; text metrics, Jaccard output and KG-valid
  are t2c's (CypherBench defines none of them).

A query that errors scores 0 on Pass@1 and Jaccard output under every preset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import partial
from types import ModuleType

from t2c_lib.graph.base import QueryResult
from t2c_lib.metrics import cypherbench, kg_axel, text
from t2c_lib.metrics.equivalence import EQUIVALENCE_VERSION, ordering, results_equivalent, rows_jaccard
from t2c_lib.registry import Registry

TEXT_NAMES = ("bleu", "rouge_l_p", "rouge_l_r", "rouge_l_f1", "jaro_winkler", "jaccard_tokens", "jarou")
"""The text metrics every preset returns (rouge_l_p / rouge_l_r are 0 where a preset has only F1)."""


class KgValid(str, Enum):
    """Which KG-valid a number means: the structural checks, or the whole validator chain."""

    STRUCTURAL = "kg_valid_structural"  # guard, syntax, schema, properties (CyVer's definition)
    CHAIN = "kg_valid_chain"  # every step: also execution and a non-empty result


TextScorer = Callable[[str | None, str | None], dict[str, float]]
OutputScorer = Callable[..., tuple[float, float]]
"""(gold query, gold result, generated result, generated_query=None) -> (pass_at_1, jaccard_output);
a result is None when its query failed. Only CypherBench's EX reads the generated query's text."""


@dataclass(frozen=True)
class ScoringPreset:
    """One named set of metric definitions, with the settings string its signature records."""

    name: str
    description: str
    text_scores: TextScorer
    output_scores: OutputScorer  # (gold query, gold result, generated result, generated_query) -> (pass_at_1, jaccard)
    llmetric_kg_valid: KgValid
    settings: tuple[str, ...]

    def signature(self) -> str:
        return "|".join((f"scoring:{self.name}", *self.settings))

    def pass_at_1(
        self, gold_query: str, gold: QueryResult | None, generated: QueryResult | None, generated_query: str = ""
    ) -> float:
        """This preset's Pass@1 of one generated result against the gold one (None: that query failed): the one
        Pass@1 of the preset, which every score the study writes is made with (`metrics.question`)."""
        return self.output_scores(gold_query, gold, generated, generated_query)[0]


SCORING_PRESETS: Registry[ScoringPreset] = Registry("scoring preset")
DEFAULT_SCORING = "t2c"


def register_scoring(preset: ScoringPreset) -> ScoringPreset:
    """Add a preset to the registry; a second preset of the same name fails."""
    return SCORING_PRESETS.register(preset.name, preset)


def get_scoring(name: str = DEFAULT_SCORING) -> ScoringPreset:
    """The preset of that name; an unknown name fails listing the known ones."""
    return SCORING_PRESETS.get(name)


def scoring_names() -> tuple[str, ...]:
    return SCORING_PRESETS.names()


# ---------------------------------------------------------------- t2c


def _text_scores(measures: ModuleType, gold: str | None, generated: str | None) -> dict[str, float]:
    """The text scores under one module's definitions (`text`: t2c's, `kg_axel`: the thesis's); JaroU is t2c's."""
    r = measures.rouge_l(gold, generated)
    jw = measures.jaro_winkler(gold, generated)
    return {
        "bleu": measures.bleu(gold, generated),
        "rouge_l_p": r.precision,
        "rouge_l_r": r.recall,
        "rouge_l_f1": r.f1,
        "jaro_winkler": jw,
        "jaccard_tokens": measures.jaccard_tokens(gold, generated),
        "jarou": text.jarou(jw, r.f1),
    }


T2C_TEXT_SETTINGS = (
    f"bleu:{text.BLEU_SETTING}",
    f"rouge:{text.ROUGE_SETTING}",
    f"jw:{text.JARO_WINKLER_SETTING}",
    "llmetric-kg:structural",
)
"""The settings t2c's text metrics and structural KG-valid add to a preset's signature (t2c, cypherbench)."""


_t2c_text: TextScorer = partial(_text_scores, text)


def _t2c_output(
    gold_query: str, gold: QueryResult | None, generated: QueryResult | None, generated_query: str | None = None
) -> tuple[float, float]:
    if gold is None or generated is None:
        return 0.0, 0.0
    same = results_equivalent(gold, generated, ordered=ordering(gold_query) or False)  # eq:v3 tie rules
    return (1.0 if same else 0.0), rows_jaccard(gold, generated)


register_scoring(
    ScoringPreset(
        name="t2c",
        description="published result-equivalence rules (eq:v3: ties under ORDER BY); whitespace tokens, smoothed BLEU",
        text_scores=_t2c_text,
        output_scores=_t2c_output,
        llmetric_kg_valid=KgValid.STRUCTURAL,
        settings=(
            EQUIVALENCE_VERSION,
            *T2C_TEXT_SETTINGS,
        ),
    )
)


# ---------------------------------------------------------------- kg-axel


_kg_axel_text: TextScorer = partial(_text_scores, kg_axel)


def _kg_axel_output(
    gold_query: str, gold: QueryResult | None, generated: QueryResult | None, generated_query: str | None = None
) -> tuple[float, float]:
    j = kg_axel.output_jaccard(gold_query, gold, generated)
    return (1.0 if j == 1.0 else 0.0), j


register_scoring(
    ScoringPreset(
        name="kg-axel",
        description="the thesis's own definitions (kg-axel's metric code): Pass@1 = output Jaccard 1.0",
        text_scores=_kg_axel_text,
        output_scores=_kg_axel_output,
        llmetric_kg_valid=KgValid.CHAIN,
        settings=(
            "out:kg-axel-greedy-rowsets",
            "bleu:nltk-sentence-nosmooth-spaced",
            "rouge:rougeL-stem-spaced",
            "jw:textdistance-upper-spaced",
            "jaccard:upper-stripped",
            "llmetric-kg:chain",
        ),
    )
)


# ---------------------------------------------------------------- cypherbench


def _cypherbench_output(
    gold_query: str, gold: QueryResult | None, generated: QueryResult | None, generated_query: str | None = None
) -> tuple[float, float]:
    p = cypherbench.cypherbench_pass_at_1(gold_query, generated_query, gold, generated)
    j = rows_jaccard(gold, generated) if gold is not None and generated is not None else 0.0
    return p, j


register_scoring(
    ScoringPreset(
        name="cypherbench",
        description="CypherBench's execution accuracy (EX) as Pass@1; t2c's text metrics, Jaccard output and KG-valid",
        text_scores=_t2c_text,
        output_scores=_cypherbench_output,
        llmetric_kg_valid=KgValid.STRUCTURAL,
        settings=(
            cypherbench.CYPHERBENCH_VERSION,
            *T2C_TEXT_SETTINGS,
        ),
    )
)
