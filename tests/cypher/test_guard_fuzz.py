"""Differential fuzz test: the guard's reading of a text against the database's own (issues 12 and 29).

Thousands of seeded texts mix keywords, numbers of every form, comments, line breaks,
strings, backticks and unicode spaces. For each, the guard's verdict is compared with what
LadybugDB reports without running anything (prepare + EXPLAIN: statement count, compile
error or plan operators), asked through the store's query process with the gate skipped (a
test-only path: the store itself never sends a text the gate refused). The one thing that must
never happen: the guard says "read" while the database sees more than one statement or a plan
that is not a read. A second fuzz covers the Neo4j-dialect rewriter: texts around the calls it
rewrites, with comments, strings and carriage returns; the gate's verdict on the raw text, its
verdict on the rewritten text and the database's view of the rewritten text must agree.
"""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from t2c_lib.cypher.dialect import normalise
from t2c_lib.cypher.gate import gate_check
from t2c_lib.graph.base import QueryError, QueryTimeout, UnsafeQuery
from t2c_lib.graph.ladybug_plan import DatabaseReading, PlanVerdict
from t2c_lib.validation.guard import check_read_only


def database_reading(store, text: str) -> DatabaseReading:
    """What LadybugDB alone reads in `text` (the gate skipped), without running it."""
    try:
        reply = store._worker().call(
            {"op": "plan", "text": text, "max_rows": None, "max_bytes": 0, "word_check": False},
            time.perf_counter(),
            10.0,
        )
    except UnsafeQuery as exc:  # several statements, or a compile message withheld for a text that is no read
        return DatabaseReading("more than one statement" in str(exc), str(exc), None)
    except (QueryError, QueryTimeout) as exc:
        return DatabaseReading(False, str(exc), None)
    plan = reply["plan"]
    return DatabaseReading(False, "", PlanVerdict(tuple(plan["operators"]), tuple(plan["functions"]), plan["refused"]))


SEED = 20261123
CASES = 4000
TIME_BUDGET_S = 90.0

READS = [
    "MATCH (m:MK) RETURN m.nama",
    "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks",
    "RETURN 1",
    "UNWIND [1, 2] AS x RETURN x",
    "MATCH (a:MK)-[:PREREQUISITE]->(b:MK) RETURN count(*)",
    "MATCH (m:MK) WHERE m.sks = 3 RETURN m.kode LIMIT 2",
    "UNWIND [1] AS x WITH x WHERE x = 1",
    "MATCH (m:MK) WITH m",
    "RETURN 1 AS x",
]
HOSTILE = [
    "LOAD FROM '/etc/hostname' (file_format='csv', header=false, delim=':') RETURN *",
    "COPY (MATCH (m:MK) RETURN m.nama) TO 'x.csv'",
    "CHECKPOINT",
    "EXPORT DATABASE 'dump'",
    "LOAD EXTENSION 'x.so'",
    "INSTALL json",
    "ATTACH 'o.lbdb' AS o (dbtype lbug)",
    "USE o",
    "DETACH o",
    "BEGIN TRANSACTION",
    "COMMIT",
    "CALL threads=4",
    "CALL current_setting('threads') RETURN *",
    "CREATE (:MK {nama: 'x'})",
    "MATCH (m:MK) SET m.sks = 1",
    "MATCH (m:MK) DELETE m",
    "MERGE (:MK {nama: 'x'})",
    "CREATE MACRO f(x) AS x",
    "CALL show_functions() RETURN *",
    "LOAD WITH HEADERS (a STRING) FROM 'x.csv' RETURN *",
]
WORDS = [
    "LOAD",
    "SET",
    "CREATE",
    "MERGE",
    "DELETE",
    "COPY",
    "CHECKPOINT",
    "EXPORT",
    "ATTACH",
    "USE",
    "RETURN",
    "MATCH",
    "WITH",
    "CALL",
    "INSTALL",
    "x",
    "m",
    "AS",
    "FROM",
    "WHERE",
    "e5",
    "E5",
    "x1F",
    "DETACH",
    "load",
    "Set",
]
NUMBERS = [
    "1",
    "3",
    "0",
    "007",
    "1.5",
    ".5",
    "1.",
    "3.0",
    "1e5",
    "1E5",
    "1e-5",
    "1e+5",
    "3e0",
    "0x3",
    "0x1F",
    "0o7",
    "1_000",
    "12345678901234567890",
]
SPACES = [
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x85",
    "\xa0",
    "\u2028",
    "\u2029",
    "\u200b",
    "\ufeff",
    "\u3000",
    "",
]
COMMENTS = ["//", "// c", "//*", "/*", "*/", "/* c */", "/* **/", "/***/", "/*/", "--", "#"]
LITERALS = [
    "'a'",
    "'it''s'",
    "'a\\'b'",
    "'a\\\\'",
    "'\\u0041'",
    "'\\q'",
    '"x"',
    '"a\\"b"',
    "'",
    '"',
    "`n`",
    "`a``b`",
    "`",
    "$p",
    "$1",
    "$`p`",
]
PUNCT = [";", ",", ".", "..", "(", ")", "{", "}", "[", "]", ":", "=", "*", "/", "|", "$", "é", "²"]


def _fragment(rng: random.Random) -> str:
    pool = rng.choices(
        [READS, HOSTILE, WORDS, NUMBERS, SPACES, COMMENTS, LITERALS, PUNCT],
        weights=[3, 3, 4, 4, 5, 4, 2, 3],
    )[0]
    return rng.choice(pool)


SINGLE_STATEMENT_TAILS = [
    "LOAD FROM '/etc/hostname' (file_format='csv', header=false, delim=':') RETURN *",
    "CALL current_setting('threads') RETURN *",
    "CALL show_functions() RETURN *",
    "MATCH (m:MK) SET m.sks = 1",
    "MATCH (m:MK) DELETE m",
    "CREATE (:MK {nama: 'x'})",
]


def _soup(rng: random.Random) -> str:
    """A read start, then random fragments glued with or without whitespace."""
    parts = [rng.choice(READS)] + [_fragment(rng) for _ in range(rng.randint(1, 7))]
    return "".join(parts) if rng.random() < 0.5 else rng.choice(SPACES).join(parts)


def _hidden_statement(rng: random.Random) -> str:
    """A read, something that might hide a boundary from one lexer, then a second statement."""
    hider = rng.choice(
        [
            ";",
            "; ",
            "//*{sp}*/ 1;",
            "// c{sp}1;",
            "/* **/ ' */;",
            "/*/ ;*/;",
            "//{sp};",
            "/* c */;",
            "{sp};{sp}",
            "/* **/;*/;",
            "'{sp}';",
            "`{sp}`;",
            "//'{sp}';",
        ]
    ).replace("{sp}", rng.choice(SPACES))
    return rng.choice(READS) + rng.choice(["", " "]) + hider + rng.choice(["", " ", "\n"]) + rng.choice(HOSTILE)


def _glued_clause(rng: random.Random) -> str:
    """A clause keyword glued to a number, or after a comment or space the lexers may end differently."""
    joint = rng.choice(NUMBERS) if rng.random() < 0.6 else rng.choice(COMMENTS) + rng.choice(SPACES)
    return "UNWIND [1] AS x WITH x WHERE x = " + joint + rng.choice(SINGLE_STATEMENT_TAILS + HOSTILE)


def _decorated_read(rng: random.Random) -> str:
    """A read with comments, strings, names and whitespace that must not change what it is."""
    read = rng.choice(READS)
    extra = rng.choice(["", " // note", " /* a */", " /* **/ */", "\n// LOAD FROM x\n", " /* CREATE */"])
    return rng.choice(SPACES[:8]) + read + extra + rng.choice(["", ";", " ;", ";\n"])


def fuzz_texts(seed: int, count: int) -> list[str]:
    """Seeded texts from four generators: random soup, hidden statements, glued clauses, decorated reads."""
    rng = random.Random(seed)
    makers = (_soup, _hidden_statement, _glued_clause, _decorated_read)
    return [rng.choice(makers)(rng) for _ in range(count)]


def test_fuzz_texts_are_seeded_and_varied() -> None:
    texts = fuzz_texts(SEED, 500)
    assert texts == fuzz_texts(SEED, 500)
    assert len(set(texts)) > 450
    assert any("\r" in t for t in texts) and any("1LOAD" in t or "0LOAD" in t for t in fuzz_texts(SEED, CASES))


@pytest.mark.slow
def test_guard_never_passes_what_the_database_reads_as_more_than_one_read(kurikulum_store) -> None:
    started = time.perf_counter()
    outcomes: Counter[str] = Counter()
    violations: list[tuple[str, str]] = []
    for text in fuzz_texts(SEED, CASES):
        if time.perf_counter() - started > TIME_BUDGET_S:
            break
        guard_says_read = check_read_only(text).ok
        reading = database_reading(kurikulum_store, text)
        db = (
            "several"
            if reading.several_statements
            else "error"
            if reading.error
            else "read"
            if reading.plan.ok
            else "non-read"
        )
        outcomes[f"guard={'read' if guard_says_read else 'refused'} db={db}"] += 1
        if guard_says_read and not reading.is_one_read:
            violations.append((text, reading.error or (reading.plan.refused if reading.plan else "")))
    total = sum(outcomes.values())
    print(f"\nfuzz: {total} texts in {time.perf_counter() - started:.1f} s: {dict(sorted(outcomes.items()))}")
    assert total >= 1000, "the time budget allowed too few cases to mean anything"
    assert outcomes["guard=refused db=several"] + outcomes["guard=refused db=non-read"] > 100, (
        "the fuzz hardly produced hostile texts"
    )
    assert outcomes["guard=read db=read"] > 100, "the fuzz hardly produced reads"
    assert violations == [], (
        f"{len(violations)} texts the guard passes but the database reads otherwise: {violations[:5]!r}"
    )


REWRITTEN_CALLS = [
    "substring(m.nama, 0, 3)",
    "substring(m.nama, 1)",
    "type(r)",
    "size((m)-[:PREREQUISITE]->())",
    "exists(m.nama)",
    "EXISTS { (m)-[:PREREQUISITE]->() }",
    "COUNT { (m)-->() }",
    "substring('a{c}b', 0)",
]
REWRITE_NOISE = [
    "",
    " ",
    "/* c */",
    "/* **/",
    "//",
    "// x\n",
    "//*\r",
    "\r",
    "\r\n",
    "'*/'",
    "`*/`",
    "*/",
    "/*",
    ",",
    ")",
    "(",
    "1",
    " LOAD FROM 'x.csv' RETURN *",
    " CREATE (:MK)",
    ";",
    " RETURN 1",
]


def _rewriter_text(rng: random.Random) -> str:
    """A read holding calls the rewriter changes, with comments, strings, CRs and hostile tails around them."""
    calls = [rng.choice(REWRITTEN_CALLS).replace("{c}", rng.choice(REWRITE_NOISE)) for _ in range(rng.randint(1, 3))]
    parts = ["MATCH (m:MK)-[r:PREREQUISITE]->(n:MK) RETURN "]
    for call in calls:
        parts += [rng.choice(REWRITE_NOISE) if rng.random() < 0.5 else "", call, rng.choice(REWRITE_NOISE), ", "]
    parts.append("1 AS one" + rng.choice(REWRITE_NOISE))
    return "".join(parts)


def test_rewriter_fuzz_texts_are_seeded_and_rewrite() -> None:
    texts = [_rewriter_text(random.Random(SEED + i)) for i in range(300)]
    assert texts == [_rewriter_text(random.Random(SEED + i)) for i in range(300)]
    assert sum(1 for t in texts if normalise(t).applied) > 100


@pytest.mark.slow
def test_guard_rewriter_and_database_agree_on_rewritten_texts(kurikulum_store) -> None:
    started = time.perf_counter()
    outcomes: Counter[str] = Counter()
    violations: list[tuple[str, str]] = []
    for i in range(1500):
        if time.perf_counter() - started > TIME_BUDGET_S:
            break
        text = _rewriter_text(random.Random(SEED + i))
        raw = gate_check(text, rewrite=False)
        final = gate_check(text)
        rewritten = normalise(text)
        if rewritten.applied and check_read_only(rewritten.query).ok != final.ok:
            violations.append((text, "the guard judges the rewritten text differently from the gate"))
        if raw.ok and not final.ok and final.refusal.value != "too_large":
            violations.append((text, f"a read the rewrite turned into a refusal: {final.message}"))
        if not final.ok:
            outcomes["refused"] += 1
            continue
        reading = database_reading(kurikulum_store, final.query)
        outcomes["read" if reading.is_one_read and not reading.error else "error" if reading.error else "non-read"] += 1
        if not reading.is_one_read:
            violations.append((text, reading.error or (reading.plan.refused if reading.plan else "")))
    print(f"\nrewriter fuzz: {dict(outcomes)} in {time.perf_counter() - started:.1f} s")
    assert outcomes["read"] > 100 and outcomes["refused"] > 100
    assert violations == [], f"{len(violations)} disagreements: {violations[:5]!r}"
