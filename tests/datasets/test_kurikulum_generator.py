"""tools/make_kurikulum.py: its YAML source regenerates the committed curriculum CSVs byte for byte, and a broken source is one line."""

from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest

from tests.helpers import ROOT

spec = importlib.util.spec_from_file_location("make_kurikulum", ROOT / "tools" / "make_kurikulum.py")
make_kurikulum = importlib.util.module_from_spec(spec)
sys.modules["make_kurikulum"] = make_kurikulum
spec.loader.exec_module(make_kurikulum)

DATASET = ROOT / "data" / "kurikulum"
GENERATED = ("nodes", "rels")


def _csvs(root) -> dict[str, bytes]:
    """Relative path -> bytes of every CSV the generator writes under `root`."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for folder in GENERATED
        for p in sorted((root / folder).glob("*"))
    }


def test_regenerating_gives_the_committed_csvs_byte_for_byte(tmp_path, capsys):
    assert make_kurikulum.main(["--out", str(tmp_path)]) == 0
    committed, regenerated = _csvs(DATASET), _csvs(tmp_path)
    assert len(committed) == 9
    assert sorted(regenerated) == sorted(committed)
    assert [name for name in committed if regenerated[name] != committed[name]] == []
    assert "'MK': 63" in capsys.readouterr().err


def _copy(tmp_path):
    """A copy of the committed source, to break."""
    return shutil.copytree(make_kurikulum.SOURCE, tmp_path / "source")


def _broken_copy(tmp_path, name: str, old: str, new: str):
    """A copy of the source with `old` replaced by `new` once in file `name`."""
    source = _copy(tmp_path)
    text = (source / name).read_text(encoding="utf-8")
    assert old in text
    (source / name).write_text(text.replace(old, new, 1), encoding="utf-8")
    return source


@pytest.mark.parametrize(
    ("name", "old", "new", "said"),
    [
        ("wajib-semester-1.yaml", "  sks: 3\n", "  sks: 3\n  skss: 3\n", "unknown keys ['skss']"),
        ("wajib-semester-1.yaml", "  sks: 3\n", "  sks: '3'\n", "sks: not an integer"),
        ("wajib-semester-1.yaml", "    so: [7]\n", "    so: [12]\n", "not 1-2 known SOs"),
        ("wajib-semester-2.yaml", "- Kalkulus Variabel Tunggal", "- Tugas Akhir", "prasyarat 'Tugas Akhir'"),
        ("wajib-semester-1.yaml", "  tipe: Wajib\n", "  tipe: wajib\n", "tipe 'wajib': Wajib or Pilihan"),
        ("so.yaml", "- nomor: 2\n", "- nomor: 1\n", "so.yaml: two SOs with one nomor"),
        ("so.yaml", "- nomor: 1\n", "- nomor: [1\n", "so.yaml: not valid YAML"),
        ("so.yaml", "- nomor: 1\n", "- nomor: 1\n  kode: KP.1\n", "so.yaml: missing keys [], unknown keys ['kode']"),
    ],
)
def test_a_broken_source_is_refused_in_one_line(tmp_path, capsys, name, old, new, said):
    source = _broken_copy(tmp_path, name, old, new)
    assert make_kurikulum.main(["--source", str(source), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing half written


def test_a_course_file_the_generator_does_not_read_is_refused(tmp_path, capsys):
    source = _copy(tmp_path)
    (source / "pilihan-sains-data.yaml").write_text("[]\n", encoding="utf-8")
    assert make_kurikulum.main(["--source", str(source), "--out", str(tmp_path / "out")]) == 2
    assert "['pilihan-sains-data.yaml'] not read" in capsys.readouterr().err
