#!/usr/bin/env python3
"""Generate the node and relationship CSVs of data/kurikulum/ from data/kurikulum-source/ (deterministic).

The source (its keys: data/kurikulum-source/README.md; outside data/kurikulum/, whose every file the
dataset hash covers) is the curriculum of the Program Studi Teknologi Informasi (S1): 11 student outcomes
(SO, KP.1 ... KP.11) and 63 courses (MK), each with one learning goal (LG) and 2-5 learning outcomes (LO)
holding 3-8 topics in all. A course's kode is
<prefix>21<semester><place within its semester, over COURSE_FILES in order><sks>. Derived edges: a course's
SOs are the union of the SOs its LOs map to; each such SO is PURSUED_IN the course and PART_OF the course's
LG. `(p:MK)-[:PREREQUISITE]->(c:MK)` means p is a prerequisite of c (as in the thesis's graph and queries).

    python tools/make_kurikulum.py             # writes data/kurikulum/nodes, data/kurikulum/rels
    python tools/make_kurikulum.py --out DIR   # writes DIR/nodes, DIR/rels (tests/datasets/test_kurikulum_generator.py)

The ground truth, examples and the other YAML files of data/kurikulum/ are written by hand.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from t2c_lib.files.yaml_file import YamlFileError, read_yaml  # noqa: E402

OUT = ROOT / "data" / "kurikulum"
SOURCE = ROOT / "data" / "kurikulum-source"
SEMESTERS = [f"wajib-semester-{n}.yaml" for n in range(1, 9)]
TRACKS = [f"pilihan-{t}.yaml" for t in ("kecerdasan-buatan", "rekayasa-perangkat-lunak", "jaringan-dan-keamanan")]
COURSE_FILES = (*SEMESTERS, *TRACKS)  # the order of the MK rows, and of the places that make up the kodes
SO_KEYS = {"nomor": int, "deskripsi": str}
MK_KEYS = {"nama": str, "semester": int, "sks": int, "klasifikasi": str, "tipe": str, "durasi": str, "prefix": str}
MK_KEYS |= {"lg": str, "lo": list}
MK_OPTIONAL = {"jalur": str, "prasyarat": list, "paralel": list}  # absent: no jalur, an empty list
LO_KEYS = {"deskripsi": str, "so": list, "topik": list}
ITEMS = {"lo": dict, "so": int, "topik": str, "prasyarat": str, "paralel": str}  # what each list holds
REL_FIELDS = ("from_label", "from_id", "to_label", "to_id")
TYPE_NAMES = {int: "an integer", str: "a string", list: "a list", dict: "a mapping"}


class SourceError(ValueError):
    """A source file that does not describe the curriculum; the message is one line naming the place."""


def check(ok: object, where: str, problem: str) -> None:
    """Refuse the source, in one line, unless `ok`."""
    if not ok:
        raise SourceError(f"{where}: {problem}")


def record(item: object, keys: dict[str, type], where: str, optional: dict[str, type] | None = None) -> dict:
    """`item` as a mapping with every key of `keys`, none outside `keys` and `optional`, each of its type."""
    check(isinstance(item, dict), where, "not a mapping")
    allowed = keys | (optional or {})
    missing, unknown = sorted(keys.keys() - item.keys()), sorted(item.keys() - allowed.keys())
    check(not missing and not unknown, where, f"missing keys {missing}, unknown keys {unknown}")
    for key, value in item.items():
        want = allowed[key]
        check(type(value) is want, where, f"{key}: not {TYPE_NAMES[want]}")
        check(want is not list or all(type(x) is ITEMS[key] for x in value), where, f"{key}: an item of a wrong type")
    return {k: [] if t is list else None for k, t in (optional or {}).items()} | item


def load(source: Path) -> tuple[dict[int, str], list[dict]]:
    """The SOs (nomor -> deskripsi) and the courses, in order, from the YAML files of `source`."""
    extra = sorted({p.name for p in source.glob("*.yaml")} - {"so.yaml", *COURSE_FILES})
    check(not extra, str(source), f"{extra} not read: list a new course file in COURSE_FILES")
    items = read_yaml(source / "so.yaml")
    check(isinstance(items, list), "so.yaml", "not a list")
    so = {r["nomor"]: r["deskripsi"] for r in (record(i, SO_KEYS, "so.yaml") for i in items)}
    check(len(so) == len(items), "so.yaml", "two SOs with one nomor")
    courses = []
    for name in COURSE_FILES:
        items = read_yaml(source / name)
        check(isinstance(items, list), name, "not a list")
        courses += [record(c, MK_KEYS, f"{name} #{i}", MK_OPTIONAL) for i, c in enumerate(items, 1)]
    check(courses, str(source), "no courses")
    return so, courses


def add_course(c: dict, so: dict[int, str], nodes: dict[str, list], rel) -> None:
    """The MK, LG, LO and topic rows of one course and the edges among them and to the SOs."""
    k, nama = c["kode"], c["nama"]
    los = [record(lo, LO_KEYS, f"{nama} LO{i}") for i, lo in enumerate(c["lo"], 1)]
    check(2 <= len(los) <= 5, nama, f"{len(los)} LOs, not 2-5")
    check(3 <= sum(len(lo["topik"]) for lo in los) <= 8, nama, "not 3-8 topics")
    check(c["tipe"] in ("Wajib", "Pilihan"), nama, f"tipe {c['tipe']!r}: Wajib or Pilihan")
    check((c["tipe"] == "Pilihan") == (c["jalur"] is not None), nama, "a jalur for an elective (Pilihan) only")
    mk = {"id": k, "kode": k, "nama": nama, "sks": c["sks"], "durasi": c["durasi"], "tipe": c["tipe"]}
    nodes["MK"].append(mk | {"klasifikasi": c["klasifikasi"], "semester": c["semester"], "jalur": c["jalur"] or ""})
    lg_id = f"LG-{k}"
    nodes["LG"].append({"id": lg_id, "nama": f"Tujuan Pembelajaran {nama}", "deskripsi": c["lg"], "MK": nama})
    rel("PURSUED_IN", "LG", lg_id, "MK", k)
    sos: set[int] = set()
    t_no = 0
    for i, lo in enumerate(los, start=1):
        check(1 <= len(lo["so"]) <= 2 and all(s in so for s in lo["so"]), f"{nama} LO{i}", "not 1-2 known SOs")
        lo_id = f"LO-{k}-{i}"
        nodes["LO"].append({"id": lo_id, "nama": f"LO{i}", "deskripsi": lo["deskripsi"], "MK": nama})
        rel("PURSUED_IN", "LO", lo_id, "MK", k)
        for s in lo["so"]:
            rel("PART_OF", "LO", lo_id, "SO", f"KP.{s}")
        sos.update(lo["so"])
        for t in lo["topik"]:
            t_no += 1
            nodes["topic"].append({"id": f"T-{k}-{t_no}", "nama": f"Topik {t_no}", "deskripsi": t, "MK": nama})
            rel("PURSUED_IN", "topic", f"T-{k}-{t_no}", "MK", k)
            rel("PART_OF", "topic", f"T-{k}-{t_no}", "LO", lo_id)
    for s in sorted(sos):
        rel("PURSUED_IN", "SO", f"KP.{s}", "MK", k)
        rel("PART_OF", "SO", f"KP.{s}", "LG", lg_id)


def build(so: dict[int, str], courses: list[dict]) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """The rows of every node CSV and every relationship CSV, by label and by type."""
    by_name = {c["nama"]: c for c in courses}
    check(len(by_name) == len(courses), "source", "two courses with one nama")
    seq: dict[int, int] = {}
    for c in courses:
        seq[c["semester"]] = seq.get(c["semester"], 0) + 1
        c["kode"] = f"{c['prefix']}21{c['semester']}{seq[c['semester']]:02d}{c['sks']}"
    nodes: dict[str, list[dict]] = {"MK": [], "SO": [], "LG": [], "LO": [], "topic": []}
    rels: dict[str, list[dict]] = {"PREREQUISITE": [], "CAN_PARALLELIZED": [], "PURSUED_IN": [], "PART_OF": []}

    def rel(t: str, fl: str, fi: str, tl: str, ti: str) -> None:
        rels[t].append(dict(zip(REL_FIELDS, (fl, fi, tl, ti))))

    nodes["SO"] = [{"id": f"KP.{n}", "kode": f"KP.{n}", "deskripsi": d} for n, d in so.items()]
    for c in courses:
        add_course(c, so, nodes, rel)
    for c in courses:
        for p in c["prasyarat"]:
            check(p in by_name and by_name[p]["semester"] < c["semester"], c["nama"], f"prasyarat {p!r}: no earlier MK")
            rel("PREREQUISITE", "MK", by_name[p]["kode"], "MK", c["kode"])  # p is a prerequisite of c
        for p in c["paralel"]:
            check(p in by_name and p not in c["prasyarat"], c["nama"], f"paralel {p!r}: no such MK, or a prasyarat")
            rel("CAN_PARALLELIZED", "MK", c["kode"], "MK", by_name[p]["kode"])
    return nodes, rels


def write(path: Path, rows: list[dict]) -> None:
    """One CSV: a header from the first row's keys (a relationship's fields when it has none), '\\n' line ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0] if rows else REL_FIELDS), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main(argv: list[str] | None = None) -> int:
    """Read the source, write nodes/ and rels/ under --out, print the row counts to stderr."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SOURCE, help="the folder of the YAML source")
    parser.add_argument("--out", type=Path, default=OUT, help="where nodes/ and rels/ are written")
    args = parser.parse_args(argv)
    try:
        so, courses = load(args.source)
        nodes, rels = build(so, courses)
    except (SourceError, YamlFileError) as exc:
        print(f"make_kurikulum: {exc}", file=sys.stderr)
        return 2
    for folder, tables in (("nodes", nodes), ("rels", rels)):
        for name, rows in tables.items():
            write(args.out / folder / f"{name}.csv", rows)
    wajib = sum(c["sks"] for c in courses if c["tipe"] == "Wajib")
    print(
        {k: len(v) for k, v in nodes.items()} | {k: len(v) for k, v in rels.items()},
        f"sks wajib={wajib}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
