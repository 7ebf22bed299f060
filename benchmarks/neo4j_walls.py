"""What the Neo4j store's walls cost per query, and whether the gate refuses any real read there.

    make neo4j
    PYTHONPATH=. python benchmarks/neo4j_walls.py                    # kurikulum gold, 20 rounds
    PYTHONPATH=. python benchmarks/neo4j_walls.py --dataset movies --rounds 5

Needs a Neo4j server holding the dataset (loaded on first use): `NEO4J_URI`, else the local one
on `bolt://127.0.0.1:$NEO4J_PORT`. For every gold query the gate lets through it times, on the
same warm connection pool:

(a) the gate alone (`cypher/gate.gate_check` without the dialect rewrite, as the Neo4j store calls it);
(b) `Neo4jStore.query`: the gate, a READ transaction with the server's timeout and a query token,
    the client deadline (a timer thread that would cut the connection) and the wire byte count,
    EXPLAIN and the plan check, fetching with the row cap, conversion, the nesting limit and the
    converted byte budget;
(c) the store as it was before this round: the same READ transaction, EXPLAIN, plan check, run
    and conversion, without the gate, deadline or byte accounting;
(d) a bare run: the query alone in a READ transaction, records fetched, nothing checked;

and prints the median per query of each, with (b) - (c), what this round added, and (b) - (d),
what all the walls cost. It also counts false refusals: gold queries and few-shot examples of
the dataset the gate refuses.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="kurikulum")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--uri", default=os.environ.get("NEO4J_URI") or f"bolt://127.0.0.1:{os.environ.get('NEO4J_PORT') or 7687}"
    )
    args = parser.parse_args(argv)

    import neo4j

    from t2c_lib.cypher.gate import gate_check
    from t2c_lib.cypher.lexer import Dialect
    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph.neo4j import FETCH_SIZE, Neo4jStore, _check_read_only_plan, _convert

    dataset = load_dataset(args.dataset)
    store = Neo4jStore(dataset, uri=args.uri)
    texts = [item.cypher for item in dataset.questions] + [example.cypher for example in dataset.examples]
    refused = [t for t in texts if not gate_check(t, rewrite=False, dialect=Dialect.NEO4J).ok]
    queries = [
        item.cypher for item in dataset.questions if gate_check(item.cypher, rewrite=False, dialect=Dialect.NEO4J).ok
    ]

    def before(cypher: str) -> list:
        """The store's read path before this round (commit 98f8c63): no gate, no client deadline, no byte budget."""
        with store.driver.session(
            database=store.database, default_access_mode=neo4j.READ_ACCESS, fetch_size=FETCH_SIZE
        ) as s:
            tx = s.begin_transaction(timeout=10.0)
            try:
                _check_read_only_plan(tx.run(f"EXPLAIN {cypher}").consume())
                return [[_convert(v) for v in record.values()] for record in tx.run(cypher)]
            finally:
                tx.close()

    def bare(cypher: str) -> list:
        with store.driver.session(
            database=store.database, default_access_mode=neo4j.READ_ACCESS, fetch_size=FETCH_SIZE
        ) as s:
            tx = s.begin_transaction(timeout=10.0)
            try:
                return [record.values() for record in tx.run(cypher)]
            finally:
                tx.close()

    gate_ms, walls_ms, before_ms, bare_ms = [], [], [], []
    for cypher in queries:
        try:
            store.query(cypher)
        except Exception:  # a gold query that does not run here is not timed
            continue
        g, w, o, b = [], [], [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            gate_check(cypher, rewrite=False, dialect=Dialect.NEO4J)
            t1 = time.perf_counter()
            store.query(cypher)
            t2 = time.perf_counter()
            before(cypher)
            t3 = time.perf_counter()
            bare(cypher)
            t4 = time.perf_counter()
            g.append(t1 - t0)
            w.append(t2 - t1)
            o.append(t3 - t2)
            b.append(t4 - t3)
        gate_ms.append(statistics.median(g) * 1000)
        walls_ms.append(statistics.median(w) * 1000)
        before_ms.append(statistics.median(o) * 1000)
        bare_ms.append(statistics.median(b) * 1000)
    added = [w - o for w, o in zip(walls_ms, before_ms)]
    overhead = [w - b for w, b in zip(walls_ms, bare_ms)]
    print(
        f"{args.dataset} on Neo4j ({args.uri}): {len(walls_ms)} gold queries, {args.rounds} rounds each (median per query, ms)"
    )
    print(f"  gate (text, no rewrite)         {statistics.median(gate_ms):.3f}")
    print(f"  store.query, all walls          {statistics.median(walls_ms):.3f}")
    print(f"  store before this round         {statistics.median(before_ms):.3f}")
    print(f"  bare run (READ tx, no checks)   {statistics.median(bare_ms):.3f}")
    print(
        f"  added by this round             {statistics.median(added):.3f}  (p90 {statistics.quantiles(added, n=10)[-1]:.3f})"
    )
    print(
        f"  all walls' overhead             {statistics.median(overhead):.3f}  (p90 {statistics.quantiles(overhead, n=10)[-1]:.3f})"
    )
    print(f"  false refusals                  {len(refused)} of {len(texts)} gold queries and examples")
    for text in refused:
        print(f"    refused: {text[:100]}")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
