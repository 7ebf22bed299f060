"""The `feedback` loop's options side by side on a development question set (never the reported gold questions).

For each option set the loop answers every question of `--questions` (a CSV with the ground
truth's columns: `Pertanyaan`/`question` and `Cypher Query`/`cypher`) in one configuration, and
this prints, per option set:

- repeat rate: refinements (model calls after a question's first, rejected repeats included)
  whose query equals an earlier failed query of the question (`metrics.agentic`); beside it the
  accepted refinements (the repeat guard's rejected calls left out) that repeat;
- chain-invalid first attempts made valid: questions whose first attempt failed the validator
  chain and whose final answer passes it;
- Pass@1: the final answer's result equals the gold query's (the `t2c` preset's rules:
  `get_scoring("t2c").pass_at_1`, row order only when the gold has ORDER BY);
- LLM calls: all model calls, and per question.

Every option set starts from the same first request, so with the response cache on the first
attempts are asked once. This is a development tool: run it on the dev set, choose there,
freeze the choice, then run the study on the test set.

Usage:
  python benchmarks/loop_dev.py --questions data/kurikulum/dev/questions.csv \\
      [--config Few-Shot_Full] [--model local] [--limit 10] \\
      [--options thesis,conversation,guard,corrector,all] [--option 'mine:repair_turns=conversation;corrector=schema'] \\
      [--json out.json] [--attempts attempts.jsonl]

`--attempts` also writes every attempt of every option set (one JSON line each: the option set, the
question id, the attempt's record as `attempts.jsonl` has it), to read what the loop did on the
development questions, e.g. which syntax errors the first attempts make.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Any

from t2c_lib.agent.build import build_loop, build_parts
from t2c_lib.agent.options import LoopOptions
from t2c_lib.agent.strategies import get_strategy
from t2c_lib.cli.common import open_dataset_store
from t2c_lib.llm.factory import make_cached_model
from t2c_lib.metrics.agentic import agentic_metrics
from t2c_lib.metrics.scores import run_pair
from t2c_lib.metrics.scoring import get_scoring
from t2c_lib.prompts import Configuration

NAMED: dict[str, dict[str, Any]] = {
    "thesis": {},
    "conversation": {"repair_turns": "conversation"},
    "guard": {"repeat_guard": True},
    "corrector": {"corrector": "schema"},
    "all": {"repair_turns": "conversation", "repeat_guard": True, "corrector": "schema"},
    "fresh": {"repair_turns": "fresh"},
    "fresh+corrector": {"repair_turns": "fresh", "corrector": "schema"},
    "fresh+guard": {"repair_turns": "fresh", "repeat_guard": True},
    "fresh+all": {"repair_turns": "fresh", "repeat_guard": True, "corrector": "schema"},
}
"""Option sets by name; `thesis` is the loop with every option off (the baseline)."""


def read_questions(path: Path) -> list[tuple[str, str, str]]:
    """(id, question, gold cypher) per row of a ground-truth CSV."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for i, row in enumerate(rows, start=1):
        question = row.get("Pertanyaan") or row.get("question") or ""
        gold = row.get("Cypher Query") or row.get("cypher") or ""
        if question.strip() and gold.strip():
            out.append((row.get("id") or f"dev-{i:03d}", question.strip(), gold.strip()))
    return out


def parse_option(spec: str) -> tuple[str, dict[str, Any]]:
    """`name:key=value;key=value` -> (name, options); values true/false and integers read as such."""
    name, _, body = spec.partition(":")
    values: dict[str, Any] = {}
    for item in filter(None, body.split(";")):
        key, _, raw = item.partition("=")
        value: Any = {"true": True, "false": False}.get(raw.strip().lower(), raw.strip())
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        values[key.strip()] = value
    LoopOptions.from_values(values)  # checked before any model call
    return name, values


def measure(
    name: str, values: dict[str, Any], questions, args, store, dataset, model, sink: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """One option set over every question: the loop's records, then the four numbers (`sink` gains every attempt)."""
    parts = build_parts(store, dataset, Configuration.from_name(args.config), timeout_s=args.timeout)
    options = LoopOptions.from_values(values)
    attempts, passed, made_valid, first_invalid, calls = [], 0, 0, 0, 0
    started = time.perf_counter()
    for qid, question, gold in questions:
        loop = build_loop(
            model,
            parts,
            max_iterations=args.max_iterations,
            refine_temperature=args.refine_temperature,
            max_tokens=args.max_tokens,
            strategy=get_strategy("feedback", options=options),
        )
        state = loop.run(question, qid)
        attempts += state.attempts
        if sink is not None:
            sink.extend({"option_set": name, **a.to_dict()} for a in state.attempts)
        calls += state.llm_calls
        if not state.attempts[0].ok:
            first_invalid += 1
            made_valid += int(state.success)
        pair = run_pair(gold, state.final_query or None, store, timeout_s=args.timeout)
        passed += int(get_scoring("t2c").pass_at_1(gold, pair.gold.result, pair.generated.result, state.final_query))
    metrics = agentic_metrics(attempts, max_iterations=args.max_iterations)
    n = len(questions)
    return {
        "option_set": name,
        "options": options.changed(),
        "questions": n,
        "refinements": metrics.n_refinements,
        "repeated_refinements": metrics.n_repeated_refinements,
        "repeat_rate": metrics.refinement_repeat_rate,
        "accepted_refinements": metrics.n_accepted_refinements,
        "accepted_repeats": metrics.n_accepted_repeats,
        "first_attempts_chain_invalid": first_invalid,
        "made_valid": made_valid,
        "pass_at_1": passed / n if n else None,
        "llm_calls": calls,
        "llm_calls_per_question": calls / n if n else None,
        "wall_s": round(time.perf_counter() - started, 1),
    }


def line(row: dict[str, Any]) -> str:
    rate = "n/a" if row["repeat_rate"] is None else f"{row['repeat_rate']:.0%}"
    return (
        f"{row['option_set']:<14} repeat {row['repeated_refinements']}/{row['refinements']} ({rate}; "
        f"accepted {row['accepted_repeats']}/{row['accepted_refinements']}); "
        f"invalid first made valid {row['made_valid']}/{row['first_attempts_chain_invalid']}; "
        f"Pass@1 {row['pass_at_1']:.3f}; LLM calls {row['llm_calls']} ({row['llm_calls_per_question']:.2f}/question); "
        f"{row['wall_s']} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, required=True, help="dev ground-truth CSV")
    parser.add_argument("--dataset", default="kurikulum", help="the dataset whose store answers (default kurikulum)")
    parser.add_argument("--config", default="Few-Shot_Full", help="configuration, e.g. Few-Shot_Full, CoT_Full")
    parser.add_argument("--model", default=None, help="model spec as t2c ask takes it (default: local)")
    parser.add_argument("--options", default="thesis,conversation,guard,corrector,all", help="named option sets")
    parser.add_argument("--option", action="append", default=[], help="extra set: 'name:key=value;key=value'")
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--max-iterations", type=int, default=3)
    parser.add_argument("--refine-temperature", type=float, default=0.1)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    parser.add_argument("--attempts", type=Path, default=None, help="also write every attempt as JSON lines")
    args = parser.parse_args(argv)

    sets = [(n, NAMED[n]) for n in filter(None, args.options.split(",")) if n in NAMED]
    unknown = [n for n in filter(None, args.options.split(",")) if n not in NAMED]
    if unknown:
        parser.error(f"unknown option set(s) {', '.join(unknown)} (named: {', '.join(NAMED)}; or use --option)")
    sets += [parse_option(spec) for spec in args.option]
    questions = read_questions(args.questions)[: args.limit]
    if not questions:
        parser.error(f"{args.questions}: no questions with a gold query")
    dataset, store = open_dataset_store(args.dataset, "ladybug")
    model = make_cached_model(args.model)
    rows: list[dict[str, Any]] = []
    sink: list[dict[str, Any]] | None = [] if args.attempts else None
    try:
        print(f"{len(questions)} questions from {args.questions}, {args.config}, model {model.model_id}")
        for name, values in sets:
            row = measure(name, values, questions, args, store, dataset, model, sink)
            rows.append(row)
            print(line(row), flush=True)
    finally:
        store.close()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.attempts and sink is not None:
        text = "".join(json.dumps(a, ensure_ascii=False, sort_keys=True) + "\n" for a in sink)
        args.attempts.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
