"""Name lookup for the schema and property steps: case folding per store, closest valid names."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class NameSet:
    """Valid names (labels, types or property keys) looked up exactly or case-insensitively."""

    def __init__(self, names: Iterable[str], case_sensitive: bool) -> None:
        self.names = sorted(set(names))
        self.case_sensitive = case_sensitive
        self._folded = {n.lower(): n for n in self.names}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in self.names if self.case_sensitive else name.lower() in self._folded

    def canonical(self, name: str) -> str | None:
        """The schema's spelling of `name` (None if it is not valid)."""
        if name in self.names:
            return name
        return None if self.case_sensitive else self._folded.get(name.lower())

    def closest(self, wrong: str, n: int = 3) -> list[str]:
        """Valid names closest to `wrong`: a different-case match first, then difflib's ratio (>= 0.5)."""
        found: list[str] = []
        same_case = self._folded.get(wrong.lower())
        if same_case and same_case != wrong:
            found.append(same_case)
        lowered = difflib.get_close_matches(wrong.lower(), list(self._folded), n=n, cutoff=0.5)
        for low in lowered:
            name = self._folded[low]
            if name not in found:
                found.append(name)
        return found[:n]


def quote_list(names: Iterable[str]) -> str:
    """`a`, `b` or `c` style list used in messages."""
    items = [f"`{n}`" for n in names]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
