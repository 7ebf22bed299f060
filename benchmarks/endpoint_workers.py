"""The endpoint path at scale: the thesis grid through `t2c run` with 1, 4, 16 workers against a loopback endpoint.

What answers: `tests/helpers/replay_server.py`'s `ReplayServer`, an OpenAI-compatible HTTP
server on 127.0.0.1 that answers every request from a **recording** after a fixed latency
(`--latency`, 1 s by default), each request on its own thread. The recording holds no model
output: it was made once (`--record`, or automatically when the file is missing) by
answering the grid's requests with the dataset's own gold queries by a fixed rule (per
configuration and question, chosen by a hash: the gold query at once for half, after one or
two fixed wrong queries (an unknown label, an empty filter) for 8 in 20, never for 2 in 20),
so feedback cells take one to three calls per question and single-pass cells differ from
them. A request the recording lacks is answered HTTP 400 and stops the run.

What runs: the real thing, unchanged. `params/thesis.yaml` (9 configurations x
single-pass/feedback, all 52 questions, LadybugDB, the full validator chain) with the
model set to the endpoint's and `workers` set per setting, through `python -m t2c_lib.cli run`
in a child process, each setting with a fresh response cache (the built store and the gold
screen are copied in warm, so every setting starts the same).

What it reports:

- **speed**: wall per worker count, speed-up against 1 worker and as a share of the ideal
  (the worker count); the floor `calls x latency / workers` beside it;
- **identity**: every cell's `questions.jsonl` and `attempts.jsonl`, timing fields removed and
  sorted by question, equal across worker counts;
- **rpm**: the feedback cells of one prompt type with `requests_per_minute` set, 16 workers;
  the most requests the server saw in any 60 s window (must not exceed the limit);
- **resume**: a 16-worker run killed with SIGKILL (its process group) when the server has
  seen about half the grid's requests, then run again: it must finish, and its results must
  equal the uninterrupted run's (`cached` set aside: a question killed mid-way is redone from
  the response cache, as the runner promises).

Settings and checks land in `<work>/report.json`, merged across invocations, so the long
1-worker setting can run on its own: `--workers 16,4 --checks speed,identity` now,
`--workers 1 --checks speed,identity` later.

Measured numbers: docs/endpoints.md, "An endpoint at scale" (goal: at 16 workers at least 90% of the
ideal speed-up, results identical to 1 worker). The 1-worker setting is mostly sleeping (about
15 minutes at 1 s per reply); the others take one to four minutes, the rpm check about 95 s.

Usage: python benchmarks/endpoint_workers.py [--workers 1,4,16] [--latency 1.0]
           [--checks speed,identity,rpm,resume] [--rpm 180] [--work DIR] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from t2c_lib.datasets import load_dataset  # noqa: E402
from tests.helpers.replay_server import GoldRule, Recording, RecordingRule, ReplayServer  # noqa: E402
from tests.helpers.run_results import differences, max_in_window, run_results  # noqa: E402

MODEL = "recorded-replies"
THESIS = ROOT / "params" / "thesis.yaml"
DEFAULT_WORK = Path(os.environ.get("TMPDIR", "/tmp")) / "t2c-endpoint-workers"


def busy(arrivals: list[float], started: float, wall: float, latency: float, workers: int) -> dict[str, float]:
    """How busy the run kept the endpoint: the time to its first request, after its last reply, and in between."""
    if not arrivals:
        return {"first_request_s": 0.0, "after_last_reply_s": 0.0, "mean_in_flight": 0.0}
    span = arrivals[-1] + latency - arrivals[0]
    return {
        "first_request_s": round(arrivals[0] - started, 1),
        "after_last_reply_s": round(started + wall - arrivals[-1] - latency, 1),
        "mean_in_flight": round(len(arrivals) * latency / span, 2) if span else float(workers),
    }


class Bench:
    """One work folder: the recording, a warm template cache, the runs and the report."""

    def __init__(self, work: Path, latency: float) -> None:
        self.work = work
        self.latency = latency
        self.recording_path = work / "recording.jsonl"
        self.template = work / "template-cache"
        self.report_path = work / "report.json"
        work.mkdir(parents=True, exist_ok=True)
        self.report: dict[str, Any] = (
            json.loads(self.report_path.read_text(encoding="utf-8")) if self.report_path.is_file() else {}
        )

    def save(self) -> None:
        self.report_path.write_text(json.dumps(self.report, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def params_file(self, name: str, **overrides: Any) -> Path:
        params = yaml.safe_load(THESIS.read_text(encoding="utf-8"))
        params.update(model=MODEL, **overrides)
        path = self.work / f"{name}.yaml"
        path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
        return path

    def env(self, base_url: str, cache: Path) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("T2C_MODEL", "T2C_LLM_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY")
        }
        env.update(
            T2C_LLM_BASE_URL=base_url,
            T2C_CACHE_DIR=str(cache),
            T2C_RESULTS_DIR=str(self.work / "results"),
            T2C_FIGURES_DIR=str(self.work / "figures"),
            PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
        )
        return env

    def fresh_cache(self, name: str) -> Path:
        """A cache folder with the built store and gold screen but no responses."""
        cache = self.work / "caches" / name
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(self.template, cache)
        return cache

    def fresh_results(self, run_id: str) -> Path:
        run_dir = self.work / "results" / run_id
        shutil.rmtree(run_dir, ignore_errors=True)
        return run_dir

    def t2c_run(self, params: Path, env: dict[str, str], *extra: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "t2c_lib.cli", "run", "--params", str(params), *extra],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: the resume check kills the run and its query process
        )

    def finish(self, proc: subprocess.Popen, what: str) -> str:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"{what}: t2c run exited {proc.returncode}:\n{out[-3000:]}")
        return out

    # --- the recording -------------------------------------------------------------------------

    def record(self) -> None:
        """Answer the whole grid by the rule (no latency, 16 workers) and keep every reply; build the warm store."""
        print("recording the grid's replies (the rule answers, no latency) ...", flush=True)
        shutil.rmtree(self.template, ignore_errors=True)
        recording = Recording()
        rule = GoldRule(load_dataset("kurikulum").questions)
        started = time.monotonic()
        with ReplayServer(RecordingRule(rule, recording)) as server:
            params = self.params_file("record", run_id="endpoint-record", workers=16)
            self.fresh_results("endpoint-record")
            self.finish(self.t2c_run(params, self.env(server.base_url, self.template)), "recording")
        for leftover in self.template.glob("llm_cache.sqlite*"):
            leftover.unlink()
        recording.write(self.recording_path)
        attempts = [a for _, a in recording.notes.values()]
        print(
            f"  {len(recording)} replies recorded in {time.monotonic() - started:.0f} s "
            f"(attempt 1/2/3: {attempts.count(1)}/{attempts.count(2)}/{attempts.count(3)}) -> {self.recording_path}"
        )

    # --- the checks ----------------------------------------------------------------------------

    def speed(self, workers: int, recording: Recording) -> None:
        run_id = f"endpoint-w{workers}"
        self.fresh_results(run_id)
        params = self.params_file(run_id, run_id=run_id, workers=workers)
        with ReplayServer(recording.reply, latency_s=self.latency) as server:
            env = self.env(server.base_url, self.fresh_cache(run_id))
            before = os.times()
            started = time.monotonic()
            out = self.finish(self.t2c_run(params, env), run_id)
            wall = time.monotonic() - started
            calls = len(server.requests)
            arrivals = sorted(r.at for r in server.requests)
        after = os.times()
        cpu = (after.children_user + after.children_system) - (before.children_user + before.children_system)
        floor = calls * self.latency / workers
        self.report.setdefault("speed", {})[str(workers)] = {
            "wall_s": round(wall, 1),
            "calls": calls,
            "latency_s": self.latency,
            "floor_s": round(floor, 1),
            "run_cpu_s": round(cpu, 1),
            **busy(arrivals, started, wall, self.latency, workers),
        }
        self.save()
        b = self.report["speed"][str(workers)]
        print(
            f"  workers {workers}: wall {wall:.1f} s, {calls} calls, floor calls x latency / workers {floor:.1f} s, "
            f"CPU of the run {cpu:.1f} s; first request after {b['first_request_s']:.1f} s, last reply "
            f"{b['after_last_reply_s']:.1f} s before the end, {b['mean_in_flight']:.1f} requests in flight on average "
            f"between them"
        )
        cells = [line.rsplit("\r", 1)[-1].strip() for line in out.splitlines() if "already done" in line]
        print("    " + "\n    ".join(cells))

    def identity(self) -> None:
        runs = sorted(
            (int(p.name.removeprefix("endpoint-w")), p)
            for p in (self.work / "results").glob("endpoint-w*")
            if p.name.removeprefix("endpoint-w").isdigit()
        )
        if len(runs) < 2:
            print("  identity: fewer than two worker settings have run")
            return
        (w0, base), results = runs[0], {}
        reference = run_results(base)
        for workers, run_dir in runs[1:]:
            diff = differences(reference, run_results(run_dir))
            results[str(workers)] = diff
            verdict = "identical" if not diff else f"DIFFERENT ({len(diff)} files): " + "; ".join(diff[:3])
            print(f"  identity: workers {workers} vs workers {w0}: {verdict}")
        files = len(reference)
        self.report["identity"] = {"reference_workers": w0, "files": files, "differences": results}
        self.save()

    def rpm(self, recording: Recording, limit: int, prompt_type: str = "Zero-Shot") -> None:
        run_id = "endpoint-rpm"
        self.fresh_results(run_id)
        params = self.params_file(run_id, run_id=run_id, workers=16, requests_per_minute=limit)
        with ReplayServer(recording.reply, latency_s=self.latency) as server:
            env = self.env(server.base_url, self.fresh_cache(run_id))
            started = time.monotonic()
            self.finish(self.t2c_run(params, env, "--prompt", prompt_type, "--strategy", "feedback"), run_id)
            wall = time.monotonic() - started
            times = [r.at for r in server.requests]
        most = max_in_window(times)
        span = max(times) - min(times)
        rate = (len(times) - 1) / span * 60 if span else 0.0
        ok = most <= limit
        self.report["rpm"] = {
            "limit": limit,
            "requests": len(times),
            "wall_s": round(wall, 1),
            "max_in_60s": most,
            "mean_rate_per_min": round(rate, 1),
            "ok": ok,
        }
        self.save()
        print(
            f"  rpm: limit {limit}/min, {len(times)} requests over {span:.0f} s, at most {most} in any 60 s window, "
            f"mean {rate:.1f}/min -> {'respected' if ok else 'EXCEEDED'}"
        )

    def resume(self, recording: Recording, workers: int = 16) -> None:
        run_id = f"endpoint-resume-w{workers}"
        self.fresh_results(run_id)
        params = self.params_file(run_id, run_id=run_id, workers=workers)
        kill_at = len(recording) // 2
        with ReplayServer(recording.reply, latency_s=self.latency) as server:
            env = self.env(server.base_url, self.fresh_cache(run_id))
            proc = self.t2c_run(params, env)
            while len(server.requests) < kill_at and proc.poll() is None:
                time.sleep(0.2)
            if proc.poll() is not None:
                raise SystemExit(f"resume: the run ended before the kill: {proc.communicate()[0][-2000:]}")
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            asked_before = len(server.requests)
            out = self.finish(self.t2c_run(params, env), "resume")
            asked_after = len(server.requests) - asked_before
        run_dir = self.work / "results" / run_id
        reference_dir = self.work / "results" / f"endpoint-w{workers}"
        kept = sum(int(m.group(1)) for m in re.finditer(r"(\d+) already done", out))
        if reference_dir.is_dir():
            diff = differences(run_results(reference_dir, ("cached",)), run_results(run_dir, ("cached",)))
        else:
            diff = [f"no uninterrupted run {reference_dir.name} to compare with"]
        self.report["resume"] = {
            "killed_after_requests": asked_before,
            "requests_after_resume": asked_after,
            "questions_kept_from_the_killed_run": kept,
            "differences": diff,
            "ok": not diff,
        }
        self.save()
        verdict = "equal to the uninterrupted run" if not diff else "DIFFERENT: " + "; ".join(diff[:3])
        print(
            f"  resume: killed after {asked_before} requests, the rerun asked {asked_after} more and finished; "
            f"{verdict}"
        )

    def summary(self) -> str:
        speed = self.report.get("speed", {})
        rows = ["| workers | wall (s) | calls | speed-up | share of ideal | floor calls x latency / workers (s) |"]
        rows.append("|---|---|---|---|---|---|")
        one = speed.get("1", {}).get("wall_s")
        for workers in sorted(speed, key=int):
            s = speed[workers]
            up = one / s["wall_s"] if one else None
            rows.append(
                f"| {workers} | {s['wall_s']:.1f} | {s['calls']} | "
                f"{f'{up:.2f}x' if up else '-'} | {f'{up / int(workers):.0%}' if up else '-'} | {s['floor_s']:.1f} |"
            )
        return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,4,16", help="worker counts, comma-separated (run in this order)")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds every reply takes")
    parser.add_argument("--checks", default="speed,identity,rpm,resume", help="which checks to run")
    parser.add_argument("--rpm", type=int, default=180, help="requests_per_minute of the rpm check")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="work folder (recording, runs, report.json)")
    parser.add_argument("--record", action="store_true", help="make the recording again")
    args = parser.parse_args()
    checks = {c.strip() for c in args.checks.split(",") if c.strip()}
    unknown = checks - {"speed", "identity", "rpm", "resume"}
    if unknown:
        parser.error(f"unknown check(s) {', '.join(sorted(unknown))} (valid: speed, identity, rpm, resume)")
    bench = Bench(args.work, args.latency)
    if args.record or not bench.recording_path.is_file() or not bench.template.is_dir():
        bench.record()
    recording = Recording.read(bench.recording_path)
    if "speed" in checks:
        for workers in [int(w) for w in args.workers.split(",") if w.strip()]:
            bench.speed(workers, recording)
    if "identity" in checks:
        bench.identity()
    if "rpm" in checks:
        bench.rpm(recording, args.rpm)
    if "resume" in checks:
        bench.resume(recording)
    print(bench.summary())
    print(f"report: {bench.report_path}")


if __name__ == "__main__":
    main()
