"""Conversations: router, follow-up rewriting, grounded answers, result checks, sessions, interaction log, export.

| module | holds |
| --- | --- |
| `intent.py` | `Intent`, the router (the model decides, a deterministic rule when its reply is unusable) |
| `rewrite.py` | "rewrite this query so that ...": a follow-up as a request through the same loop and validator chain |
| `checks.py` | sanity checks on a result: warnings and a quality score 0-100 (a follow-up's lost filters too) |
| `constraints.py` | the property filters a query sets, and those a follow-up lost without being asked to |
| `answer.py` | the model's answer template, filled from the result (placeholders only, no number from the model) |
| `numbers.py` | values and numbers written per language (`1.234,5` in Indonesian) |
| `replies.py` | the acknowledgement and the error responses (user message, technical details, suggestions) |
| `settings.py` | `ChatSettings` |
| `engine.py` | `ChatEngine`: dataset, store, model and loop (from `agent.build`), built once |
| `session.py` | `Session` and `Answer`: turns, `session.json` after every turn, resume |
| `log.py` | `analytics.jsonl`, one line per turn |
| `export.py` | CSV / JSON / Excel / Parquet by extension, with a `.meta.json` sidecar |
| `evaluate.py` | intent accuracy, turn-level Pass@1 and follow-up success on a dataset's dialogues |

`from t2c_lib.chat import Session` is the notebook entry point:
`Session.start(dataset="kurikulum").ask("...")` returns an `Answer`.
"""

from __future__ import annotations

from t2c_lib.chat.intent import Intent
from t2c_lib.chat.session import Answer, Session, TurnStatus
from t2c_lib.chat.settings import ChatSettings

__all__ = ["Answer", "ChatSettings", "Intent", "Session", "TurnStatus"]
