"""The gold screen's files in a run folder (`gold_screen/`): their name, the drop kinds and the headline's note.

`study.screen` writes them before a run; the analysis and the README's tables read the note back.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

from t2c_lib.files.outputs import decode_json

REPORT_CSV = "gold_screen.csv"
"""The screen's report in `gold_screen/`; its summary beside it as `gold_screen.json`."""


class DropKind(str, Enum):
    """Why a gold pair was dropped (the coarse class; the reason string has the detail)."""

    SYNTAX = "error:syntax"
    SEMANTIC = "error:semantic"
    RUNTIME = "error:runtime"
    WRITE = "error:write"
    UNSAFE = "unsafe"  # the read-only guard or the database's plan refuses it: never run
    TOO_LARGE = "too_large"  # more rows than the store's row cap
    TIMEOUT = "timeout"
    EMPTY = "empty"
    EXCLUDED = "excluded"  # named in the dataset's gold_exclusions, with the reason
    ORDER = "order"  # the answer changes when the engine meets the rows in another order
    DIFFERS = "differs"  # runs on the screening store, but a reference store gives another answer


DROP_WORDS = {
    DropKind.EMPTY: "empty answer",
    DropKind.ORDER: "answer depends on row order",
    DropKind.SYNTAX: "syntax error",
    DropKind.SEMANTIC: "semantic error",
    DropKind.RUNTIME: "runtime error",
    DropKind.WRITE: "a write",
    DropKind.UNSAFE: "refused by the guard",
    DropKind.TOO_LARGE: "too many rows",
    DropKind.TIMEOUT: "timed out",
    DropKind.EXCLUDED: "excluded by the dataset",
    DropKind.DIFFERS: "differs between stores",
}
"""How the headline names each drop kind."""

MAX_SUMMARY_BYTES = 16 * 1024 * 1024
"""The largest `gold_screen.json` a headline reads (a run folder may come from anyone)."""


def gold_note(summary: dict[str, Any]) -> str:
    """`gold pairs: kept k of N, dropped d (n1 reason1, n2 reason2, ...)` from a screen summary; "" if unusable."""
    total, kept = summary.get("total"), summary.get("kept")
    if not (isinstance(total, int) and isinstance(kept, int)) or isinstance(total, bool) or not 0 <= kept <= total:
        return ""
    raw = summary.get("dropped_by_kind")
    counts = [
        (n, DROP_WORDS[DropKind(kind)])
        for kind, n in (raw.items() if isinstance(raw, dict) else [])
        if kind in DropKind._value2member_map_ and isinstance(n, int) and n > 0
    ]
    text = f"gold pairs: kept {kept} of {total}"
    if kept == total:
        return text + ", none dropped"
    main = ", ".join(f"{n} {word}" for n, word in sorted(counts, key=lambda c: (-c[0], c[1]))[:5])
    rest = len(counts) - 5
    more = f", {rest} more reason{'s' if rest > 1 else ''}" if rest > 0 else ""
    return f"{text}, dropped {total - kept}" + (f" ({main}{more}; see gold_screen/)" if main else "")


def read_gold_note(screen_dir: Path) -> str:
    """`gold_note` of a run's `<screen_dir>/gold_screen.json`; "" when the run has none or it is unreadable."""
    path = Path(screen_dir) / Path(REPORT_CSV).with_suffix(".json").name
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_SUMMARY_BYTES:
            return ""
        summary = decode_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    return gold_note(summary) if isinstance(summary, dict) else ""
