"""Constrained decoding speed: llama-cpp-python's whole-vocabulary grammar sampling vs t2c's `GrammarMask`.

For a few study prompts (first attempts, greedy), both ways generate the reply under the
schema grammar; reported: seconds and completion tokens of each, tokens per second,
and whether the texts are equal (they must be: the mask is exact at temperature 0).
Prefix caching is the same for both (the prompt is evaluated before the timed call).

Usage: python benchmarks/grammar_mask.py [--configs Few-Shot_Full,Zero-Shot_Nodes+Paths] [--questions 3]
                                         [--max-tokens 96] [--threads 2] [--model local]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from llama_cpp import LlamaGrammar

from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.llm import local
from t2c_lib.llm.grammar import cypher_grammar
from t2c_lib.prompts import Configuration, PromptBuilder


def whole_vocabulary(model: local.LocalModel, grammar: str, messages, max_tokens: int) -> str:
    """The reply with llama-cpp-python's own grammar sampler (every token of the vocabulary checked each step)."""
    llama, lock = local.shared_llama(model.settings)
    prefix_ids, suffix_ids = model.prompt_ids(messages)
    base = not model.spec.instruct
    with lock:
        tokens = prefix_ids + suffix_ids
        local._evaluate(llama, prefix_ids, suffix_ids)
        out = llama.create_completion(
            tokens,
            max_tokens=max_tokens,
            temperature=0.0,
            top_p=1.0,
            top_k=0,
            min_p=0.0,
            repeat_penalty=1.0,
            stop=list(local.STOP_SEQUENCES) if base else [],
            seed=model.seed,
            logits_processor=local._answer_on_same_line(llama, len(tokens)) if base else None,
            stopping_criteria=local._answer_complete(llama, len(tokens)),
            grammar=LlamaGrammar.from_string(grammar, verbose=False),
        )
    return out["choices"][0]["text"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="Few-Shot_Full,Zero-Shot_Nodes+Paths")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default="local", help="a packaged model (local, local/gemma-3-270m, ...)")
    args = parser.parse_args()

    dataset = load_dataset("kurikulum")
    with tempfile.TemporaryDirectory() as root, LadybugStore(dataset, root=root) as store:
        schema = store.schema()
    grammar = cypher_grammar(schema)
    model = local.LocalModel(args.model, grammar=grammar, n_threads=args.threads).load()
    print("| configuration | question | whole vocabulary s | mask s | tokens | mask tokens/s | equal |")
    print("|---|---|---|---|---|---|---|")
    totals = [0.0, 0.0]
    for name in args.configs.split(","):
        config = Configuration.from_name(name)
        builder = PromptBuilder(config, schema.render(config.schema_format), dataset.language, dataset.examples)
        for item in dataset.questions[: args.questions]:
            messages = builder.initial(item.question)
            model.complete(messages, max_tokens=1)  # the prompt into the KV cache for both timed calls
            t0 = time.perf_counter()
            theirs = whole_vocabulary(model, grammar, messages, args.max_tokens)
            t1 = time.perf_counter()
            ours = model.complete(messages, max_tokens=args.max_tokens)
            t2 = time.perf_counter()
            totals[0] += t1 - t0
            totals[1] += t2 - t1
            tokens = ours.usage.completion_tokens
            print(
                f"| {name} | {item.id} | {t1 - t0:.2f} | {t2 - t1:.2f} | {tokens} | {tokens / (t2 - t1):.1f} | {ours.text == theirs} |"
            )
    print(f"\ntotal: whole vocabulary {totals[0]:.1f} s, mask {totals[1]:.1f} s ({totals[0] / totals[1]:.1f}x)")


if __name__ == "__main__":
    main()
