"""The works t2c's numbers stand beside, cited as `CITATION.cff` (at the project root) records them.

One source for every place that names them: the analysis's reference table (`citation` beside
each published number), the README's citation lines. What the file does not know stays a
visible `TODO` (a title, an author, a year), never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from t2c_lib import config
from t2c_lib.yaml_file import read_yaml

CITATION_FILE = "CITATION.cff"
MISSING = "TODO"


@dataclass(frozen=True)
class Reference:
    """One work of `CITATION.cff`'s `references`: what a citation line needs."""

    kind: str
    title: str
    authors: tuple[str, ...]
    year: str  # `MISSING` when the file records none
    link: str  # its repository or url (`MISSING` when none)
    commit: str = ""
    abbreviation: str = ""

    def text(self) -> str:
        """`Title. Author, year. link (commit abc1234)`: one line, TODOs as the file has them."""
        at = f" (commit {self.commit[:7]})" if self.commit else ""
        authors = "; ".join(self.authors) or f"{MISSING}: author"
        return f"{self.title}. {authors}, {self.year}. {self.link}{at}"


def load_references(path: Path | None = None) -> list[Reference]:
    """The references of `CITATION.cff` (none when the file is not there, as in an installed package)."""
    path = path or config.PROJECT_ROOT / CITATION_FILE
    if not path.is_file():
        return []
    data = read_yaml(path) or {}
    found = []
    for entry in data.get("references") or []:
        authors = tuple(
            a.get("name") or " ".join(p for p in (a.get("given-names"), a.get("family-names")) if p)
            for a in entry.get("authors") or []
        )
        found.append(
            Reference(
                kind=str(entry.get("type", "")),
                title=str(entry.get("title", f"{MISSING}: title")),
                authors=authors,
                year=str(entry.get("year", f"{MISSING}: year")),
                link=str(entry.get("repository-code") or entry.get("url") or f"{MISSING}: link"),
                commit=str(entry.get("commit", "")),
                abbreviation=str(entry.get("abbreviation", "")),
            )
        )
    return found


def citation_for_repository(source_repo: str, references: list[Reference] | None = None) -> str:
    """The citation line of the work whose repository is `source_repo` (`owner/name`); the bare name if none."""
    for reference in load_references() if references is None else references:
        if source_repo and reference.link.rstrip("/").endswith("/" + source_repo.strip("/")):
            return reference.text()
    return source_repo


def thesis_citation() -> str:
    """The thesis's citation line (its entry of type `thesis`), or "" without one."""
    return next((r.text() for r in load_references() if r.kind == "thesis"), "")
