"""Schema recall and prompt size of the `retrieved` schema format, per dataset and ranking.

For every gold question: the retrieved sub-schema, the share of the labels, relationship
types and properties its gold query uses that the sub-schema shows (schema recall), and
the schema text's tokens (the default packaged model's tokenizer) next to the three whole formats.

With `--screened`, only the pairs that pass a run's gold screen (the questions a study asks).

Usage: python benchmarks/linking_recall.py [dataset ...] [--k K] [--rankings embedding,lexical,hybrid] [--screened]
"""

from __future__ import annotations

import argparse
import statistics
import time

from t2c_lib.datasets import load_dataset
from t2c_lib.graph import open_store
from t2c_lib.linking import LinkingSettings, Ranking, SchemaRetriever, ValueIndex, store_loader
from t2c_lib.metrics.schema_recall import schema_recall, used_elements
from t2c_lib.schema import SchemaFormat


def token_counter():
    """Tokens of a text under the packaged local model's tokenizer (vocabulary only, no weights run)."""
    from llama_cpp import Llama

    from t2c_lib.llm.local import model_path

    llama = Llama(str(model_path()), vocab_only=True, verbose=False)
    return lambda text: len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("datasets", nargs="*", default=["kurikulum", "movies"])
    parser.add_argument("--k", type=int, default=None)
    parser.add_argument("--rel-k", type=int, default=None)
    parser.add_argument("--induce", action="store_true", help="add every pattern between kept labels")
    parser.add_argument("--rankings", default="embedding,lexical,hybrid")
    parser.add_argument("--descriptions", action="store_true", help="render descriptions in every format")
    parser.add_argument("--no-values", action="store_true", help="no value links")
    parser.add_argument("--lexical-weight", type=float, default=None, help="BM25's weight in hybrid ranking")
    parser.add_argument("--out", default=None, help="also write one CSV row per question and ranking here")
    parser.add_argument("--screened", action="store_true", help="only the pairs that pass the run's gold screen")
    args = parser.parse_args()
    count = token_counter()
    rows: list[list[object]] = []
    for name in args.datasets:
        dataset = load_dataset(name)
        store = open_store("ladybug", dataset)
        if args.screened:
            import dataclasses

            from t2c_lib.study.steps import screened_gold

            dataset = dataclasses.replace(dataset, questions=list(screened_gold(dataset, store, 10.0).kept))
        schema = store.schema().described(dataset.schema_spec.descriptions)
        whole = {
            fmt.value: count(schema.render(fmt, args.descriptions)) for fmt in SchemaFormat if not fmt.per_question
        }
        print(
            f"\n== {name}: {len(dataset.questions)} gold questions; schema tokens "
            + ", ".join(f"{k} {v}" for k, v in whole.items())
            + (" (with descriptions)" if args.descriptions else "")
        )
        values = ValueIndex(schema, store_loader(store))
        for ranking in args.rankings.split(","):
            settings = LinkingSettings(
                ranking=Ranking(ranking),
                value_hints=not args.no_values,
                induce=args.induce,
                **({"k": args.k} if args.k else {}),
                **({"lexical_weight": args.lexical_weight} if args.lexical_weight is not None else {}),
                **({"rel_k": args.rel_k} if args.rel_k is not None else {}),
            )
            started = time.perf_counter()
            retriever = SchemaRetriever(schema, values=values, settings=settings)
            recalls, tokens, misses = [], [], {}
            for item in dataset.questions:
                got = retriever.retrieve(item.question)
                recall = schema_recall(item.cypher, got.names())
                recalls.append(recall)
                tokens.append(count(got.render(args.descriptions, dataset.language)))
                rows.append(
                    [
                        name,
                        settings.signature(),
                        item.id,
                        f"{recall:.4f}",
                        tokens[-1],
                        " ".join(sorted(used_elements(item.cypher) - got.names())),
                    ]
                )
                if recall < 1:
                    for miss in used_elements(item.cypher) - got.names():
                        misses[miss] = misses.get(miss, 0) + 1
            elapsed = time.perf_counter() - started
            full = whole["full_schema"]
            print(
                f"{settings.signature():<40} recall mean {statistics.mean(recalls):.3f}, "
                f"complete {sum(r == 1 for r in recalls) / len(recalls):.3f}; tokens mean {statistics.mean(tokens):.1f} "
                f"(max {max(tokens)}) = {statistics.mean(tokens) / full:.2f} of full_schema; {elapsed:.1f} s"
            )
            top = sorted(misses.items(), key=lambda kv: -kv[1])[:6]
            if top:
                print("   most missed: " + ", ".join(f"{k} {v}" for k, v in top))
            if ranking == args.rankings.split(",")[0]:
                texts = {
                    item.question: got_text
                    for item, got_text in zip(
                        dataset.questions,
                        (
                            retriever.retrieve(i.question).render(args.descriptions, dataset.language)
                            for i in dataset.questions
                        ),
                    )
                }
                prompt_tokens(dataset, schema, texts, args.descriptions, count)
        store.close()
    if args.out:
        import csv

        with open(args.out, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(["dataset", "settings", "question_id", "schema_recall", "schema_tokens", "missing"])
            writer.writerows(rows)


def prompt_tokens(dataset, schema, retrieved_texts, descriptions, count) -> None:
    """Mean tokens of the first request (system + examples + question) per configuration."""
    from t2c_lib.prompts import PromptBuilder, all_configurations

    rows = []
    for config in all_configurations(with_retrieved=True):
        if config.schema_format.per_question:
            source = retrieved_texts.__getitem__
        else:
            source = schema.render(config.schema_format, descriptions)
        builder = PromptBuilder(config, source, dataset.language, dataset.examples)
        sizes = [sum(count(m.content) for m in builder.initial(item.question)) for item in dataset.questions]
        rows.append((config.name, statistics.mean(sizes)))
    print("   prompt tokens (first request, mean): " + ", ".join(f"{n} {v:.0f}" for n, v in rows))


if __name__ == "__main__":
    main()
