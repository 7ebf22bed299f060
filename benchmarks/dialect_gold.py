"""How many gold pairs the embedded store's Neo4j-dialect normalisation keeps, per dataset.

For each dataset the gold screen of a run (`t2c_lib.study`: store errors, empty answers,
order-dependent answers, the dataset's exclusions) is run twice on LadybugDB: once with
`cypher/dialect.py`'s rewrites switched off, once as t2c runs it. Reported: pairs kept
before and after, what the dropped ones fail on, and the pairs only the rewrites keep
(with the rewrites applied to each). With `--neo4j` those newly kept pairs are also run
on a Neo4j server holding the same dataset (`make neo4j`; `NEO4J_URI` etc.) and counted
equal or different to LadybugDB's answers under the screen's own comparison.

Usage: python benchmarks/dialect_gold.py [--dataset kurikulum --dataset movies] [--neo4j] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import tempfile
from collections import Counter
from collections.abc import Iterator
from typing import Any

import t2c_lib.cypher.gate as gate_module
from t2c_lib.cypher.dialect import Normalised, normalise
from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.study.screen import GoldScreen, OrderProbe, screen_gold


@contextlib.contextmanager
def rewrites_switched_off() -> Iterator[None]:
    """While active, the embedded store plans every query exactly as written."""
    original = gate_module.normalise
    gate_module.normalise = lambda query: Normalised(query)
    try:
        yield
    finally:
        gate_module.normalise = original


def screen(dataset_name: str, root: str) -> GoldScreen:
    """The run's gold screen on a fresh embedded store (same steps as `t2c_lib.study`)."""
    dataset = load_dataset(dataset_name)
    store = LadybugStore(dataset, root=root)
    probe = OrderProbe.open(dataset, forward=store)
    try:
        return screen_gold(dataset, store, order_probe=probe)
    finally:
        probe.close()
        store.close()


def neo4j_agreement(dataset_name: str, ids: set[str]) -> dict[str, Any]:
    """Run the pairs `ids` on LadybugDB and on Neo4j; count equal and different answers."""
    from t2c_lib.graph.neo4j import Neo4jStore

    dataset = load_dataset(dataset_name)
    reference = Neo4jStore(dataset)
    if not reference.is_loaded():
        reference.load(dataset)
    with tempfile.TemporaryDirectory() as root:
        store = LadybugStore(dataset, root=root)
        subset = dataclasses.replace(dataset, questions=[q for q in dataset.questions if q.id in ids])
        try:
            result = screen_gold(subset, store, also=[reference], use_exclusions=False)
        finally:
            store.close()
            reference.close()
    return {
        "equal": len(result.kept),
        "different": len(result.dropped),
        "different_ids": [d.id for d in result.dropped],
    }


def measure(dataset_name: str, with_neo4j: bool) -> dict[str, Any]:
    """Screens without and with the rewrites, and the pairs only the rewrites keep."""
    with tempfile.TemporaryDirectory() as off_root, rewrites_switched_off():
        before = screen(dataset_name, off_root)
    with tempfile.TemporaryDirectory() as on_root:
        after = screen(dataset_name, on_root)
    kept_before = {i.id for i in before.kept}
    kept_after = {i.id for i in after.kept}
    gained = sorted(kept_after - kept_before)
    lost = sorted(kept_before - kept_after)
    cypher = {i.id: i.cypher for i in after.kept}
    out: dict[str, Any] = {
        "dataset": dataset_name,
        "pairs": before.total,
        "kept_before": len(kept_before),
        "kept_after": len(kept_after),
        "dropped_before": dict(Counter(d.kind.value for d in before.dropped)),
        "dropped_after": dict(Counter(d.kind.value for d in after.dropped)),
        "gained": {qid: list(normalise(cypher[qid]).applied) for qid in gained},
        "lost": lost,
    }
    if with_neo4j and gained:
        out["neo4j"] = neo4j_agreement(dataset_name, set(gained))
    return out


def report(rows: list[dict[str, Any]]) -> str:
    """A markdown table, one line per dataset."""
    lines = [
        "| dataset | pairs | kept, rewrites off | kept, rewrites on | gained | lost | equal on Neo4j |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        neo = row.get("neo4j")
        agree = f"{neo['equal']} of {neo['equal'] + neo['different']}" if neo else "not run"
        lines.append(
            f"| {row['dataset']} | {row['pairs']} | {row['kept_before']} | {row['kept_after']} | "
            f"{len(row['gained'])} | {len(row['lost'])} | {agree} |"
        )
    for row in rows:
        rules = Counter(rule for applied in row["gained"].values() for rule in applied)
        if rules:
            lines.append(
                f"\n{row['dataset']}: rewrites behind the gained pairs: "
                + ", ".join(f"{rule} {n}" for rule, n in sorted(rules.items()))
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", action="append", help="dataset name (repeatable; default both)")
    parser.add_argument("--neo4j", action="store_true", help="check the gained pairs against a Neo4j server")
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args()
    rows = [measure(name, args.neo4j) for name in (args.dataset or ["kurikulum", "movies"])]
    print(report(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=2, sort_keys=True)
            handle.write("\n")


if __name__ == "__main__":
    main()
