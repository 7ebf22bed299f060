"""Speed of a packaged local model on the study's prompts, for the three schema formats.

For each format the prompt is what the study sends (the prompt builder's messages with
the schema text the embedded store renders). Reported: prompt tokens (and the shared
prefix), cold prefill rate (empty KV cache), median end-to-end latency of a question
when the prefix is cached, decode rate, and completion tokens.

Usage: python benchmarks/llm_local.py [--model local] [--dataset kurikulum] [--prompt-type Few-Shot]
                                      [--questions 6] [--max-tokens 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time

from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.llm.local import LocalModel, shared_llama
from t2c_lib.llm.parse import parse_response
from t2c_lib.prompts import Configuration, PromptBuilder
from t2c_lib.schema import SchemaFormat


def _reset(model: LocalModel) -> None:
    llama, lock = shared_llama(model.settings)
    with lock:
        llama.reset()


def bench_format(model: LocalModel, builder: PromptBuilder, questions: list[str], max_tokens: int) -> dict:
    """Numbers for one schema format."""
    first = builder.initial(questions[0])
    prefix_ids, suffix_ids = model.prompt_ids(first)
    prompt_tokens = len(prefix_ids) + len(suffix_ids)
    prefix_tokens = len(prefix_ids)

    _reset(model)
    cold_prefill = model.complete(first, max_tokens=1)  # whole prompt evaluated, one token sampled
    _reset(model)
    cold_full = model.complete(first, max_tokens=max_tokens)

    latencies, completion_tokens, decode_rates, parsed = [], [], [], 0
    for question in questions:
        messages = builder.initial(question)
        one = model.complete(messages, max_tokens=1)  # prefix cached: suffix eval + 1 token
        full = model.complete(messages, max_tokens=max_tokens)
        latencies.append(full.latency_s)
        completion_tokens.append(full.usage.completion_tokens)
        if full.usage.completion_tokens > 1 and full.latency_s > one.latency_s:
            decode_rates.append((full.usage.completion_tokens - 1) / (full.latency_s - one.latency_s))
        parsed += bool(parse_response(full.text).query)
    warm_first = latencies[0]
    return {
        "prompt_tokens": prompt_tokens,
        "prefix_tokens": prefix_tokens,
        "cold_prefill_s": round(cold_prefill.latency_s, 3),
        "prefill_tok_per_s": round(prompt_tokens / cold_prefill.latency_s, 1),
        "cold_latency_s": round(cold_full.latency_s, 3),
        "warm_latency_s_first_question": round(warm_first, 3),
        "median_latency_s": round(statistics.median(latencies), 3),
        "median_completion_tokens": statistics.median(completion_tokens),
        "decode_tok_per_s": round(statistics.median(decode_rates), 1) if decode_rates else None,
        "end_to_end_tok_per_s": round(sum(completion_tokens) / sum(latencies), 1),
        "parsed_queries": f"{parsed}/{len(questions)}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="a packaged model (local, local/gemma-3-270m, ...)")
    parser.add_argument("--dataset", default="kurikulum")
    parser.add_argument("--prompt-type", default="Few-Shot", choices=["Zero-Shot", "Few-Shot", "CoT"])
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args()

    dataset = load_dataset(args.dataset)
    with tempfile.TemporaryDirectory() as root:
        store = LadybugStore(dataset, root=root)
        schema = store.schema()
        store.close()
    questions = [item.question for item in dataset.questions[: args.questions]]

    model = LocalModel(args.model)
    t0 = time.perf_counter()
    model.load()
    load_s = time.perf_counter() - t0
    import llama_cpp

    sizes = {}  # prompt tokens of every configuration, first attempt and a refinement: what n_ctx must hold
    for prompt_type in ("Zero-Shot", "Few-Shot", "CoT"):
        for fmt in SchemaFormat:
            config = Configuration.from_name(f"{prompt_type}_{fmt.config_label}")
            builder = PromptBuilder(config, schema.render(fmt), dataset.language, dataset.examples)
            longest = max(dataset.questions, key=lambda item: len(item.question))
            refine = builder.refinement(longest.question, longest.cypher, "Label `Course` tidak ada di skema. " * 8)
            sizes[config.name] = (model.prompt_tokens(builder.initial(longest.question)), model.prompt_tokens(refine))

    rows = {}
    for fmt in SchemaFormat:
        config = Configuration.from_name(f"{args.prompt_type}_{fmt.config_label}")
        builder = PromptBuilder(config, schema.render(fmt), dataset.language, dataset.examples)
        rows[config.name] = bench_format(model, builder, questions, args.max_tokens)

    load1, load5, _ = os.getloadavg()
    context = {
        "model": model.model_id,
        "n_ctx": model.n_ctx,
        "threads": model.n_threads,
        "llama_cpp_python": llama_cpp.__version__,
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "load_s": round(load_s, 2),
        "loadavg_1m_at_end": round(load1, 2),
        "loadavg_5m_at_end": round(load5, 2),
        "dataset": dataset.name,
        "questions": len(questions),
        "max_tokens": args.max_tokens,
    }
    print(" ".join(f"{k}={v}" for k, v in context.items()))
    keys = [
        "prompt_tokens",
        "prefix_tokens",
        "prefill_tok_per_s",
        "cold_latency_s",
        "median_latency_s",
        "median_completion_tokens",
        "decode_tok_per_s",
        "end_to_end_tok_per_s",
        "parsed_queries",
    ]
    print("| configuration | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(str(row[k]) for k in keys) + " |")
    print()
    print("| configuration | first prompt tokens (longest question) | refinement prompt tokens |")
    print("|---|---|---|")
    for name, (first, refine) in sizes.items():
        print(f"| {name} | {first} | {refine} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"context": context, "results": rows, "prompt_sizes": sizes}, fh, indent=2)


if __name__ == "__main__":
    main()
