"""Benchmark the agentic loop on a whole dataset: validity before and after refinement, and where the time goes.

    PYTHONPATH=. python benchmarks/agent_loop.py                       # kurikulum, local model, Zero-Shot_Full
    PYTHONPATH=. python benchmarks/agent_loop.py --config Few-Shot_Full --limit 10 --out /tmp/attempts.jsonl

Prints the first-attempt valid rate, the final valid rate (valid = every validator
passed: read-only, parses, schema, properties, runs, non-empty), the same for KG-validity
(guard/syntax/schema/properties only), the mean number of iterations, the first
attempt's error types, and the median time per attempt spent in validation and in the
model. Model times are those of the original calls (a cached response keeps its
latency); pass --no-cache to time the model now. The local model is Gemma 3 270M, a
small base model: it exists so everything runs offline, not to reproduce the thesis's
accuracy.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="kurikulum")
    parser.add_argument("--store", default="ladybug")
    parser.add_argument("--config", default="Zero-Shot_Full")
    parser.add_argument("--model", default="local")
    parser.add_argument("--max-iterations", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128, help="per completion (a kurikulum query needs < 100)")
    parser.add_argument("--timeout", type=float, default=10.0, help="query time limit in seconds")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--refresh", action="store_true")
    parser.add_argument("--out", type=Path, help="append every attempt to this JSONL file")
    args = parser.parse_args(argv)

    from t2c_lib.agent import AgentLoop
    from t2c_lib.datasets import load_dataset
    from t2c_lib.feedback import FeedbackBuilder
    from t2c_lib.graph import open_store
    from t2c_lib.llm.factory import make_cached_model
    from t2c_lib.prompts import Configuration, PromptBuilder
    from t2c_lib.validation import build_chain, make_context

    dataset = load_dataset(args.dataset)
    store = open_store(args.store, dataset)
    ctx = make_context(store, timeout_s=args.timeout)
    config = Configuration.from_name(args.config)
    prompts = PromptBuilder(config, ctx.schema.render(config.schema_format), dataset.language, dataset.examples)
    model = make_cached_model(args.model, no_cache=args.no_cache, refresh=args.refresh)
    out = args.out.open("a", encoding="utf-8") if args.out else None

    def record(attempt) -> None:
        if out is not None:
            out.write(json.dumps(attempt.to_dict(), ensure_ascii=False) + "\n")
            out.flush()

    loop = AgentLoop(
        model,
        build_chain(store),
        ctx,
        prompts,
        FeedbackBuilder(ctx.schema, dataset.language, args.timeout),
        max_iterations=args.max_iterations,
        max_tokens=args.max_tokens,
        on_attempt=record,
    )
    questions = dataset.questions[: args.limit] if args.limit else dataset.questions
    states = []
    started = time.perf_counter()
    for n, item in enumerate(questions, 1):
        state = loop.run(item.question, item.id)
        states.append(state)
        first = state.attempts[0]
        print(
            f"[{n:>2}/{len(questions)}] {item.id} iterations={state.iterations} "
            f"first={'ok' if first.ok else first.error_type.value} final={'ok' if state.success else state.error_type.value}",
            file=sys.stderr,
            flush=True,
        )
    wall = time.perf_counter() - started
    store.close()
    if out is not None:
        out.close()

    attempts = [a for s in states for a in s.attempts]
    n = len(states)
    first_errors = collections.Counter(
        s.attempts[0].error_type.value if s.attempts[0].error_type else "OK" for s in states
    )
    final_errors = collections.Counter(s.error_type.value if s.error_type else "OK" for s in states)
    print(
        f"dataset {dataset.name} ({n} questions), {config.name}, model {loop.model.model_id}, "
        f"store {args.store}, max_iterations {args.max_iterations}, max_tokens {args.max_tokens}"
    )
    print(f"first-attempt valid rate   {sum(s.attempts[0].ok for s in states) / n:6.1%}")
    print(f"final valid rate           {sum(s.success for s in states) / n:6.1%}")
    print(f"first-attempt KG-valid     {sum(s.attempts[0].kg_valid for s in states) / n:6.1%}")
    print(f"final KG-valid             {sum(s.kg_valid for s in states) / n:6.1%}")
    print(f"mean iterations            {statistics.mean(s.iterations for s in states):6.2f}")
    print(f"attempts                   {len(attempts)} ({sum(a.cached for a in attempts)} served from the cache)")
    print(f"median validation / attempt {statistics.median(a.validation_s for a in attempts) * 1000:8.1f} ms")
    print(f"median model / attempt      {statistics.median(a.model_latency_s for a in attempts) * 1000:8.1f} ms")
    print(
        f"mean tokens / attempt       {statistics.mean(a.prompt_tokens for a in attempts):.0f} prompt + "
        f"{statistics.mean(a.completion_tokens for a in attempts):.0f} completion"
    )
    print("first-attempt outcome      " + ", ".join(f"{k} {v}" for k, v in first_errors.most_common()))
    print("final outcome              " + ", ".join(f"{k} {v}" for k, v in final_errors.most_common()))
    print(f"wall time                  {wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
