"""Citations (issue 39, item 5; issue 51, item 7): `CITATION.cff` cites t2c (year, version) and the works whose
numbers it sets beside its own: the thesis t2c reproduces by its repository and commit (its title and author are not
on record), the kg-axel study by title, author, year, kind, department, university and record. The README, the manual
and the analysis's reference table cite them from it, and no rendered line says TODO."""

from __future__ import annotations

import csv
import tomllib

import yaml

from t2c_lib.report.analysis import analyze_run, load_published
from t2c_lib.report.citations import load_references, thesis_citation
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
    preferred = data["preferred-citation"]  # what GitHub's "Cite this repository" (BibTeX) is made of
    assert preferred["year"] == 2026 and str(preferred["version"]) == project["version"]
    assert "url" not in preferred and "repository-code" not in data  # no public address is on record: none invented
    assert "TODO" not in CFF.read_text(encoding="utf-8")


def test_the_thesis_is_cited_with_the_repository_and_commit_its_published_numbers_come_from():
    with (ROOT / "data" / "kurikulum" / "reference" / "thesis_published.csv").open(encoding="utf-8") as f:
        sources = {(r["source_repo"], r["commit"]) for r in csv.DictReader(f)}
    assert len(sources) == 1
    ((repo, commit),) = sources
    thesis = next(r for r in load_references(CFF) if r.kind == "thesis")
    assert thesis.link.endswith("/" + repo) and thesis.commit == commit
    line = thesis.text()
    assert line.startswith(f"{thesis.title}. ") and line.endswith(f"{thesis.link} (commit {commit[:7]})")
    assert thesis.year == "" and "TODO" not in line  # no year on record: none written, none guessed


def test_the_kg_axel_study_is_cited_as_its_university_records_it():
    kg_axel = next(r for r in load_references(CFF) if r.abbreviation == "kg-axel")
    assert kg_axel.text() == (
        "Evaluasi Efektivitas Kombinasi Teknik Prompt Engineering Dengan Format Representasi Skema Knowledge Graph "
        "Dalam Tugas Text-To-Cypher Berbasis Large Language Model. Axel Xaverius Tamtama, 2026. Skripsi (bachelor's "
        "thesis), Teknologi Informasi, Universitas Gadjah Mada, repository record 271978"
    )


def test_no_rendered_citation_says_todo():
    pages = [ROOT / "README.md", ROOT / "RESULTS.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        assert "TODO" not in page.read_text(encoding="utf-8"), page.name
    for reference in load_references(CFF):
        assert "TODO" not in reference.text()


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
    assert not any("TODO" in c for c in reference["citation"])
    assert set(reference.loc[~reference.index.isin(rows.index), "citation"]) == {""}  # this run's own rows
