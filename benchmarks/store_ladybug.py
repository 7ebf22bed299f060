"""Load time of a dataset into the embedded store and the median time of its gold queries.

Usage: python benchmarks/store_ladybug.py [dataset] [repeats]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time

from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore


def main(dataset_name: str = "kurikulum", repeats: int = 5) -> None:
    dataset = load_dataset(dataset_name)
    with tempfile.TemporaryDirectory() as root:
        store = LadybugStore(dataset, root=root, auto_load=False)
        load_times = []
        for _ in range(3):
            started = time.perf_counter()
            counts = store.load(dataset)
            load_times.append(time.perf_counter() - started)
        print(
            f"dataset {dataset.name}: {sum(v for k, v in counts.items() if k in dataset.nodes)} nodes, "
            f"{sum(v for k, v in counts.items() if k in dataset.rels)} relationships"
        )
        for name, count in counts.items():
            print(f"  {name:<18} {count:>6}")
        print(f"load time: median {statistics.median(load_times):.3f} s over {len(load_times)} loads")
        per_query = []
        for item in dataset.questions:
            store.query(item.cypher)  # warm
            samples = []
            for _ in range(repeats):
                started = time.perf_counter()
                store.query(item.cypher)
                samples.append(time.perf_counter() - started)
            per_query.append(statistics.median(samples))
        print(
            f"gold queries: {len(per_query)}, median {statistics.median(per_query) * 1000:.2f} ms, "
            f"max {max(per_query) * 1000:.2f} ms (median of {repeats} runs each)"
        )
        store.close()


if __name__ == "__main__":
    main(*(sys.argv[1:2] or ["kurikulum"]), *(int(a) for a in sys.argv[2:3]))
