"""The schema corrector on hand-made broken queries over the real curriculum store, schema and value index."""

from __future__ import annotations

import pytest

from t2c_lib.agent.corrector import correct, nearest_name, nearest_value
from t2c_lib.validation import build_chain, make_context
from t2c_lib.validation.chain import run_chain
from t2c_lib.validation.names import NameSet


@pytest.fixture(scope="module")
def ctx(kurikulum_store):
    return make_context(kurikulum_store, timeout_s=2.0)


@pytest.fixture(scope="module")
def chain(kurikulum_store):
    return build_chain(kurikulum_store)


def passes(query, chain, ctx) -> bool:
    ctx.reset()
    results = run_chain(query, chain, ctx)
    return len(results) == len(chain) and all(r.ok for r in results)


CASES = [
    (
        "MATCH (m:MK)-[:PURSUED_IN]->(s:SO) RETURN s.kode",
        "MATCH (m:MK)<-[:PURSUED_IN]-(s:SO) RETURN s.kode",
        "direction",
    ),
    (
        "MATCH (s:SO)<-[:PURSUED_IN]-(m:MK {nama: 'Basis Data'}) RETURN s.kode",
        "MATCH (s:SO)-[:PURSUED_IN]->(m:MK {nama: 'Basis Data'}) RETURN s.kode",
        "direction",
    ),
    ("MATCH (m:MKK {nama: 'Basis Data'}) RETURN m.sks", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", "label"),
    (
        "MATCH (a:MK)-[:PREREQUISTE]->(b:MK) RETURN b.nama",
        "MATCH (a:MK)-[:PREREQUISITE]->(b:MK) RETURN b.nama",
        "relationship type",
    ),
    ("MATCH (m:MK {nama: 'Basis Data'}) RETURN m.skss", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", "property"),
    ("MATCH (m:MK {nma: 'Basis Data'}) RETURN m.sks", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", "property"),
    ("MATCH (m:MK {nama: 'basis data'}) RETURN m.sks", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", "value"),
    (
        "MATCH (m:MK) WHERE m.nama = 'Basis Dta' RETURN m.sks",
        "MATCH (m:MK) WHERE m.nama = 'Basis Data' RETURN m.sks",
        "value",
    ),
]


@pytest.mark.parametrize(("broken", "fixed", "kind"), CASES, ids=[c[2] + str(i) for i, c in enumerate(CASES)])
def test_a_mechanical_mistake_is_corrected_and_the_chain_then_passes(broken, fixed, kind, ctx, chain):
    assert not passes(broken, chain, ctx)
    correction = correct(broken, ctx)
    assert correction is not None and correction.query == fixed
    assert len(correction.changes) == 1 and correction.changes[0].startswith(kind)
    assert passes(correction.query, chain, ctx)


def test_several_mistakes_in_one_query_are_each_corrected_and_listed(ctx, chain):
    broken = "MATCH (m:MKK {nma: 'basis data'})-[:PURSUED_IN]->(s:SO) RETURN s.kode"
    correction = correct(broken, ctx)
    assert correction.query == "MATCH (m:MK {nama: 'Basis Data'})<-[:PURSUED_IN]-(s:SO) RETURN s.kode"
    assert [c.split()[0] for c in correction.changes] == ["label", "property", "direction", "value"]
    assert passes(correction.query, chain, ctx)


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (m:Matkul) RETURN m.nama",  # no valid label is near: a model's job
        "MATCH (m:MK) WHERE m.nama = 'Basis' RETURN m.sks",  # several stored names are as near: ambiguous
        "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.kredit",  # a synonym, not a typo
        "MATCH (t:topic)-[:PART_OF]->(s:SO) RETURN s.kode",  # no direction of PART_OF joins topic and SO
        "MATCH (m:MK) RETURN [x IN [1, 2] | x], {a: m.nama}",  # list and map syntax are no labels
        "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks",  # nothing wrong
        "MATCH (m:MK) RETURN m.nama, 'basis dta' AS note",  # a literal compared with nothing
    ],
)
def test_what_is_not_mechanical_or_ambiguous_is_left_alone(query, ctx):
    assert correct(query, ctx) is None


def test_an_ambiguous_name_is_left_alone():
    names = NameSet(["nama", "kode", "sks", "semester", "jalur"], case_sensitive=False)
    assert nearest_name("nma", names) == "nama"
    assert nearest_name("sk", names) is None  # two characters: only a different case is corrected
    two = NameSet(["kode", "kade"], case_sensitive=True)
    assert nearest_name("kide", two) is None  # one edit from both
    assert nearest_name("KODE", two) == "kode"  # case, on a case-sensitive store
    assert nearest_value("Basis", ["Basis Data", "Basis Data Lanjut"]) is None
    assert nearest_value("Sistem Operasi", ["Sistem Operasi"]) is None  # stored already


def test_the_corrected_query_still_goes_through_the_gate(ctx):
    """Only token spans are edited; a literal is written with escapes and the result is judged by the gate again."""
    correction = correct("MATCH (m:MK) WHERE m.nama = 'basis data' RETURN m.sks // note: m.nama = 'x'", ctx)
    assert correction is not None and "'Basis Data'" in correction.query
    assert correction.query.endswith("// note: m.nama = 'x'")  # the comment's text is no filter: untouched
    assert correct("MATCH (m:MKK) DETACH DELETE m", ctx) is None  # the label is fixable, but the gate refuses the write
    assert correct("MATCH (m:MKK {nama: 'unterminated) RETURN m", ctx) is None  # unreadable: nothing offered
