"""The works t2c's numbers stand beside, cited as `CITATION.cff` (at the project root) records them.

One source for every place that names them: the analysis's reference table (`citation` beside
each published number), the README's citation lines. A fact the file does not record (a year, a
link) is left out of the line, never guessed: the thesis t2c reproduces is cited by its repository
and commit, the kg-axel study by its title, author, year, kind, department, university and record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from t2c_lib import config
from t2c_lib.files.yaml_file import read_yaml

CITATION_FILE = "CITATION.cff"


@dataclass(frozen=True)
class Reference:
    """One work of `CITATION.cff`'s `references`: what a citation line needs ("" where the file records nothing)."""

    kind: str
    title: str
    authors: tuple[str, ...]
    year: str
    link: str  # its repository or url
    commit: str = ""
    abbreviation: str = ""
    where: str = ""  # what kind of work, where: `Skripsi (bachelor's thesis), <department>, <institution>, record N`

    def text(self) -> str:
        """`Title. Author, year. Where. link (commit abc1234)`: one line, what the file does not record left out."""
        at = f" (commit {self.commit[:7]})" if self.commit else ""
        who = ", ".join(p for p in ("; ".join(self.authors), self.year) if p)
        link = f"{self.link}{at}" if self.link else ""
        return ". ".join(p for p in (self.title, who, self.where, link) if p)


def _author(entry: dict) -> str:
    """A CFF person or entity: `name`, else given and family names, else `alias`."""
    names = " ".join(str(p) for p in (entry.get("given-names"), entry.get("family-names")) if p)
    return str(entry.get("name") or names or entry.get("alias") or "")


def _where(entry: dict) -> str:
    """The kind of work and where it was made, with its record number when the file gives one."""
    institution = entry.get("institution") or {}
    records = [i for i in entry.get("identifiers") or [] if isinstance(i, dict) and i.get("type") == "other"]
    parts = [
        str(entry.get("thesis-type") or ""),
        str(entry.get("department") or ""),
        str(institution.get("name") or "") if isinstance(institution, dict) else "",
        *(f"repository record {r.get('value')}" for r in records if r.get("value")),
    ]
    return ", ".join(p for p in parts if p)


def load_references(path: Path | None = None) -> list[Reference]:
    """The references of `CITATION.cff` (none when the file is not there, as in an installed package)."""
    path = path or config.PROJECT_ROOT / CITATION_FILE
    if not path.is_file():
        return []
    data = read_yaml(path) or {}
    return [
        Reference(
            kind=str(entry.get("type", "")),
            title=" ".join(str(entry.get("title", "")).split()),
            authors=tuple(a for a in (_author(x) for x in entry.get("authors") or [] if isinstance(x, dict)) if a),
            year=str(entry.get("year", "")),
            link=str(entry.get("repository-code") or entry.get("url") or ""),
            commit=str(entry.get("commit", "")),
            abbreviation=str(entry.get("abbreviation", "")),
            where=_where(entry),
        )
        for entry in data.get("references") or []
        if isinstance(entry, dict)
    ]


def citation_for_repository(source_repo: str, references: list[Reference] | None = None) -> str:
    """The citation line of the work whose repository is `source_repo` (`owner/name`); the bare name if none."""
    for reference in load_references() if references is None else references:
        if source_repo and reference.link.rstrip("/").endswith("/" + source_repo.strip("/")):
            return reference.text()
    return source_repo


def thesis_citation() -> str:
    """The citation line of the thesis t2c reproduces (the `thesis` entry cited by its repository), or ""."""
    return next((r.text() for r in load_references() if r.kind == "thesis" and r.link), "")
