"""Score a table of (gold, predicted) query pairs from anywhere, e.g. another system's output (`t2c score`).

Text metrics need nothing but the two strings. With a store, both queries also run
(read-only, time-limited) for Pass@1 and Jaccard output, and the predicted query goes
through the validator chain for KG-valid. Which definitions apply is the scoring preset.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from t2c_lib.errors import InvalidValue
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S, GraphStore
from t2c_lib.metrics.columns import column_mean
from t2c_lib.metrics.gold import GoldCache
from t2c_lib.metrics.output import kg_valid_chain, kg_valid_structural
from t2c_lib.metrics.scores import run_pair
from t2c_lib.metrics.scoring import DEFAULT_SCORING, get_scoring

TEXT_COLUMNS = ("bleu", "rouge_l_f1", "jaro_winkler", "jaccard_cypher")
STORE_COLUMNS = ("pass_at_1", "jaccard_output", "kg_valid", "kg_valid_structural", "kg_valid_chain")
"""`kg_valid` is the preset's own (t2c: structural; kg-axel: chain); both kinds are written beside it."""


class PairsError(InvalidValue):
    """The pairs file cannot be scored (missing file or column); the message says what to fix."""


@dataclass
class PairsTable:
    """The rows of a pairs file, in order, with its column names."""

    columns: list[str]
    rows: list[dict[str, str]]


def read_pairs(path: Path, gold_column: str, pred_column: str) -> PairsTable:
    """Read a CSV (a UTF-8 byte-order mark is ignored) and check that both query columns exist."""
    if not path.is_file():
        raise PairsError(f"{path}: file not found")
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = list(reader.fieldnames or [])
            rows = [{k: (v if v is not None else "") for k, v in row.items() if k is not None} for row in reader]
    except UnicodeDecodeError as exc:
        raise PairsError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8 CSV") from exc
    except csv.Error as exc:
        raise PairsError(f"{path}: not a readable CSV ({exc})") from exc
    except OSError as exc:
        raise PairsError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    missing = [c for c in (gold_column, pred_column) if c not in columns]
    if missing:
        raise PairsError(
            f"{path}: no column(s) {', '.join(map(repr, missing))}; columns are: {', '.join(columns) or '(none)'}"
            " (choose with --gold-column / --pred-column)"
        )
    clash = [c for c in (*TEXT_COLUMNS, *STORE_COLUMNS) if c in columns]
    if clash:
        raise PairsError(f"{path}: already has score column(s) {', '.join(clash)}; rename them first")
    return PairsTable(columns, rows)


def score_pairs(
    table: PairsTable,
    gold_column: str,
    pred_column: str,
    scoring: str = DEFAULT_SCORING,
    store: GraphStore | None = None,
    gold_cache: GoldCache | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Iterator[dict[str, Any]]:
    """Each input row with its scores added (text only without a store)."""
    preset = get_scoring(scoring)
    chain = context = None
    if store is not None:
        from t2c_lib.validation.chain import build_chain, make_context

        chain, context = build_chain(store), make_context(store, timeout_s)
    for row in table.rows:
        gold, pred = row[gold_column], row[pred_column]
        t = preset.text_scores(gold, pred)
        out: dict[str, Any] = {
            **row,
            "bleu": t["bleu"],
            "rouge_l_f1": t["rouge_l_f1"],
            "jaro_winkler": t["jaro_winkler"],
            "jaccard_cypher": t["jaccard_tokens"],
        }
        if store is not None and chain is not None and context is not None:  # all three or none
            from t2c_lib.validation.chain import run_chain

            pair = run_pair(gold, pred, store, gold_cache, timeout_s)
            p, j = preset.output_scores(gold, pair.gold.result, pair.generated.result, pred)
            checks = run_chain(pred, chain, context) if pred.strip() else []
            kinds = {"kg_valid_structural": kg_valid_structural(checks), "kg_valid_chain": kg_valid_chain(checks)}
            out.update(
                pass_at_1=p,
                jaccard_output=j,
                kg_valid=kinds[preset.llmetric_kg_valid.value],
                **kinds,
                execution_error=pair.error or "",
            )
        yield out


def means(rows: Iterable[dict[str, Any]], columns: Iterable[str]) -> dict[str, float]:
    """The mean of each score column over the rows, as the column spec aggregates it (NaN for no rows)."""
    rows = list(rows)
    return {c: column_mean([float(r[c]) for r in rows], c) for c in columns}
