"""Decode and prefill speed of a packaged model by thread count, alone and beside a busy process.

llama.cpp's threads meet at a barrier after every operation of a step; when another
process holds a core one of them needs, the step waits for the scheduler and decode
speed can collapse. For each thread count this measures decode tokens/s (one token
evaluated at a time after a short prompt, the cost of generating) and prefill tokens/s
(a study-sized prompt of about 700 tokens evaluated from an empty cache, what a cold
`t2c ask` pays first) with no competitor, then with `--competitors` processes spinning on
a core each (`python -c 'while True: pass'`). `T2C_LOCAL_THREADS`' default (`t2c_lib.llm.local.default_threads`) is chosen
from these numbers; docs/models.md, "Threads", has them.

Usage: python benchmarks/threads_contention.py [--model local] [--threads 1,2] [--tokens 48]
                                               [--repeats 3] [--competitors 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

from t2c_lib.llm.base import Message
from t2c_lib.llm.local import LocalModel, shared_llama

PROMPT = [Message("system", "You write Cypher."), Message("user", "List every course with its credits.")]


def decode_rate(model: LocalModel, tokens: int) -> float:
    """Tokens per second of single-token evaluation after the prompt (cache reset first)."""
    llama, lock = shared_llama(model.settings)
    prompt = model.render(PROMPT)
    ids = llama.tokenize(prompt.text.encode("utf-8"), add_bos=False, special=True)
    filler = llama.tokenize(b" MATCH (m:MK) RETURN m.nama, m.sks ORDER BY m.nama" * 8, add_bos=False, special=False)
    with lock:
        llama.reset()
        llama.eval(ids)
        t0 = time.perf_counter()
        for token in filler[:tokens]:
            llama.eval([token])
        return min(tokens, len(filler)) / (time.perf_counter() - t0)


def prefill_rate(model: LocalModel, tokens: int = 700) -> float:
    """Tokens per second of evaluating a prompt of `tokens` tokens from an empty KV cache."""
    llama, lock = shared_llama(model.settings)
    text = " ".join(f"(:MK)-[:PREREQUISITE]->(:MK {{nama: 'Mata kuliah {i}'}})" for i in range(400))
    ids = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)[:tokens]
    with lock:
        llama.reset()
        t0 = time.perf_counter()
        llama.eval(ids)
        return len(ids) / (time.perf_counter() - t0)


def measure(model: LocalModel, tokens: int, repeats: int) -> tuple[float, float]:
    decode_rate(model, 8)  # warm-up
    decode = statistics.median(decode_rate(model, tokens) for _ in range(repeats))
    prefill = statistics.median(prefill_rate(model) for _ in range(max(1, repeats // 2)))
    return decode, prefill


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--competitors", type=int, default=1)
    args = parser.parse_args()
    counts = [int(t) for t in args.threads.split(",")]
    print(
        f"model={LocalModel(args.model).model_id} cores={os.cpu_count()} machine={platform.machine()} "
        f"loadavg_1m_at_start={os.getloadavg()[0]:.2f}"
    )
    print("| threads | competitors | decode tokens/s (median) | prefill tokens/s (median) |")
    print("| --- | --- | --- | --- |")
    for n in counts:
        model = LocalModel(args.model, n_threads=n).load()
        for competing in (0, args.competitors):
            spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(competing)]
            try:
                time.sleep(0.5 if spinners else 0)
                decode, prefill = measure(model, args.tokens, args.repeats)
            finally:
                for proc in spinners:
                    proc.kill()
                    proc.wait()
            print(f"| {n} | {competing} | {decode:.1f} | {prefill:.0f} |", flush=True)
    print(f"loadavg_1m_at_end={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
