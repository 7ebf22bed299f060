#!/usr/bin/env python3
"""Check that flipping PREREQUISITE to the thesis's direction left every gold answer unchanged.

Before the flip `(a:MK)-[:PREREQUISITE]->(b:MK)` meant "b is a prerequisite of a"; after it,
"a is a prerequisite of b". Both the data and the gold queries changed, so each gold query
of the old version, run on the old graph, must give exactly the answer of the same
question's new query on the new graph: the same columns and the same rows (in the same
order when the query sorts, as the same bag otherwise). The few-shot examples are checked
the same way.

    python tools/check_prerequisite_flip.py [OLD_GIT_REV]   # default: the commit before the flip

Exit status 0 when every answer is identical; the differing questions are printed otherwise.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2c_lib.datasets import load_dataset  # noqa: E402
from t2c_lib.graph.ladybug import LadybugStore  # noqa: E402
from t2c_lib.metrics.equivalence import has_order_by, row_key  # noqa: E402

BEFORE_FLIP = "2592876"
DATASET = Path("data") / "kurikulum"


def export_old(rev: str, target: Path) -> Path:
    """The dataset folder as it was at `rev`, written under `target`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, str(DATASET)], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target / DATASET


def answer(store: LadybugStore, query: str) -> tuple[list[str], object]:
    result = store.query(query, timeout_s=30)
    keys = [row_key(r) for r in result.rows]
    return result.columns, (keys if has_order_by(query) else Counter(keys))


def compare(old_store, new_store, pairs) -> list[str]:
    problems = []
    for label, old_query, new_query in pairs:
        old_cols, old_rows = answer(old_store, old_query)
        new_cols, new_rows = answer(new_store, new_query)
        if old_cols != new_cols or old_rows != new_rows:
            problems.append(f"{label}: answers differ\n  old: {old_query}\n  new: {new_query}")
    return problems


def main(rev: str = BEFORE_FLIP) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        old = load_dataset(export_old(rev, Path(tmp)))
        new = load_dataset(ROOT / DATASET)
        old_store = LadybugStore(old, root=Path(tmp) / "db-old")
        new_store = LadybugStore(new, root=Path(tmp) / "db-new")
        try:
            if len(old.questions) != len(new.questions) or len(old.examples) != len(new.examples):
                print("the old and new versions differ in their number of questions or examples")
                return 1
            questions = [(q.id, o.cypher, q.cypher) for o, q in zip(old.questions, new.questions)]
            examples = [
                (f"example {i}", o.cypher, e.cypher) for i, (o, e) in enumerate(zip(old.examples, new.examples), 1)
            ]
            changed = sum(1 for _, o, n in questions + examples if o != n)
            problems = compare(old_store, new_store, questions + examples)
            rows = sum(len(new_store.query(n).rows) for _, _, n in questions)
        finally:
            old_store.close()
            new_store.close()
    print(
        f"{len(questions)} gold queries and {len(examples)} examples ({changed} rewritten), {rows} answer rows: "
        f"{'all identical' if not problems else f'{len(problems)} differ'}"
    )
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:2]))
