"""A notebook's papermill parameters checked against the names it takes; t2c's errors shown as one line.

papermill only warns about a name the notebook's `parameters` cell does not assign (`-p limt 2`:
"Passed unknown parameter: limt") and runs on with the file's values. The notebooks call
`check_parameters()` first: IPython's input history holds the notebook's own parameters cell
(its first line starts with `PARAMETERS_MARK`) and the cell papermill injected after it (its
first line is `INJECTED_MARK`), so the names given and the names taken are both read from what
actually ran. It also makes every `T2CError` in the notebook show as one line (`ParamsError:
...`), as the command line shows it, instead of a traceback through the library.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Sequence
from typing import Any

from t2c_lib.errors import InvalidValue, T2CError
from t2c_lib.study.param_bounds import BOUNDS, bound_problem

PARAMETERS_MARK = "# Parameters (papermill"
"""The first line of every notebook's `parameters` cell starts with this."""
INJECTED_MARK = "# Parameters"
"""papermill's injected cell starts with this line (its comment, then one assignment per `-p`)."""


class UnknownParameter(InvalidValue):
    """A papermill parameter the notebook does not take: it would be ignored and the file's value used."""


class ParameterOutOfRange(InvalidValue):
    """A papermill value of a numeric parameter outside its range (`param_bounds.BOUNDS`)."""


def assigned_names(source: str) -> list[str]:
    """The names a cell assigns at its top level, in order (a cell that does not parse assigns none)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names += [t.id for t in targets if isinstance(t, ast.Name) and t.id not in names]
    return names


def _last(history: Sequence[str], first_line: Any) -> str | None:
    for source in reversed(list(history)):
        if isinstance(source, str) and first_line(source.split("\n", 1)[0].strip()):
            return source
    return None


def unknown_parameters(history: Sequence[str]) -> tuple[list[str], list[str]]:
    """(names papermill injected that the parameters cell does not assign, the names it assigns); empty without both cells."""
    declared = _last(history, lambda line: line.startswith(PARAMETERS_MARK))
    injected = _last(history, lambda line: line == INJECTED_MARK)
    if declared is None or injected is None:
        return [], []
    taken = assigned_names(declared)
    return [name for name in assigned_names(injected) if name not in taken], taken


def injected_values(history: Sequence[str]) -> dict[str, Any]:
    """The literal values papermill injected, by name (a value that is not a plain literal is left out)."""
    injected = _last(history, lambda line: line == INJECTED_MARK)
    try:
        tree = ast.parse(injected or "")
    except SyntaxError:
        return {}
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return values


def out_of_range(values: dict[str, Any]) -> list[str]:
    """`name=value: the range` for every numeric value outside its range (`limit` may also be 'all' or None)."""
    problems = []
    for name, value in values.items():
        if name not in BOUNDS or value is None or (name == "limit" and value == "all"):
            continue
        why = bound_problem(name, value)
        if why is not None:
            problems.append(f"{name}={str(value)[:40]!s}: {why}")
    return problems


def check_parameters(history: Sequence[str] | None = None) -> None:
    """Refuse, in one line, a papermill parameter the notebook does not take or a number outside its range; show
    t2c's errors as one line from here on.

    `history` is the notebook's `In` (IPython's input history); by default the running kernel's own.
    """
    one_line_errors()
    if history is None:
        history = _kernel_history()
    unknown, taken = unknown_parameters(history)
    if unknown:
        hints = [
            f"{name} (did you mean {close[0]}?)" if (close := difflib.get_close_matches(name, taken, 1)) else name
            for name in unknown
        ]
        raise UnknownParameter(
            f"unknown notebook parameter(s) {', '.join(hints)}: papermill would ignore it and use the parameter "
            f"file's value; this notebook takes {', '.join(taken)}"
        )
    problems = out_of_range(injected_values(history))
    if problems:
        raise ParameterOutOfRange("notebook parameter " + "; ".join(problems))


def _kernel_history() -> Sequence[str]:
    """The running IPython kernel's input history (`In`), or nothing outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - the notebooks' environment has IPython
        return []
    shell = get_ipython()
    return list(shell.user_ns.get("In", [])) if shell is not None else []


def one_line_errors() -> None:
    """In an IPython kernel, show every `T2CError` as `Name: message` (the cell still fails); elsewhere nothing."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - the notebooks' environment has IPython
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((T2CError,), _one_line)


def _one_line(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None) -> list[str]:
    line = f"{etype.__name__}: {value}"
    shell._showtraceback(etype, value, [line])  # what IPython shows and the kernel reports: the cell failed
    return [line]
