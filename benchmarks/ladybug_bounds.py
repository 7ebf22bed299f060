"""How large a graph the embedded store takes: load time, peak memory and disk for generated graphs.

    PYTHONPATH=. python benchmarks/ladybug_bounds.py                 # 10k and 100k nodes
    PYTHONPATH=. python benchmarks/ladybug_bounds.py --nodes 1000000

Each size is a generated dataset (a temporary folder in the dataset format: `Item` nodes with a
name, a number and a flag, each linked to the next by `NEXT`, so as many relationships as nodes)
read by the dataset loader and built by the embedded store's walled builder, then asked one count
query. Printed per size: the seconds to read the files, to build the database, the peak resident
memory of this process (the loader's rows) and of the builder process, and the database's size on
disk. The numbers in docs/datasets.md ("Bounds") come from this script.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path


def write_graph(root: Path, nodes: int) -> Path:
    """A dataset folder with `nodes` Item nodes and `nodes - 1` NEXT relationships."""
    (root / "nodes").mkdir(parents=True)
    (root / "rels").mkdir()
    (root / "schema.yaml").write_text(
        "nodes:\n  Item:\n    properties: {name: STRING, number: INTEGER, even: BOOLEAN}\n"
        "relationships:\n  NEXT:\n    endpoints: [[Item, Item]]\n",
        encoding="utf-8",
    )
    (root / "dataset.yaml").write_text("name: bounds\nlanguage: en\n", encoding="utf-8")
    (root / "ground_truth.csv").write_text("question,cypher\nHow many items?,MATCH (i:Item) RETURN count(i)\n")
    with (root / "nodes" / "Item.csv").open("w", encoding="utf-8") as out:
        out.write("id,name,number,even\n")
        out.writelines(f"i{n},item number {n},{n},{'true' if n % 2 == 0 else 'false'}\n" for n in range(nodes))
    with (root / "rels" / "NEXT.csv").open("w", encoding="utf-8") as out:
        out.write("from_label,from_id,to_label,to_id\n")
        out.writelines(f"Item,i{n},Item,i{n + 1}\n" for n in range(nodes - 1))
    return root


def measure(nodes: int) -> dict[str, float]:
    """Read, build and query one generated graph of `nodes` nodes."""
    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph.ladybug import LadybugStore

    os.environ["T2C_EMBEDDED_MAX_ELEMENTS"] = str(4 * nodes)  # measure past the store's own bound
    work = Path(tempfile.mkdtemp(prefix="t2c-bounds-"))
    try:
        started = time.perf_counter()
        dataset = load_dataset(write_graph(work / "bounds", nodes))
        read_s = time.perf_counter() - started
        started = time.perf_counter()
        store = LadybugStore(dataset, root=work / "store")
        build_s = time.perf_counter() - started
        count = store.query("MATCH (i:Item) RETURN count(i)").rows[0][0]
        db_bytes = sum(p.stat().st_size for p in (work / "store").rglob("*") if p.is_file())
        store.close()
        assert count == nodes, (count, nodes)
        return {
            "nodes": nodes,
            "read_s": read_s,
            "build_s": build_s,
            "loader_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "children_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            "db_mib": db_bytes / 2**20,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args(argv)
    print("nodes    rels     read s   build s  loader peak MiB  children peak MiB  db MiB")
    for nodes in args.nodes:
        m = measure(nodes)
        print(
            f"{nodes:<8d} {nodes - 1:<8d} {m['read_s']:<8.1f} {m['build_s']:<8.1f} "
            f"{m['loader_rss_mib']:<16.0f} {m['children_rss_mib']:<18.0f} {m['db_mib']:.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
