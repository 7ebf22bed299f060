"""Numbers and values written the way a language writes them (Indonesian `1.234,5`, English `1,234.5`).

Every value in an answer's text comes from the result through `format_value`; the model's
own text contributes no number.
"""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from t2c_lib.graph.base import to_jsonable

DECIMALS = 2
"""Floats are rounded half up to this many decimals; trailing zeros are dropped."""

SEPARATORS = {"id": (".", ","), "en": (",", ".")}
"""Per language: (thousands separator, decimal separator)."""

WORDS = {"id": {True: "ya", False: "tidak", None: "-"}, "en": {True: "yes", False: "no", None: "-"}}


def format_number(value: int | float, language: str) -> str:
    """`1234.5` -> `1.234,5` (id) or `1,234.5` (en); integers grouped, floats rounded to DECIMALS."""
    thousands, decimal = SEPARATORS.get(language, SEPARATORS["en"])
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, float) and not float(value).is_integer():
        rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-DECIMALS), rounding=ROUND_HALF_UP)
        text = f"{rounded:,.{DECIMALS}f}".rstrip("0").rstrip(".")
    else:
        text = f"{int(value):,}"
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


def format_value(value: Any, language: str) -> str:
    """One result value as answer text: numbers per language, booleans as words, lists joined, graph values as JSON."""
    words = WORDS.get(language, WORDS["en"])
    if value is None or isinstance(value, bool):
        return words[value]
    if isinstance(value, (int, float)):
        return format_number(value, language)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v, language) for v in value)
    return json.dumps(to_jsonable(value), ensure_ascii=False)
