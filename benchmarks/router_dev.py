"""How well each router mode routes a set kept apart from the conversation test set.

Every message of `benchmarks/routing_dev.yaml` (curriculum questions, follow-ups, thanks and
off-topic messages that are not in `data/kurikulum/conversations.yaml`) is routed by the chat
engine's router in each mode, with the conversation before it; the model's replies go through
the response cache, so `hybrid` and `model` cost one pass of model calls between them. This is
the measurement behind the default mode (`ChatSettings.router`); `make conversations` then
measures the chosen mode once on the test set.

A second set, `benchmarks/routing_heldout.yaml`, was written after the modes were chosen, to test a
change to them on messages they were not designed on (`--set benchmarks/routing_heldout.yaml`).

Usage: python benchmarks/router_dev.py [--set FILE] [--model local] [--modes hybrid,model,rules] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import yaml

from t2c_lib.chat.engine import ChatEngine
from t2c_lib.chat.intent import Intent, RouterMode
from t2c_lib.chat.settings import ChatSettings

DEV_SET = Path(__file__).with_name("routing_dev.yaml")
HELD_OUT_SET = Path(__file__).with_name("routing_heldout.yaml")


def load_dev_set(path: Path = DEV_SET) -> list[tuple[str, list[tuple[str, str]], Intent]]:
    """(message, history, expected intent) per entry."""
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [(r["message"], [(q, c) for q, c in r["history"]], Intent.parse(r["intent"])) for r in rows]


def route_all(mode: RouterMode, model: str | None, dev: list[tuple[str, list[tuple[str, str]], Intent]]) -> dict:
    """Accuracy, per-intent counts and the misses of one mode."""
    engine = ChatEngine.open(ChatSettings(model=model, router=mode.value))
    started = time.perf_counter()
    confusion: Counter[tuple[str, str]] = Counter()
    misses = []
    try:
        for message, history, expected in dev:
            decision = engine.router.route(message, history, has_previous=bool(history))
            confusion[(expected.value, decision.intent.value)] += 1
            if decision.intent is not expected:
                misses.append({"message": message, "expected": expected.value, "got": decision.intent.value})
    finally:
        engine.close()
    right = sum(n for (want, got), n in confusion.items() if want == got)
    per_intent = {
        i.value: f"{confusion[(i.value, i.value)]}/{sum(n for (w, _), n in confusion.items() if w == i.value)}"
        for i in Intent
    }
    return {
        "mode": mode.value,
        "right": right,
        "n": len(dev),
        "per_intent": per_intent,
        "misses": misses,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set", dest="routing_set", type=Path, default=DEV_SET, help="routing set [default: %(default)s]"
    )
    parser.add_argument("--model", default=None, help="model name [default: local, or $T2C_MODEL]")
    parser.add_argument("--modes", default="hybrid,model,rules", help="router modes, comma-separated")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    dev = load_dev_set(args.routing_set)
    results = [route_all(RouterMode(m.strip()), args.model, dev) for m in args.modes.split(",")]
    for r in results:
        print(f"{r['mode']:>7}: {r['right']}/{r['n']} right  {r['per_intent']}  ({r['seconds']} s)")
        for miss in r["misses"]:
            print(f"         {miss['expected']} -> {miss['got']}: {miss['message']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
