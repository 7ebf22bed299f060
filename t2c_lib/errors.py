"""The package's exceptions, below every module that raises them.

`T2CError` is the root: anything raised as one is a message for the user (bad input, a store
that cannot be reached, a refused query), and the command line shows it as one line
(`t2c: error: ...`). Any other exception escaping the library is a bug and shows as one, with
its traceback. Each user error also keeps the builtin base it had (`ValueError`,
`RuntimeError`, `FileNotFoundError`), so code that caught those still does.

The tree (classes defined elsewhere are named with their module):

    T2CError
      UnknownName            a name no registry holds (strategy, scoring preset, weights, store, metric)
      InvalidValue           a value outside its range or vocabulary: an option, a setting, a prompt type
        ParamsError          (study.params) a parameter file or value
        DatasetError         (datasets) a dataset file
        PairsError           (metrics.pairs) a file of (gold, predicted) pairs
        SessionError         a chat session id, file or its settings
        ExportError          a result that cannot be exported there
      AmbiguousModel         (study.model_precedence) an endpoint is set, the parameter file says local
      StudyError             a run's files are not in the state a step needs
        MissingResults       no run, no cell, no metrics where a step looks
        IncompatibleResults  results another t2c wrote, or two runs with nothing in common
        EvaluationError      (study.evaluation) a cell not run to the end
        SettingsChanged      (study.manifest) a cell resumed under other settings
        VoteBudgetUnknown    (study.steps) vote has no k yet
      TemplateMissing        a prompt or feedback template the installation lacks
      PathError              a file or folder the user named cannot be read or written (`user_path`)
      EmbedderUnavailable    (linking.embedder) the MiniLM weights are not installed
      LLMError               (llm.base) a model call failed for good: LLMConfigError, LLMUnavailableError
      ConversationsStopped   (chat.evaluate) the model failed for good during a conversation evaluation
      StoreError             a graph store failed: StoreUnavailable, QueryError (UnsafeQuery,
                             ResultTooLarge, ResourceLimit), QueryTimeout

The store errors live here rather than in `graph/` so the query gate (`cypher/`) can raise
them without importing a store. `describe_yaml_error` turns a YAML syntax error into the one
line such an error carries (dataset files and parameter files both use it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import yaml


class T2CError(Exception):
    """Root of the errors t2c reports to its user in one line."""


class InvalidValue(T2CError, ValueError):
    """A value outside its range or vocabulary (an option, a setting from the environment, a name); says which are valid."""


class SessionError(InvalidValue):
    """A chat session cannot be started or resumed as asked (its id, its file, its settings)."""


class ExportError(InvalidValue):
    """A result cannot be exported as asked (no result, or an unknown file type)."""


class StudyError(T2CError, RuntimeError):
    """A run's files are not in the state a study step needs; the message says which step to run."""


class MissingResults(StudyError, FileNotFoundError):
    """No run, cell or metrics where a study step looks for them."""


class IncompatibleResults(StudyError, ValueError):
    """Result files that cannot go together or into this step (another t2c's columns, other presets, no common cells)."""


class TemplateMissing(T2CError, FileNotFoundError):
    """A prompt or feedback template the installation should ship is missing."""


class PathError(T2CError, OSError):
    """A file or folder the user named cannot be read or written (missing, a directory, no permission, disk full)."""


@contextmanager
def user_path(path: str | Path, doing: str = "write") -> Iterator[None]:
    """Turn an `OSError` on a path the user chose into a one-line `PathError` (`cannot write out.csv: Permission denied`)."""
    try:
        yield
    except T2CError:
        raise
    except OSError as exc:
        raise PathError(f"cannot {doing} {path}: {exc.strerror or exc}") from exc


class UnknownName(T2CError, ValueError):
    """A name that no registry entry has (a strategy, scoring preset, weights, store or metric); the message lists the valid ones."""


class StoreError(T2CError, RuntimeError):
    """Any failure of a graph store; the message is meant for the user."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or opened (server down, files locked, not loaded)."""


class QueryError(StoreError):
    """The database refused or failed a query.

    `kind` says which stage failed: "syntax" (parser), "semantic" (binder: unknown label,
    property, function), "runtime" (execution), "write" (a write reached a read-only wall),
    "unsafe" (not one read-only statement), "too_large" (over the row or byte budget) or
    "resource" (over a limit on the query's size, nesting, memory or the store's process).
    """

    def __init__(self, message: str, kind: str = "runtime") -> None:
        super().__init__(message)
        self.kind = kind


class UnsafeQuery(QueryError):
    """The query is not one read-only statement (refused by the gate or the database's plan)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="unsafe")


class ResultTooLarge(QueryError):
    """The query returns more rows or bytes than the store's budget; nothing more is fetched."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="too_large")


class ResourceLimit(QueryError):
    """The query is over a limit set before or while it runs: length, nesting, memory, or it crashed the worker."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="resource")


class QueryTimeout(StoreError):
    """The query ran past its time limit and was stopped."""


# --- one line for a YAML syntax error ----------------------------------------------------------
# PyYAML's messages span several lines ("while parsing ... in <file>, line 2 ... expected ...,
# line 3"); the command line shows one line per error, so the position must be on it.


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """`line 3, column 6: expected ',' or ']', but got ':' (while parsing a flow sequence from line 2, column 15)`."""
    mark = getattr(exc, "problem_mark", None)
    problem = " ".join(str(getattr(exc, "problem", "") or "").split())
    if mark is None or not problem:
        return " ".join(str(exc).split())
    text = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context = " ".join(str(getattr(exc, "context", "") or "").split())
    context_mark = getattr(exc, "context_mark", None)
    if context:
        where = (
            f" from line {context_mark.line + 1}, column {context_mark.column + 1}" if context_mark is not None else ""
        )
        text += f" ({context}{where})"
    return text
