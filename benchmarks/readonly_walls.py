"""What the read-only walls cost per query: the embedded store with them against a bare execute.

    PYTHONPATH=. python benchmarks/readonly_walls.py                 # kurikulum gold, 20 rounds
    PYTHONPATH=. python benchmarks/readonly_walls.py --dataset movies --rounds 5

For every gold query it times (a) the guard alone, (b) `LadybugStore.query` (one prepared
statement, EXPLAIN plan check, row cap, deadline over fetching) and (c) the bare
`Connection.execute` the store used before the walls, on the same read-only connection,
and prints the median per query of each and of (b) - (c), the walls' overhead.
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

    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph.ladybug import LadybugStore
    from t2c_lib.validation.guard import check_read_only

    dataset = load_dataset(args.dataset)
    store = LadybugStore(dataset)
    queries = [item.cypher for item in dataset.questions if check_read_only(item.cypher).ok]
    conn = store._connection()
    guard_ms, walls_ms, bare_ms = [], [], []
    for cypher in queries:
        try:
            store.query(cypher)
        except Exception:  # a gold query that does not run here is not timed
            continue
        g, w, b = [], [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            check_read_only(cypher)
            t1 = time.perf_counter()
            store.query(cypher)
            t2 = time.perf_counter()
            raw = conn.execute(cypher)
            while raw.has_next():
                raw.get_next()
            t3 = time.perf_counter()
            g.append(t1 - t0)
            w.append(t2 - t1)
            b.append(t3 - t2)
        guard_ms.append(statistics.median(g) * 1000)
        walls_ms.append(statistics.median(w) * 1000)
        bare_ms.append(statistics.median(b) * 1000)
    overhead = [w - b for w, b in zip(walls_ms, bare_ms)]
    print(f"{args.dataset}: {len(walls_ms)} gold queries, {args.rounds} rounds each (median per query, ms)")
    print(f"  guard (text)             {statistics.median(guard_ms):.3f}")
    print(f"  store.query with walls   {statistics.median(walls_ms):.3f}")
    print(f"  bare execute (before)    {statistics.median(bare_ms):.3f}")
    print(f"  walls' overhead          {statistics.median(overhead):.3f}  (p90 {statistics.quantiles(overhead, n=10)[-1]:.3f})")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
