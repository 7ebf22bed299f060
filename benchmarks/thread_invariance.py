"""Does a packaged model's output depend on its thread count? Same prompts, 1..N threads, compared.

For each packaged model and thread count the study's first-attempt prompts (Few-Shot and
Zero-Shot, every whole-schema format, the first questions of the dataset) are completed
greedily; the texts and the logits of the first generated position are compared with
the first thread count's run. `make all` sets T2C_LOCAL_THREADS from the core count and
the response cache key leaves threads out, so this must print `identical` for every
model for cached results to be the same whatever the machine.

Usage: python benchmarks/thread_invariance.py [--models local,local/qwen2.5-coder-0.5b,local/gemma-3-270m]
                                              [--threads 1,2] [--questions 4] [--max-tokens 48]
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np

from t2c_lib.datasets import load_dataset
from t2c_lib.graph.ladybug import LadybugStore
from t2c_lib.llm.local import LocalModel, shared_llama
from t2c_lib.llm.registry import PACKAGED_MODELS
from t2c_lib.prompts import Configuration, PromptBuilder
from t2c_lib.schema import SchemaFormat


def first_logits(model: LocalModel, messages: list) -> np.ndarray:
    """Logits after the whole prompt, evaluated from an empty KV cache."""
    llama, lock = shared_llama(model.settings)
    prefix_ids, suffix_ids = model.prompt_ids(messages)
    with lock:
        llama.reset()
        llama.eval(prefix_ids + suffix_ids)
        return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).copy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(PACKAGED_MODELS), help="packaged models, comma-separated")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--dataset", default="kurikulum")
    args = parser.parse_args()
    counts = [int(t) for t in args.threads.split(",")]

    dataset = load_dataset(args.dataset)
    with tempfile.TemporaryDirectory() as root:
        store = LadybugStore(dataset, root=root)
        schema = store.schema()
        store.close()
    prompts = []
    for prompt_type in ("Few-Shot", "Zero-Shot"):
        for fmt in (f for f in SchemaFormat if not f.per_question):
            config = Configuration.from_name(f"{prompt_type}_{fmt.config_label}")
            builder = PromptBuilder(config, schema.render(fmt), dataset.language, dataset.examples)
            prompts += [builder.initial(item.question) for item in dataset.questions[: args.questions]]

    for name in args.models.split(","):
        runs = {}
        for n in counts:
            model = LocalModel(name, n_threads=n)
            texts = [model.complete(m, max_tokens=args.max_tokens).text for m in prompts]
            logits = [first_logits(model, m) for m in prompts[:: max(1, args.questions)]]
            runs[n] = (texts, logits)
        base_texts, base_logits = runs[counts[0]]
        for n in counts[1:]:
            texts, logits = runs[n]
            same = sum(a == b for a, b in zip(base_texts, texts))
            diff = max(float(np.max(np.abs(a - b))) for a, b in zip(base_logits, logits))
            verdict = "identical" if same == len(texts) and diff == 0.0 else "DIFFERENT"
            print(
                f"{model.model_id}: threads {counts[0]} vs {n}: {same}/{len(texts)} texts equal, "
                f"max |logit diff| {diff:.3g} -> {verdict}",
                flush=True,
            )


if __name__ == "__main__":
    main()
