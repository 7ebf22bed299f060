"""Count import circles among t2c_lib modules, TYPE_CHECKING and function-level imports included.

Every `import`/`from ... import` anywhere in a module's AST is an edge (module top level,
`if TYPE_CHECKING:` blocks, function bodies). `--with-parents` also adds the implicit edge
Python makes when it imports a submodule: importing `a.b.c` first runs `a/__init__` and
`a/b/__init__`. Prints each strongly connected component with more than one module and exits
1 if there is any. Usage: `python tools/import_cycles.py [--with-parents]`.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "t2c_lib"


def module_names() -> dict[str, Path]:
    """Dotted name -> file, for every module of the package."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest known module that `name` (a module or `module.attribute`) names."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def edges(modules: dict[str, Path], with_parents: bool) -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere in its source)."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                # `from pkg import submodule` names the submodule; `from mod import name` names mod
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                if not t.startswith(PACKAGE):
                    continue
                hit = _resolve(t, modules)
                if hit is None or hit == mod:
                    continue
                graph[mod].add(hit)
                if with_parents:
                    parts = hit.split(".")
                    for i in range(2, len(parts)):  # a.b.c also runs a/b/__init__
                        parent = ".".join(parts[:i])
                        if parent in modules and parent != mod and not mod.startswith(parent + "."):
                            graph[mod].add(parent)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    with_parents = "--with-parents" in sys.argv[1:]
    modules = module_names()
    found = cycles(edges(modules, with_parents))
    print(
        f"{len(modules)} modules, {len(found)} import circle(s)"
        + (" (parent packages counted)" if with_parents else "")
    )
    for comp in found:
        print("  " + " <-> ".join(comp))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
