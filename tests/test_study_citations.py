"""Citations (issue 39, item 5): `CITATION.cff` cites t2c and the works whose numbers it sets beside its own;
the README and the analysis's reference table cite the thesis from it, with what the repository does not record
left as a visible TODO rather than guessed."""

from __future__ import annotations

import csv
import tomllib

import yaml

from t2c_lib.study.analysis import analyze_run, load_published
from t2c_lib.study.citations import load_references, thesis_citation
from tests.helpers import ROOT

CFF = ROOT / "CITATION.cff"


def test_citation_cff_cites_t2c_with_the_packages_version_and_licence():
    data = yaml.safe_load(CFF.read_text(encoding="utf-8"))
    assert data["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "type"):
        assert data[key], key
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert str(data["version"]) == project["version"] and data["license"] == project["license"]
    for reference in data["references"]:  # CFF 1.2.0: each reference needs a type, a title and authors
        assert reference["type"] and reference["title"] and reference["authors"]


def test_the_thesis_is_cited_with_the_repository_and_commit_its_published_numbers_come_from():
    with (ROOT / "data" / "kurikulum" / "reference" / "thesis_published.csv").open(encoding="utf-8") as f:
        sources = {(r["source_repo"], r["commit"]) for r in csv.DictReader(f)}
    assert len(sources) == 1
    ((repo, commit),) = sources
    thesis = next(r for r in load_references(CFF) if r.kind == "thesis")
    assert thesis.link.endswith("/" + repo) and thesis.commit == commit
    line = thesis.text()
    assert line.startswith(f"{thesis.title}. ") and line.endswith(f"{thesis.link} (commit {commit[:7]})")
    kg_axel = next(r for r in load_references(CFF) if r.abbreviation == "kg-axel")
    for missing in (thesis.title, thesis.authors[0], thesis.year, kg_axel.title, kg_axel.link):
        assert missing.startswith("TODO"), "a fact this repository does not record is marked, never guessed"


def test_the_readme_cites_the_thesis_and_kg_axel_as_the_file_does():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    flat = " ".join(readme.split())
    assert "## How to cite" in readme
    assert flat.count(thesis_citation()) == 1  # "How to cite"
    beside = " ".join((ROOT / "docs" / "thesis.md").read_text(encoding="utf-8").split())
    assert beside.count(thesis_citation()) == 1  # "Beside the thesis", a page of the manual
    kg_axel = next(r for r in load_references(CFF) if r.abbreviation == "kg-axel")
    assert kg_axel.text() in flat


def test_every_published_number_in_the_reference_table_carries_its_citation(scored_run, tiny_dataset, tmp_path):
    published = load_published(ROOT / "data" / "kurikulum")
    tables = analyze_run(scored_run, ["level"], published)
    reference = tables.reference
    rows = reference[reference["source"].str.startswith("published")]
    assert len(rows) and set(rows["citation"]) == {thesis_citation()}
    assert set(reference.loc[~reference.index.isin(rows.index), "citation"]) == {""}  # this run's own rows
