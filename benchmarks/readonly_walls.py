"""What the read-only walls cost per query, and whether they refuse any real read.

    PYTHONPATH=. python benchmarks/readonly_walls.py                 # kurikulum gold, 20 rounds
    PYTHONPATH=. python benchmarks/readonly_walls.py --dataset movies --rounds 5

For every gold query it times (a) the gate alone (`cypher/gate.gate_check`: limits, read-only rules,
dialect rewrite, rules again), (b) `LadybugStore.query` (the gate, then the query process:
one prepared statement, EXPLAIN plan check, row and byte caps, the watched deadline) and
(c) a bare `Connection.execute` of the same (rewritten) text on a read-only connection in this
process, and prints the median per query of each and of (b) - (c), the walls' overhead. It also
counts false refusals: gold queries and few-shot examples of the dataset the gate refuses.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="kurikulum")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)

    import ladybug

    from t2c_lib.cypher.gate import gate_check
    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph.ladybug import LadybugStore

    dataset = load_dataset(args.dataset)
    store = LadybugStore(dataset)
    texts = [item.cypher for item in dataset.questions] + [example.cypher for example in dataset.examples]
    refused = [t for t in texts if not gate_check(t).ok]
    queries = [item.cypher for item in dataset.questions if gate_check(item.cypher).ok]
    db = ladybug.Database(str(store.db_path), read_only=True, max_num_threads=1)
    conn = ladybug.Connection(db, num_threads=1)
    gate_ms, walls_ms, bare_ms = [], [], []
    for cypher in queries:
        try:
            store.query(cypher)
        except Exception:  # a gold query that does not run here is not timed
            continue
        rewritten = gate_check(cypher).query
        g, w, b = [], [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            gate_check(cypher)
            t1 = time.perf_counter()
            store.query(cypher)
            t2 = time.perf_counter()
            raw = conn.execute(rewritten)
            while raw.has_next():
                raw.get_next()
            t3 = time.perf_counter()
            g.append(t1 - t0)
            w.append(t2 - t1)
            b.append(t3 - t2)
        gate_ms.append(statistics.median(g) * 1000)
        walls_ms.append(statistics.median(w) * 1000)
        bare_ms.append(statistics.median(b) * 1000)
    overhead = [w - b for w, b in zip(walls_ms, bare_ms)]
    print(f"{args.dataset}: {len(walls_ms)} gold queries, {args.rounds} rounds each (median per query, ms)")
    print(f"  gate (text)              {statistics.median(gate_ms):.3f}")
    print(f"  store.query with walls   {statistics.median(walls_ms):.3f}")
    print(f"  bare execute             {statistics.median(bare_ms):.3f}")
    print(
        f"  walls' overhead          {statistics.median(overhead):.3f}  (p90 {statistics.quantiles(overhead, n=10)[-1]:.3f})"
    )
    print(f"  false refusals           {len(refused)} of {len(texts)} gold queries and examples")
    for text in refused:
        print(f"    refused: {text[:100]}")
    db.close()
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
