"""One small registry for every named choice: strategies, scoring presets, weights, stores, metrics.

A `Registry[T]` maps names to things of one kind. `register` refuses a second thing under a
name already taken; `get` of a name nobody registered fails with `UnknownName`, whose message
lists the valid names (what a user sees for a typo in a parameter file or an option);
`names()` is the vocabulary that parameter checks and command-line options offer. Aliases
(the thesis's `agentic` for `feedback`) resolve to the name they stand for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from t2c_lib.errors import UnknownName

T = TypeVar("T")


class Registry(Generic[T]):
    """Named things of one kind, in the order they were registered."""

    def __init__(self, kind: str, aliases: Mapping[str, str] | None = None, note: str = "") -> None:
        self.kind = kind
        self.aliases = dict(aliases or {})
        self.note = note  # appended to the list of valid names in a miss, e.g. "'agentic' means 'feedback'"
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        """Add `item` under `name`; a name already registered (or an alias) fails."""
        if name in self._items or name in self.aliases:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = item
        return item

    def unregister(self, name: str) -> None:
        """Remove a registered name (a test's temporary entry)."""
        self.get(name)
        del self._items[self.canonical(name)]

    def canonical(self, name: str) -> str:
        """The registered name `name` stands for (itself, unless it is an alias)."""
        return self.aliases.get(name, name)

    def get(self, name: str) -> T:
        """The thing registered under `name` (or under the name it is an alias of)."""
        try:
            return self._items[self.canonical(name)]
        except (KeyError, TypeError):
            valid = ", ".join(self._items) + (f"; {self.note}" if self.note else "")
            raise UnknownName(f"unknown {self.kind} {name!r} (valid: {valid})") from None

    def names(self) -> tuple[str, ...]:
        """Every registered name, in registration order (aliases left out)."""
        return tuple(self._items)

    def items(self) -> list[tuple[str, T]]:
        return list(self._items.items())

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.canonical(name) in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._items)})"
