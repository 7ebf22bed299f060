"""Gold screening and stratified sampling of ground-truth items.

An external benchmark's gold queries were written for someone else's database (for the
movies set: Neo4j's demo server). Before a run, `screen_gold` executes every gold query
on the store in use and keeps only the pairs that run and return something there; every
dropped pair is reported with the store's own reason, never silently discarded. It also
drops the pairs the dataset excludes by name (`gold_exclusions` in dataset.yaml, each with
its reason) and, with an `OrderProbe`, the pairs whose answer depends on the order in which
the engine meets the rows (the graph loaded bottom-up answers differently): such a gold
answer is one of several equally right ones, so no prediction could be scored against it
fairly. Given reference stores (`also`), it further keeps only the pairs whose result is
equivalent on all of them.
`sample_items` then draws a fixed, seeded, stratum-proportional subset for quick runs.
"""

from __future__ import annotations

import csv
import hashlib
import os
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from t2c_lib.datasets import Dataset, GroundTruthItem
from t2c_lib.errors import InvalidValue
from t2c_lib.files.outputs import csv_cell, decode_json, to_json
from t2c_lib.graph.base import DEFAULT_TIMEOUT_S, GraphStore, QueryError, QueryResult, QueryTimeout
from t2c_lib.metrics.equivalence import ordering, results_equivalent
from t2c_lib.runs.gold_screen import REPORT_CSV, DropKind, gold_note
from t2c_lib.validation.guard import check_read_only

REPORT_COLUMNS = ("id", "reason", "question", "cypher")


@dataclass(frozen=True)
class DroppedItem:
    """A gold pair that cannot serve as ground truth on this store, and why."""

    id: str
    question: str
    cypher: str
    reason: str
    kind: DropKind = DropKind.RUNTIME
    strata: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass
class GoldScreen:
    """The outcome of running every gold query of a dataset on one store."""

    dataset: str
    dataset_hash: str
    store: str
    timeout_s: float
    strata_columns: list[str]
    kept: list[GroundTruthItem]
    dropped: list[DroppedItem]
    also: list[str] = field(default_factory=list)  # reference stores the kept results were compared with
    order_probe: bool = False  # whether row-order-dependent answers were looked for

    @property
    def total(self) -> int:
        return len(self.kept) + len(self.dropped)

    def stratum_counts(self) -> dict[str, dict[str, dict[str, int]]]:
        """`{column: {value: {"kept": n, "dropped": m}}}` for every strata column, values sorted."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for column in self.strata_columns:
            cells: dict[str, dict[str, int]] = {}
            for outcome, strata in [("kept", i.strata) for i in self.kept] + [
                ("dropped", d.strata) for d in self.dropped
            ]:
                cell = cells.setdefault(strata.get(column, ""), {"kept": 0, "dropped": 0})
                cell[outcome] += 1
            out[column] = dict(sorted(cells.items()))
        return out

    def kind_counts(self) -> dict[str, int]:
        """How many pairs were dropped for each coarse reason (`DropKind`)."""
        return dict(sorted(Counter(d.kind.value for d in self.dropped).items()))

    def top_reasons(self, limit: int = 10) -> list[tuple[str, int]]:
        """The most frequent drop reasons, first line only and without query-specific positions."""
        counted = Counter(_reason_head(d.reason) for d in self.dropped)
        return sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary: totals, per-stratum counts, drop kinds and top reasons."""
        return {
            "dataset": self.dataset,
            "dataset_hash": self.dataset_hash,
            "store": self.store,
            "also": list(self.also),
            "order_probe": self.order_probe,
            "timeout_s": self.timeout_s,
            "total": self.total,
            "kept": len(self.kept),
            "dropped": len(self.dropped),
            "strata": self.stratum_counts(),
            "dropped_by_kind": self.kind_counts(),
            "top_reasons": [{"reason": r, "count": n} for r, n in self.top_reasons()],
            "dropped_ids": [d.id for d in self.dropped],
        }

    def write_report(self, path: Path | str) -> tuple[Path, Path]:
        """Write the dropped pairs as CSV (id, reason, question, cypher) and a JSON summary beside it.

        `path` is either a directory (files `gold_screen.csv` and `gold_screen.json` go
        inside) or the CSV file's path (the JSON gets the same name with `.json`).
        Returns (csv_path, json_path).
        """
        target = Path(path)
        csv_path = target / REPORT_CSV if target.is_dir() or not target.suffix else target
        json_path = csv_path.with_suffix(".json")
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        with csv_path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(REPORT_COLUMNS)
            for item in self.dropped:  # a dataset's question or query is written as text, never a formula
                writer.writerow([csv_cell(v) for v in (item.id, item.reason, item.question, item.cypher)])
        json_path.write_text(to_json(self.summary(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return csv_path, json_path

    def to_record(self) -> dict[str, Any]:
        """Everything needed to rebuild this screen from the dataset: kept ids, and each drop with its kind and reason."""
        return {
            "dataset": self.dataset,
            "dataset_hash": self.dataset_hash,
            "store": self.store,
            "timeout_s": self.timeout_s,
            "also": list(self.also),
            "order_probe": self.order_probe,
            "kept": [item.id for item in self.kept],
            "dropped": [{"id": d.id, "kind": d.kind.value, "reason": d.reason} for d in self.dropped],
        }

    @classmethod
    def from_record(cls, dataset: Dataset, record: dict[str, Any]) -> GoldScreen:
        """The screen `to_record` described, its items taken from `dataset` (which must be the same version)."""
        if record.get("dataset_hash") != dataset.hash:
            raise ValueError(
                f"a gold screen of {record.get('dataset')} {str(record.get('dataset_hash'))[:16]} "
                f"does not describe {dataset.name} {dataset.hash[:16]}"
            )
        by_id = {item.id: item for item in dataset.questions}
        dropped = [
            DroppedItem(
                d["id"],
                by_id[d["id"]].question,
                by_id[d["id"]].cypher,
                d["reason"],
                DropKind(d["kind"]),
                dict(by_id[d["id"]].strata),
            )
            for d in record["dropped"]
        ]
        return cls(
            dataset=record["dataset"],
            dataset_hash=record["dataset_hash"],
            store=record["store"],
            timeout_s=float(record["timeout_s"]),
            strata_columns=list(dataset.strata_columns),
            kept=[by_id[i] for i in record["kept"]],
            dropped=dropped,
            also=list(record["also"]),
            order_probe=bool(record["order_probe"]),
        )

    def survival(self) -> str:
        """One line: gold pairs kept of all and the main reasons for the others (`gold_note`)."""
        return gold_note(self.summary())

    def loud_warning(self) -> str:
        """A banner when the screen dropped more than LOUD_SHARE of the gold pairs, else ""."""
        if not self.total or Fraction(len(self.dropped), self.total) <= LOUD_SHARE:
            return ""
        share = 100 * len(self.dropped) / self.total
        return (
            f"WARNING: the gold screen dropped {len(self.dropped)} of {self.total} gold pairs of {self.dataset} "
            f"({share:.0f}%, more than a quarter) on {self.store}: the study answers only the {len(self.kept)} kept. "
            f"{self.survival()}; `t2c dataset check {self.dataset}` says what each dropped pair needs"
        )

    def describe(self) -> str:
        """A few human-readable lines: kept/dropped overall and per stratum, and the top reasons."""
        checks = (["row order probed"] if self.order_probe else []) + (
            [f"results compared with {', '.join(self.also)}"] if self.also else []
        )
        checked = f" ({'; '.join(checks)})" if checks else ""
        lines = [
            f"{self.dataset} on {self.store}{checked}: kept {len(self.kept)} of {self.total} gold pairs, dropped {len(self.dropped)}"
        ]
        for column, cells in self.stratum_counts().items():
            for value, counts in cells.items():
                lines.append(f"  {column}={value}: kept {counts['kept']}, dropped {counts['dropped']}")
        for reason, count in self.top_reasons(5):
            lines.append(f"  {count:4d} x {reason}")
        return "\n".join(lines)


LOUD_SHARE = Fraction(1, 4)
"""A screen that drops more than this share of the gold pairs says so loudly when a run starts."""

NEEDS = {
    DropKind.SYNTAX: "a query the store's parser reads (LadybugDB's Cypher lacks some Neo4j forms: docs/datasets.md), "
    "or the Neo4j store (`store: neo4j`)",
    DropKind.SEMANTIC: "only the names, functions and variables the store knows (the reason names the one it lacks)",
    DropKind.RUNTIME: "a query that runs on this graph's values (the reason says where it failed)",
    DropKind.WRITE: "a read: the gold must not change the graph",
    DropKind.UNSAFE: "a read-only query the gate admits (the reason names the clause it refused)",
    DropKind.TOO_LARGE: "fewer rows than the store's row cap (an aggregate or a LIMIT with ORDER BY)",
    DropKind.TIMEOUT: "a cheaper query, or a longer query timeout",
    DropKind.EMPTY: "a question whose answer is in this graph (the query returns no rows, or only nulls)",
    DropKind.EXCLUDED: "nothing: the dataset's gold_exclusions leaves it out, with the reason",
    DropKind.ORDER: "an ORDER BY that decides every row it keeps (add a unique tie-breaker), or no LIMIT over unordered rows",
    DropKind.DIFFERS: "the same answer on every reference store (a dialect difference: the reason names both answers)",
}
"""What a dropped pair needs to be kept, by drop kind (`t2c dataset check` prints it beside each pair)."""


def failing_examples(dataset: Dataset, store: GraphStore, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """One line per few-shot example whose query fails the validator chain on `store`: the step and its message.

    A few-shot example is shown to the model as a right answer; one the store cannot run (`(o:Order)` before
    keyword names were quoted, a misspelt property) teaches the model a failing query."""
    from t2c_lib.validation.chain import build_chain, make_context, run_chain

    chain = build_chain(store)
    ctx = make_context(store, timeout_s)
    lines = []
    for number, example in enumerate(dataset.examples, start=1):
        failed = [r for r in run_chain(example.cypher, chain, ctx) if not r.ok]
        if failed:
            message = " ".join(failed[0].message.split())[:240]
            lines.append(
                f"example {number} ({example.question[:60]!r}) fails the {failed[0].validator} step: {message}"
            )
    return lines


def refuse_failing_examples(dataset: Dataset, store: GraphStore, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Raise InvalidValue naming the first failing example of `dataset` and how many fail (`failing_examples`)."""
    failing = failing_examples(dataset, store, timeout_s)
    if failing:
        raise InvalidValue(
            f"{dataset.path / 'examples.yaml'}: {len(failing)} of {len(dataset.examples)} few-shot examples fail on "
            f"{_store_name(store)}; the first: {failing[0]} (`t2c dataset check {dataset.name}` lists them all)"
        )


@dataclass
class OrderProbe:
    """Two embedded copies of one dataset version, loaded top-down and bottom-up.

    A gold query whose result differs between them depends on row order: it picks rows
    the query leaves unordered (LIMIT without ORDER BY, LIMIT over ties) or lists tied
    rows in engine order. Both copies are LadybugDB, whatever the study's store, so a
    difference can only come from the order, never from a dialect.
    """

    forward: GraphStore
    backward: GraphStore
    owns_forward: bool = False  # close() closes the forward copy too (it was opened for the probe)

    @classmethod
    def open(cls, dataset: Dataset, root: Path | None = None, forward: GraphStore | None = None) -> OrderProbe:
        """Build (or reuse) both copies under `root` (default: the embedded store's cache).

        `forward` reuses an already open embedded store of the same dataset version.
        """
        from t2c_lib.graph.ladybug import LadybugStore

        owns_forward = forward is None or getattr(forward, "name", "") != LadybugStore.name
        if forward is None or owns_forward:
            forward = LadybugStore(dataset, root=root)
        backward = LadybugStore(dataset.in_reverse_row_order(), root=root, variant="reversed")
        return cls(forward, backward, owns_forward)

    def differs(self, cypher: str, timeout_s: float) -> str | None:
        """Why the answer depends on row order, or None (same answer, or one copy cannot run it)."""
        try:
            top_down = self.forward.query(cypher, timeout_s=timeout_s)
            bottom_up = self.backward.query(cypher, timeout_s=timeout_s)
        except (QueryError, QueryTimeout):
            return None  # not evidence either way; the store check reports real failures
        mismatch = _mismatch(top_down, bottom_up, cypher)
        if mismatch is None:
            return None
        if mismatch == "order":
            return "answer depends on row order: tied rows under ORDER BY come back in another order when the graph is loaded bottom-up"
        return (
            "answer depends on row order: loaded bottom-up, the graph gives other rows "
            f"({len(top_down.rows)} top-down, {len(bottom_up.rows)} bottom-up; LIMIT over unordered or tied rows)"
        )

    def close(self) -> None:
        self.backward.close()
        if self.owns_forward:
            self.forward.close()


def screen_gold(
    dataset: Dataset,
    store: GraphStore,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    also: Sequence[GraphStore] = (),
    order_probe: OrderProbe | None = None,
    use_exclusions: bool = True,
) -> GoldScreen:
    """Run every gold query on `store`; keep the pairs that run and return a non-empty result.

    In this order, a pair is dropped when: the dataset's `gold_exclusions` name it
    (`use_exclusions`); the store refuses the query (QueryError, reason = its message),
    it times out (QueryTimeout), it returns no rows, or every returned value is
    null/empty; `order_probe` finds its answer depends on row order. Other store failures
    (StoreUnavailable) propagate: they are not the gold pair's fault.
    With reference stores `also` (holding the same dataset version), a pair that passes
    is also run on each of them and dropped (`DropKind.DIFFERS`, reason "differs between
    <store> and <other>: ...") unless it runs there and its result is equivalent
    (`results_equivalent`, in order when the gold sorts its final RETURN): a dialect
    difference, or an order-dependent answer that the probe did not catch.
    """
    for other in also:
        other_dataset = getattr(other, "dataset", None)
        if other_dataset is not None and other_dataset.hash != dataset.hash:
            raise InvalidValue(
                f"reference store {_store_name(other)} holds {other_dataset.name} ({other_dataset.hash[:16]}), "
                f"not {dataset.name} ({dataset.hash[:16]})"
            )
    exclusions = dataset.gold_exclusions if use_exclusions else {}
    kept: list[GroundTruthItem] = []
    dropped: list[DroppedItem] = []
    kind: DropKind | None  # None: the item is kept
    for item in dataset.questions:
        if item.id in exclusions:
            result, reason, kind = None, f"excluded by the dataset: {exclusions[item.id]}", DropKind.EXCLUDED
        else:
            result, reason, kind = _check(store, item.cypher, timeout_s)
        if result is not None and order_probe is not None:
            order_reason = order_probe.differs(item.cypher, timeout_s)
            if order_reason:
                result, reason, kind = None, order_reason, DropKind.ORDER
        if result is not None and also:
            reason, kind = _compare(store, result, also, item.cypher, timeout_s)
        if kind is None:
            kept.append(item)
        else:
            dropped.append(DroppedItem(item.id, item.question, item.cypher, reason, kind, dict(item.strata)))
    return GoldScreen(
        dataset=dataset.name,
        dataset_hash=dataset.hash,
        store=_store_name(store),
        timeout_s=timeout_s,
        strata_columns=list(dataset.strata_columns),
        kept=kept,
        dropped=dropped,
        also=[_store_name(other) for other in also],
        order_probe=order_probe is not None,
    )


SCREEN_CACHE_VERSION = "screen-v1"
_SCREEN_RULES = ("t2c_lib.study.screen", "t2c_lib.metrics.equivalence", "t2c_lib.validation.guard")


def screen_cache_key(dataset: Dataset, store: GraphStore, timeout_s: float, order_probe: bool) -> str:
    """sha256 (24 hex digits) of what decides a screen: dataset version, store engine, timeout, probe, rule code.

    The rule code is the source text of the screening modules; the store's own code,
    dialect rules and engine version come in through `engine_fingerprint`. A change to
    any of them screens again instead of reading a stale answer.
    """
    import importlib
    import inspect

    from t2c_lib import __version__
    from t2c_lib.graph.fingerprint import engine_fingerprint

    sources = hashlib.sha256()
    for name in _SCREEN_RULES:
        sources.update(inspect.getsource(importlib.import_module(name)).encode("utf-8"))
    parts = [
        SCREEN_CACHE_VERSION,
        __version__,
        dataset.hash,
        engine_fingerprint(store),
        repr(float(timeout_s)),
        str(bool(order_probe)),
        sources.hexdigest(),
    ]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:24]


def read_cached_screen(dataset: Dataset, path: Path) -> GoldScreen | None:
    """The screen saved at `path`, or None when there is none or it cannot be read (then the caller screens again)."""
    try:
        return GoldScreen.from_record(dataset, decode_json(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_cached_screen(screen: GoldScreen, path: Path) -> None:
    """Save `screen` at `path` atomically (parallel notebook runs may write the same file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    staging.write_text(to_json(screen.to_record(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(staging, path)


def _store_name(store: GraphStore) -> str:
    return getattr(store, "name", type(store).__name__)


def _check(store: GraphStore, cypher: str, timeout_s: float) -> tuple[QueryResult | None, str, DropKind | None]:
    """(result, "", None) for a usable gold result; (None, reason, kind) otherwise.

    Gold queries are data, so they meet the read-only guard before any store sees them."""
    verdict = check_read_only(cypher, store.facts.dialect)
    if not verdict.ok:
        return None, f"refused by the read-only guard: {verdict.message}", DropKind.UNSAFE
    try:
        result = store.query(cypher, timeout_s=timeout_s)
    except QueryTimeout as exc:
        return None, f"timeout: {exc}", DropKind.TIMEOUT
    except QueryError as exc:
        kind = _ERROR_KINDS.get(exc.kind, DropKind.RUNTIME)
        return None, f"{exc.kind} error: {exc}", kind
    if not result.rows:
        return None, "empty result: no rows", DropKind.EMPTY
    if all(_is_blank(value) for row in result.rows for value in row):
        return None, f"empty result: {len(result.rows)} row(s), every value null or empty", DropKind.EMPTY
    return result, "", None


def _compare(
    store: GraphStore,
    result: QueryResult,
    others: Sequence[GraphStore],
    cypher: str,
    timeout_s: float,
) -> tuple[str, DropKind | None]:
    """("", None) when every reference store gives a result equivalent to `result`, else why not."""
    name = _store_name(store)
    for other in others:
        other_name = _store_name(other)
        where = f"differs between {name} and {other_name}"
        try:
            theirs = other.query(cypher, timeout_s=timeout_s)
        except QueryTimeout as exc:
            return f"{where}: timeout on {other_name}: {exc}", DropKind.DIFFERS
        except QueryError as exc:
            return f"{where}: {exc.kind} error on {other_name}: {exc}", DropKind.DIFFERS
        mismatch = _mismatch(result, theirs, cypher)
        if mismatch is None:
            continue
        if mismatch == "order":
            return f"{where}: the same rows in another order", DropKind.DIFFERS
        return (
            f"{where}: different rows ({len(result.rows)} on {name}, {len(theirs.rows)} on {other_name})",
            DropKind.DIFFERS,
        )
    return "", None


def _mismatch(ours: QueryResult, theirs: QueryResult, cypher: str) -> str | None:
    """None if equivalent (in order when the gold sorts its final RETURN), "order" if only the row order differs, else "rows"."""
    order = ordering(cypher)  # tied rows may come in any order (eq:v3), so ties alone are no mismatch
    if results_equivalent(ours, theirs, ordered=order or False):
        return None
    if order is not None and results_equivalent(ours, theirs, ordered=False):
        return "order"
    return "rows"


_ERROR_KINDS = {
    "syntax": DropKind.SYNTAX,
    "semantic": DropKind.SEMANTIC,
    "runtime": DropKind.RUNTIME,
    "write": DropKind.WRITE,
    "unsafe": DropKind.UNSAFE,
    "too_large": DropKind.TOO_LARGE,
}


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, (list, tuple, dict, str)) and len(value) == 0)


def _reason_head(reason: str) -> str:
    """A reason without query-specific detail (positions, the echoed query), so similar failures group."""
    parse = _PARSER_INPUT.search(reason)
    if parse:
        tail = " ".join(re.findall(r"\w+|[^\w\s]", parse.group("input"))[-3:])
        return f"{reason.split(':', 1)[0]}: Parser exception near '{tail}' (expected {parse.group('rule')})"
    head = reason.strip().splitlines()[0] if reason.strip() else reason
    return re.split(r" \(line: \d+", head)[0][:200]


_PARSER_INPUT = re.compile(r"Parser exception: Invalid input <(?P<input>.*?)>: expected rule (?P<rule>\w+)", re.S)


# --- sampling -------------------------------------------------------------------------------


def sample_items(
    items: Sequence[GroundTruthItem],
    n: int | str | None,
    strata_column: str | Sequence[str] | None,
    seed: int = 0,
) -> list[GroundTruthItem]:
    """A fixed, seeded, stratum-proportional sample of `n` items, in the items' original order.

    Each stratum (value of `strata_column`, or the tuple of values of several columns;
    None = one stratum) gets its share of `n` by largest remainder (ties: larger stratum,
    then stratum value); within a stratum the members are drawn with a generator seeded
    by (seed, stratum), so one stratum's draw does not depend on the others.
    `n` = "all" or None returns every item.
    """
    items = list(items)
    if n is None or (isinstance(n, str) and n.strip().lower() == "all"):
        return items
    try:
        wanted = int(n)
    except (TypeError, ValueError):
        raise InvalidValue(f"sample size {n!r} is neither an integer nor 'all'") from None
    if wanted < 1:
        raise InvalidValue(f"sample size must be at least 1 (got {wanted})")
    if wanted > len(items):
        raise InvalidValue(f"sample size {wanted} exceeds the {len(items)} available items (use 'all')")
    columns = [strata_column] if isinstance(strata_column, str) else list(strata_column or [])
    groups: dict[tuple[str, ...], list[int]] = {}
    for index, item in enumerate(items):
        try:
            key = tuple(item.strata[c] for c in columns)
        except KeyError as exc:
            raise InvalidValue(
                f"item {item.id} has no stratum column {exc.args[0]!r} (has: {', '.join(item.strata)})"
            ) from None
        groups.setdefault(key, []).append(index)
    allocation = _largest_remainder({k: len(v) for k, v in groups.items()}, wanted)
    chosen: list[int] = []
    for key, members in groups.items():
        rng = random.Random(f"{seed}|{'|'.join(key)}")
        chosen.extend(rng.sample(members, allocation[key]))
    return [items[i] for i in sorted(chosen)]


def _largest_remainder(sizes: dict[tuple[str, ...], int], n: int) -> dict[tuple[str, ...], int]:
    """Split n across strata proportionally to their sizes (Hamilton's method, deterministic ties)."""
    total = sum(sizes.values())
    quotas = {k: Fraction(n * size, total) for k, size in sizes.items()}  # exact: ties stay ties
    allocation = {k: q.numerator // q.denominator for k, q in quotas.items()}
    left = n - sum(allocation.values())
    order = sorted(sizes, key=lambda k: (-(quotas[k] - allocation[k]), -sizes[k], k))
    for key in order[:left]:
        allocation[key] += 1
    return allocation


__all__ = ["DroppedItem", "GoldScreen", "OrderProbe", "REPORT_COLUMNS", "sample_items", "screen_gold"]
