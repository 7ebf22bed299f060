#!/usr/bin/env python3
"""Write data/movies/dev/questions.csv: screened movies pairs the movies grid never samples.

The movies grid (params/movies.yaml) reports a seeded, stratified sample of the pairs the gold
screen keeps. The development split is drawn from the kept pairs outside that sample, leaving
out any pair whose gold query equals a sampled one or whose question nearly equals a sampled
question (token Jaccard >= 0.8), then drawn stratified by `type` with its own seed. The
grid's sampler is not touched, so its sample stays exactly as published.

    python tools/make_movies_dev.py [N]   # default 48 pairs

The file has the ground truth's columns plus `source_id`, the pair's test-split id.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2c_lib.datasets import DEV_QUESTIONS, load_dataset  # noqa: E402
from t2c_lib.graph import open_store  # noqa: E402
from t2c_lib.study.params import load_params  # noqa: E402
from t2c_lib.study.screen import sample_items  # noqa: E402
from t2c_lib.study.steps import screened_gold  # noqa: E402

GRID_PARAMS = ROOT / "params" / "movies.yaml"
DEV_SEED = 38  # issue 38: the development split's own draw, apart from the grid's sample_seed
NEAR = 0.8


def tokens(text: str) -> set[str]:
    """Lower-cased word tokens of a question."""
    return set(re.findall(r"\w+", text.lower()))


def jaccard(a: str, b: str) -> float:
    """Token Jaccard similarity of two questions."""
    x, y = tokens(a), tokens(b)
    return len(x & y) / len(x | y) if x | y else 1.0


def grid_sample_and_kept():
    """The movies grid's sample and every pair the screen keeps, as the grid computes them."""
    params = load_params(GRID_PARAMS)
    dataset = load_dataset(params.dataset)
    store = open_store(params.store, dataset)
    try:
        screen = screened_gold(dataset, store, params.query_timeout_s)
    finally:
        store.close()
    limit = None if params.limit == "all" else int(params.limit)
    sample = sample_items(screen.kept, limit, dataset.strata_columns[0], params.sample_seed)
    return dataset, sample, screen.kept


def main(n: int = 48) -> None:
    dataset, sample, kept = grid_sample_and_kept()
    sampled_ids = {q.id for q in sample}
    sampled_cypher = {q.cypher for q in sample}
    candidates = [
        q
        for q in kept
        if q.id not in sampled_ids
        and q.cypher not in sampled_cypher
        and all(jaccard(q.question, s.question) < NEAR for s in sample)
    ]
    stratum = dataset.strata_columns[0]
    dev = sample_items(candidates, n, stratum, DEV_SEED)
    spec = dataset.ground_truth_spec
    path = dataset.path / DEV_QUESTIONS
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([spec.question, spec.cypher, *spec.strata, "source_id"])
        for q in dev:
            writer.writerow([q.question, q.cypher, *(q.strata[c] for c in spec.strata), q.id])
    print(f"{path}: {len(dev)} pairs from {len(candidates)} candidates ({len(kept)} kept, {len(sample)} sampled)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 48)
