"""Seeded perturbed copies of a dataset's graph, for test-suite accuracy.

Execution accuracy on one small graph lets a wrong query pass by coincidence (the movies
graph has 38 movies; many answers are one row). Spider's test-suite evaluation counts a
prediction correct only if it matches the gold on several database variants; these are
the variants for a graph. Each copy applies one kind of change, seeded:

- `shuffle`: the values of each property are permuted among the nodes (and relationships)
  that hold it, so which node has which value changes while every value stays;
- `drop`: a share of the nodes (with their relationships) and of the remaining
  relationships is removed;
- `jitter`: every number (and every number in a list) moves by a small random amount
  (integers by a non-zero step of at most 10% of the property's range, at least 1;
  floats by up to 10% of their value), so sums, orders and thresholds change;
- `swap`: the name of each label (its string property with the most distinct values:
  `name`, `title`, `nama`) is exchanged between random pairs of nodes.

Load keys never change, so relationships still join the nodes they joined. A copy keeps
the dataset's name and hash (it is the same dataset version, like the reversed copy the
gold screen uses); the store caches it under a variant naming the kind, index, seed and
`PERTURB_VERSION`, so it is built once.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from enum import Enum
from typing import Any, TypeVar

from t2c_lib.datasets import Dataset, NodeRow, RelRow

_Row = TypeVar("_Row", NodeRow, RelRow)

PERTURB_VERSION = "p1"
DROP_SHARE = 0.2
JITTER_SHARE = 0.1


class Perturbation(str, Enum):
    """One kind of change to a graph (see the module docstring)."""

    SHUFFLE = "shuffle"
    DROP = "drop"
    JITTER = "jitter"
    SWAP = "swap"


KINDS = tuple(Perturbation)
"""The order in which the copies of a test suite cycle through the kinds."""


def copy_plan(k: int, seed: int = 0) -> list[tuple[Perturbation, int]]:
    """(kind, seed) of each of `k` copies: the kinds in turn, each copy its own seed."""
    if k < 0:
        raise ValueError(f"the number of perturbed copies must be at least 0 (got {k})")
    return [(KINDS[i % len(KINDS)], seed * 1000 + i) for i in range(k)]


def variant_name(kind: Perturbation, index: int, seed: int) -> str:
    """The store variant (cache directory suffix) of one copy."""
    return f"ts-{PERTURB_VERSION}-{index}-{kind.value}-s{seed}"


def perturb(dataset: Dataset, kind: Perturbation, seed: int) -> Dataset:
    """A copy of `dataset` with its graph changed by `kind`, reproducibly for `seed`."""
    rng = random.Random(f"{PERTURB_VERSION}|{kind.value}|{seed}")
    if kind is Perturbation.SHUFFLE:
        return _every_table(dataset, _shuffled, rng)
    if kind is Perturbation.DROP:
        return _dropped(dataset, rng)
    if kind is Perturbation.JITTER:
        return _every_table(dataset, _jittered, rng)
    if kind is Perturbation.SWAP:
        return replace(
            dataset, nodes={label: _names_swapped(rows, rng) for label, rows in sorted(dataset.nodes.items())}
        )
    raise ValueError(f"unknown perturbation {kind!r}")


def _every_table(dataset: Dataset, change: Callable[[list, random.Random], list], rng: random.Random) -> Dataset:
    """`change` applied to every label's node rows, then every type's relationship rows, in name order (seeded)."""
    return replace(
        dataset,
        nodes={label: change(rows, rng) for label, rows in sorted(dataset.nodes.items())},
        rels={t: change(rows, rng) for t, rows in sorted(dataset.rels.items())},
    )


def _with_properties(row: _Row, properties: dict[str, Any]) -> _Row:
    return replace(row, properties=properties)


def _property_names(rows: list) -> list[str]:
    return sorted({p for row in rows for p in row.properties})


def _shuffled(rows: list, rng: random.Random) -> list:
    """Each property's values permuted among the rows that hold it."""
    props = [dict(r.properties) for r in rows]
    for name in _property_names(rows):
        holders = [i for i, p in enumerate(props) if name in p]
        values = [props[i][name] for i in holders]
        rng.shuffle(values)
        for i, value in zip(holders, values):
            props[i][name] = value
    return [_with_properties(r, p) for r, p in zip(rows, props)]


def _dropped(dataset: Dataset, rng: random.Random) -> Dataset:
    """A share of the nodes (and their relationships) and of the relationships removed."""
    nodes, gone = {}, set()
    for label, rows in sorted(dataset.nodes.items()):
        keep = []
        for row in rows:
            if rng.random() < DROP_SHARE:
                gone.add((label, row.key))
            else:
                keep.append(row)
        nodes[label] = keep
    rels = {}
    for rel_type, rel_rows in sorted(dataset.rels.items()):
        rels[rel_type] = [
            r
            for r in rel_rows
            if (r.from_label, r.from_key) not in gone
            and (r.to_label, r.to_key) not in gone
            and rng.random() >= DROP_SHARE
        ]
    return replace(dataset, nodes=nodes, rels=rels)


def _jittered(rows: list, rng: random.Random) -> list:
    """Every number moved a little (integers by a non-zero step, floats relatively)."""
    steps: dict[str, int] = {}
    for name in _property_names(rows):
        ints = [v for r in rows for v in _numbers(r.properties.get(name)) if isinstance(v, int)]
        steps[name] = max(1, int((max(ints) - min(ints)) * JITTER_SHARE)) if ints else 1
    out = []
    for row in rows:
        props = {name: _jitter(value, steps[name], rng) for name, value in sorted(row.properties.items())}
        out.append(_with_properties(row, props))
    return out


def _numbers(value: Any) -> list:
    if isinstance(value, list):
        return [v for v in value if _is_number(v)]
    return [value] if _is_number(value) else []


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _jitter(value: Any, step: int, rng: random.Random) -> Any:
    if isinstance(value, list):
        return [_jitter(v, step, rng) for v in value]
    if isinstance(value, bool) or not _is_number(value):
        return value
    if isinstance(value, int):
        return value + rng.choice([-1, 1]) * rng.randint(1, step)
    return value * (1 + rng.uniform(-JITTER_SHARE, JITTER_SHARE)) if value else rng.uniform(-JITTER_SHARE, JITTER_SHARE)


def name_property(rows: list[NodeRow]) -> str | None:
    """A label's name: its string property with the most distinct values (ties: alphabetical)."""
    best: tuple[int, str] | None = None
    for name in _property_names(rows):
        values = [r.properties[name] for r in rows if name in r.properties]
        if not values or not all(isinstance(v, str) for v in values):
            continue
        candidate = (-len(set(values)), name)
        best = candidate if best is None or candidate < best else best
    return best[1] if best else None


def _names_swapped(rows: list[NodeRow], rng: random.Random) -> list[NodeRow]:
    """The name exchanged between random pairs of the nodes that have one."""
    name = name_property(rows)
    if name is None:
        return list(rows)
    props = [dict(r.properties) for r in rows]
    holders = [i for i, p in enumerate(props) if name in p]
    rng.shuffle(holders)
    for a, b in zip(holders[0::2], holders[1::2]):
        props[a][name], props[b][name] = props[b][name], props[a][name]
    return [_with_properties(r, p) for r, p in zip(rows, props)]


__all__ = [
    "DROP_SHARE",
    "JITTER_SHARE",
    "KINDS",
    "PERTURB_VERSION",
    "Perturbation",
    "copy_plan",
    "name_property",
    "perturb",
    "variant_name",
]
