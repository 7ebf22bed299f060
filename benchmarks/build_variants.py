"""Two llama.cpp builds side by side: tokens/s and greedy replies to a study cell's first-attempt prompts.

Each build is a directory holding a `llama_cpp` package (a `pip install --target` build, or a copy
of a venv's); each runs in its own worker process with that directory first on its path, the
same packaged model, seed and settings as the study. The prompts are the cell's own (default:
the thesis grid's Few-Shot_Full, every screened question, first attempt), built by the study's
code; the workers get prompt i at the same moment and the next prompt only when both have
answered, so load from other work on the machine falls on both alike. Measured per build:
prefill tokens/s (the whole first prompt from an empty KV cache, `--prefill-repeats` times,
median) and generation tokens/s (llama.cpp's own counters over every reply); compared: how
many replies are byte-identical.

Usage: python benchmarks/build_variants.py --build portable=.cache/llama-builds/portable \\
           --build native=.cache/llama-builds/native [--params params/thesis.yaml] \\
           [--config Few-Shot_Full] [--threads 1] [--limit N] [--out benchmarks/results/build_variants.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# --- worker: one build, one model, answers JSON lines on stdin ------------------------------------


def worker(model_name: str, seed: int, threads: int) -> None:
    """Load the model under this process's llama_cpp and answer requests until stdin closes."""
    import llama_cpp

    from t2c_lib.llm.base import Message
    from t2c_lib.llm.build import installed_build
    from t2c_lib.llm.local import LocalModel, shared_llama

    model = LocalModel(model_name, n_threads=threads, seed=seed)
    llama, lock = shared_llama(model.settings)
    build = installed_build()
    _send({"build": build.fingerprint, "id": build.short, "llama_cpp": llama_cpp.__file__, "model": model.model_id})
    for line in sys.stdin:
        request = json.loads(line)
        messages = [Message(role, content) for role, content in request["messages"]]
        if request["op"] == "prefill":
            prefix, suffix = model.prompt_ids(messages)
            with lock:
                llama.reset()
                t0 = time.perf_counter()
                llama.eval(prefix + suffix)
                seconds = time.perf_counter() - t0
                llama.reset()  # the replies start from an empty cache, as in the study
            _send({"tokens": len(prefix) + len(suffix), "seconds": seconds})
        else:
            ctx = llama._ctx.ctx
            llama_cpp.llama_perf_context_reset(ctx)
            out = model.complete(messages, temperature=request["temperature"], max_tokens=request["max_tokens"])
            perf = llama_cpp.llama_perf_context(ctx)
            _send(
                {
                    "text": out.text,
                    "prompt_tokens": out.usage.prompt_tokens,
                    "completion_tokens": out.usage.completion_tokens,
                    "latency_s": out.latency_s,
                    "prompt_eval": [perf.n_p_eval, perf.t_p_eval_ms / 1000],
                    "gen_eval": [perf.n_eval, perf.t_eval_ms / 1000],
                }
            )


def _send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Worker:
    """A worker process for one build directory."""

    def __init__(self, name: str, directory: Path, model: str, seed: int, threads: int) -> None:
        self.name = name
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(directory), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["OMP_NUM_THREADS"] = str(threads)
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", model, str(seed), str(threads)]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.info = self.receive()

    def send(self, request: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.name} ended (exit {self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def in_lockstep(workers: list[Worker], request: dict) -> list[dict]:
    """Send one request to every worker at once; wait for all."""
    for w in workers:
        w.send(request)
    return [w.receive() for w in workers]


# --- the prompts: the study's own --------------------------------------------------------------


def study_prompts(params_file: str, configuration: str, limit: int | None) -> tuple[Any, list[tuple[str, list]]]:
    """The params and (question id, messages) of the cell's first attempts, built as `steps.infer_cell` builds them."""
    from t2c_lib.agent.build import build_parts
    from t2c_lib.linking import settings_from
    from t2c_lib.prompts import Configuration
    from t2c_lib.study.params import load_params
    from t2c_lib.study.steps import open_study

    params = load_params(ROOT / params_file)
    with tempfile.TemporaryDirectory() as results:
        study = open_study(params, Path(results))
        try:
            parts = build_parts(
                study.store,
                study.dataset,
                Configuration.from_name(configuration),
                descriptions=params.schema_descriptions,
                linking=settings_from(params),
                timeout_s=params.query_timeout_s,
            )
            prompts = [(item.id, parts.prompts.initial(item.question)) for item in study.questions]
        finally:
            study.store.close()
    return params, prompts[:limit] if limit else prompts


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="append", required=True, help="NAME=DIR holding a llama_cpp package")
    parser.add_argument("--params", default="params/thesis.yaml")
    parser.add_argument("--config", default="Few-Shot_Full")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per worker")
    parser.add_argument("--limit", type=int, default=None, help="only the first N prompts")
    parser.add_argument("--prefill-repeats", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/build_variants.json")
    args = parser.parse_args()

    import t2c_lib

    builds = dict(spec.split("=", 1) for spec in args.build)
    params, prompts = study_prompts(args.params, args.config, args.limit)
    from t2c_lib.study.manifest import git_commit

    started = time.time()
    load_start = os.getloadavg()
    print(f"{len(prompts)} prompts of {args.config}; builds: {', '.join(builds)}", flush=True)
    workers = [Worker(n, Path(d).resolve(), params.model, params.seed, args.threads) for n, d in builds.items()]
    for w in workers:
        print(f"  {w.name}: {w.info['build']} ({w.info['llama_cpp']})", flush=True)
    try:
        prefill: dict[str, list[float]] = {w.name: [] for w in workers}
        first = [[m.role, m.content] for m in prompts[0][1]]
        for _ in range(args.prefill_repeats):
            for w, r in zip(workers, in_lockstep(workers, {"op": "prefill", "messages": first})):
                prefill[w.name].append(r["tokens"] / r["seconds"])
                prefill_tokens = r["tokens"]
        print("  prefill tok/s: " + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in prefill.items()))
        rows = []
        for i, (qid, messages) in enumerate(prompts, 1):
            request = {
                "op": "complete",
                "messages": [[m.role, m.content] for m in messages],
                "temperature": params.temperature_first,
                "max_tokens": params.max_tokens,
            }
            replies = in_lockstep(workers, request)
            row = {"question_id": qid, "prompt_sha256": _digest(json.dumps(request["messages"]))}
            for w, r in zip(workers, replies):
                row[w.name] = r
            row["identical"] = len({r["text"] for r in replies}) == 1
            rows.append(row)
            print(f"  [{i}/{len(prompts)}] {qid}: {'same' if row['identical'] else 'DIFFERENT'}", flush=True)
    finally:
        for w in workers:
            w.close()

    summary: dict[str, Any] = {}
    for w in workers:
        n_gen = sum(r[w.name]["gen_eval"][0] for r in rows)
        t_gen = sum(r[w.name]["gen_eval"][1] for r in rows)
        n_pp = sum(r[w.name]["prompt_eval"][0] for r in rows)
        t_pp = sum(r[w.name]["prompt_eval"][1] for r in rows)
        summary[w.name] = {
            "build": w.info["build"],
            "build_id": w.info["id"],
            "prefill_tokens_per_s": round(statistics.median(prefill[w.name]), 2),
            "prefill_runs_tokens_per_s": [round(x, 2) for x in prefill[w.name]],
            "generation_tokens_per_s": round(n_gen / t_gen, 2) if t_gen else None,
            "generated_tokens": n_gen,
            "study_prompt_eval_tokens_per_s": round(n_pp / t_pp, 2) if t_pp else None,
            "model_wall_s": round(sum(r[w.name]["latency_s"] for r in rows), 1),
        }
    names = [w.name for w in workers]
    identical = sum(r["identical"] for r in rows)
    result = {
        "what": f"{' vs '.join(names)} llama.cpp builds, side by side: {args.config} first-attempt prompts of {args.params}",
        "date": dt.datetime.fromtimestamp(started, dt.UTC).strftime("%Y-%m-%d"),
        "machine": {
            "cpu": _cpu_model(),
            "cores": os.cpu_count(),
            "loadavg_start": load_start,
            "loadavg_end": os.getloadavg(),
        },
        "schedule": f"{len(workers)} worker processes at once, {args.threads} thread(s) each, prompt by prompt in "
        "lockstep (both get prompt i together; prompt i+1 when both answered)",
        "model": workers[0].info["model"],
        "prompts_built_by": f"t2c_lib at {Path(t2c_lib.__file__).parent} (commit {git_commit(Path(t2c_lib.__file__).parents[1])})",
        "settings": {"temperature": params.temperature_first, "max_tokens": params.max_tokens, "seed": params.seed},
        "prefill_prompt_tokens": prefill_tokens,
        "prompts": len(rows),
        "identical_replies": identical,
        "different_question_ids": [r["question_id"] for r in rows if not r["identical"]],
        "builds": summary,
        "wall_s": round(time.time() - started, 1),
        "replies": [
            {
                "question_id": r["question_id"],
                "prompt_sha256": r["prompt_sha256"],
                "identical": r["identical"],
                **{n: {k: r[n][k] for k in ("text", "completion_tokens")} for n in names},
            }
            for r in rows
        ],
    }
    for i, first in enumerate(names):
        for other in names[i + 1 :]:
            same = sum(r[first]["text"] == r[other]["text"] for r in rows)
            result.setdefault("identical_pairs", {})[f"{first}={other}"] = same
    a = summary[names[0]]
    for other in names[1:]:
        b = summary[other]
        for key in ("prefill_tokens_per_s", "generation_tokens_per_s"):
            if a[key] and b[key]:
                result[f"{key}_ratio_{other}_over_{names[0]}"] = round(b[key] / a[key], 3)
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "replies"}, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
