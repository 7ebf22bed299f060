"""Every YAML file t2c reads, read within bounds: a size cap, an alias budget, a nesting limit.

Dataset, parameter and template files are hostile input. PyYAML's safe loader builds no objects,
but a few hundred bytes of nested aliases (a "billion laughs") expand to a structure of billions of
nodes that every later walk over it pays for, and deep nesting recurses in its composer. So
before anything is built, the file's events are read once (a flat stream: no recursion, libyaml
when built in) and the text is refused, in one line naming the file, when it is larger than
`MAX_BYTES`, nests deeper than `MAX_DEPTH`, uses more than `MAX_ALIASES` aliases, refers to a
node from inside itself, or would expand (every alias counted as the nodes it stands for) to more
than `MAX_NODES` nodes. t2c's own files use a few dozen aliases at most (benchmarks/) and none
nests deeper than 12 levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from t2c_lib.errors import InvalidValue, describe_yaml_error

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIASES = 256
MAX_NODES = 1_000_000
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built in: the same data, parsed ~10x faster


class YamlFileError(InvalidValue):
    """A YAML file that cannot be read within its bounds, or is not valid YAML; `reason` is the message without the file."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


@dataclass(frozen=True)
class YamlLimits:
    """The bounds one read keeps to."""

    max_bytes: int = MAX_BYTES
    max_depth: int = MAX_DEPTH
    max_aliases: int = MAX_ALIASES
    max_nodes: int = MAX_NODES


DEFAULT_LIMITS = YamlLimits()


def check_size(path: str | Path, limits: YamlLimits = DEFAULT_LIMITS) -> None:
    """Refuse a file larger than the cap before it is read."""
    try:
        size = Path(path).stat().st_size
    except OSError as exc:
        raise YamlFileError(path, f"cannot read: {exc.strerror or exc}") from None
    if size > limits.max_bytes:
        raise YamlFileError(path, f"{size} bytes, more than the {limits.max_bytes} a YAML file may have; refused")


def read_yaml(path: str | Path, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """The data of the YAML file at `path` (UTF-8), read within `limits`; any problem is one `YamlFileError`."""
    check_size(path, limits)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limits.max_bytes + 1)
    except OSError as exc:
        raise YamlFileError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise YamlFileError(path, f"not valid UTF-8 at byte offset {exc.start}; save the file as UTF-8") from None
    return parse_yaml(text, path, limits)


def parse_yaml(text: str, path: str | Path, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """The data of YAML `text` (read from `path`, named in errors), refused past `limits` before it is built."""
    if len(text) > limits.max_bytes:
        raise YamlFileError(path, f"more than {limits.max_bytes} characters of YAML; refused")
    try:
        _check_events(text, path, limits)
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise YamlFileError(path, f"not valid YAML at {describe_yaml_error(exc)}") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise YamlFileError(path, "nested too deeply; refused") from None


_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_END = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _check_events(text: str, path: str | Path, limits: YamlLimits) -> None:
    """One flat pass over the events: depth, aliases, and the expanded size (an alias counts as the nodes it names)."""
    sizes: dict[str, int] = {}  # anchor -> expanded nodes of the node it names, once that node is complete
    open_nodes: list[list[Any]] = []  # [anchor, expanded nodes so far] of each open collection
    expanded = aliases = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, _END):
            anchor, held = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = held
            if open_nodes:
                open_nodes[-1][1] += held
            continue
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > limits.max_aliases:
                raise YamlFileError(path, f"more than {limits.max_aliases} aliases; refused")
            if any(anchor == event.anchor for anchor, _ in open_nodes):
                raise YamlFileError(path, f"alias *{event.anchor} refers to a node from inside itself; refused")
            count = sizes.get(event.anchor, 1)  # an undefined alias: the loader names it
        elif isinstance(event, _START):
            open_nodes.append([event.anchor, 1])
            if len(open_nodes) > limits.max_depth:
                raise YamlFileError(path, f"nested more than {limits.max_depth} levels deep; refused")
            count = 0  # counted in its parent when it closes
            expanded += 1
        elif isinstance(event, yaml.ScalarEvent):
            count = 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        else:
            continue
        expanded += count
        if count and open_nodes:
            open_nodes[-1][1] += count
        if expanded > limits.max_nodes:
            raise YamlFileError(path, f"expands to more than {limits.max_nodes} nodes (aliases counted); refused")
