"""Count the import layers of t2c_lib: the longest chain of its parts, each importing the next.

A *part* is a top-level module (`records`, `schema`, ...) or a subpackage (`graph`, `agent`, ...)
of the package; an import between two modules of one part stays inside it. The edges are those
`tools/import_cycles.py` reads (every `import` anywhere in a module: top level, `TYPE_CHECKING`
blocks, function bodies), so a lazy import reaching up counts as much as a top-level one. A part
that imports no other part is layer 1; every other part sits one layer above the highest part it
imports. The number of layers is the length of the longest chain; the fewer, the shorter the way
from the command line down to the leaves, and the fewer parts a change low down reaches.

Prints the count, the longest chain and the parts of every layer; exits 1 if the parts import
each other in a circle (then there are no layers) or, with `--max N`, if there are more than N.
Usage: `python tools/import_layers.py [--max N]`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from import_cycles import PACKAGE, cycles, edges, module_names


def part_of(module: str) -> str:
    """The part a module belongs to: `t2c_lib.graph.base` -> `graph`, `t2c_lib.records` -> `records`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Part -> the other parts its modules import (a module graph folded onto the parts)."""
    out: dict[str, set[str]] = {part_of(m): set() for m in graph}
    for module, targets in graph.items():
        here = part_of(module)
        out[here] |= {part_of(t) for t in targets} - {here}
    return out


def layers(graph: dict[str, set[str]]) -> dict[str, int]:
    """Part -> its layer: 1 for a part that imports no other, else one more than the highest it imports.

    The graph must have no circle (`import_cycles.cycles` finds them first)."""
    layer: dict[str, int] = {}

    def visit(node: str) -> int:
        if node not in layer:
            layer[node] = 1 + max((visit(t) for t in graph[node]), default=0)
        return layer[node]

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for node in sorted(graph):
        visit(node)
    return layer


def longest_chain(graph: dict[str, set[str]], layer: dict[str, int]) -> list[str]:
    """One longest import chain, from the highest part down to a leaf (ties broken by name)."""
    node = min(graph, key=lambda n: (-layer[n], n))
    chain = [node]
    while graph[node]:
        node = min(graph[node], key=lambda n: (-layer[n], n))
        chain.append(node)
    return chain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=None, help="exit 1 if there are more layers than this")
    args = parser.parse_args(argv)
    graph = part_graph(edges(module_names(), with_parents=False))
    circles = cycles(graph)
    if circles:
        print(f"{len(graph)} parts of {PACKAGE} import each other in a circle, so they have no layers:")
        for circle in circles:
            print("  " + " <-> ".join(circle))
        return 1
    layer = layers(graph)
    chain = longest_chain(graph, layer)
    print(f"{len(graph)} parts of {PACKAGE}, {len(chain)} import layers")
    print("longest chain: " + " -> ".join(chain))
    for level in range(len(chain), 0, -1):
        print(f"  layer {level}: " + ", ".join(sorted(p for p in graph if layer[p] == level)))
    if args.max is not None and len(chain) > args.max:
        print(f"{len(chain)} layers, more than --max {args.max}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
