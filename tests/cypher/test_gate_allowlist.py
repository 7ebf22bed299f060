"""Issue 36's gate: an allow-list of read clauses, lexed per dialect, with no false refusal on either dataset.

Every gold query, few-shot example and conversation query of both datasets, and every read of the
existing fixtures, passes the gate in both dialects; every hostile class of the issue is refused in
both (its queries verbatim where the issue gives them), with the clause named. The comment rules of
the two databases are each tested, and a text they read differently is refused for both stores.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from t2c_lib.cypher.gate import Refusal, admit, gate_check
from t2c_lib.cypher.lexer import Dialect, Kind, LexError, strip_comments, tokenize
from t2c_lib.datasets import load_dataset
from t2c_lib.errors import QueryError, UnsafeQuery
from tests.helpers import FIXTURES, READ_CASES, WRITE_CASES, read_cases

DIALECTS = list(Dialect)


def dataset_queries(name: str) -> list[str]:
    """A dataset's gold queries (all of ground_truth.csv), few-shot examples and conversation queries (test and dev)."""
    dataset = load_dataset(name)
    queries = [q.cypher for q in dataset.questions] + [e.cypher for e in dataset.examples]
    dialogues = [*dataset.conversations, *load_dataset(name, "dev").conversations]
    queries += [turn.cypher for dialogue in dialogues for turn in dialogue.turns if turn.cypher]
    return queries


def fixture_reads() -> list[tuple[str, str, list[Dialect]]]:
    """Reads the existing tests expect to pass the guard: (where, query, dialects)."""
    reads: list[tuple[str, str, list[Dialect]]] = []
    for title, query in READ_CASES:
        only = [Dialect.NEO4J] if "(Neo4j)" in title else [Dialect.LADYBUG] if "(LadybugDB)" in title else DIALECTS
        reads.append((f"read_queries: {title}", query, only))
    hostile = yaml.safe_load((FIXTURES / "guard" / "hostile_round2.yaml").read_text(encoding="utf-8"))["cases"]
    for case in hostile:
        if case["expect"] != "gate" and "query" in case:
            reads.append((f"hostile_round2: {case['title']}", case["query"], DIALECTS))
    rewrites = yaml.safe_load((FIXTURES / "dialect" / "rewrites.yaml").read_text(encoding="utf-8"))
    for case in rewrites["rewrites"]:
        reads += [(f"rewrites: {case['name']}", case["input"], DIALECTS)]
    reads += [("rewrites: untouched", query, DIALECTS) for query in rewrites["untouched"]]
    for case in rewrites["agreement"]:
        reads += [
            (f"agreement: {case['rule']}", case[key], DIALECTS) for key in ("query", "neo4j", "plain") if key in case
        ]
    for path, dialect in (
        (FIXTURES / "validation" / "chain_cases.cypher", Dialect.LADYBUG),
        (FIXTURES / "neo4j" / "cyver_cases.cypher", Dialect.NEO4J),
    ):
        for title, query in read_cases(path):
            if title.split("|")[1].strip() != "guard":  # a case that fails a later step passes the guard
                reads.append((f"{path.name}: {title}", query, [dialect]))
    return reads


@pytest.mark.parametrize("dataset,expected", [("kurikulum", 156), ("movies", 549)])
def test_no_gold_query_or_example_is_refused_in_either_dialect(dataset: str, expected: int) -> None:
    queries = dataset_queries(dataset)
    assert len(queries) == expected  # kurikulum: 52 gold + 7 examples + 48 + 49 dev conversation queries;
    # movies: 474 + 6 + 34 + 35 dev (issue 53)
    for dialect in DIALECTS:
        refused = [(q, v.message) for q in queries if not (v := gate_check(q, dialect=dialect)).ok]
        assert refused == [], f"{dialect.value}: {len(refused)} of {len(queries)} refused: {refused[:3]}"
    print(f"\n{dataset}: {len(queries)} gold/example/conversation queries, 0 refused in either dialect")


def test_no_fixture_read_is_refused() -> None:
    """Every fixture read passes, except rewriter fixtures built on a `/* **/` comment the two databases end in
    different places: those are refused as ambiguous for both stores, and only those."""
    reads = fixture_reads()
    assert len(reads) >= 100
    refused = [
        (where, query, dialect, gate_check(query, dialect=dialect))
        for where, query, dialects in reads
        for dialect in dialects
        if not gate_check(query, dialect=dialect).ok
    ]
    assert all(v.refusal is Refusal.AMBIGUOUS and "**/" in q for _, q, _, v in refused), refused
    assert {w for w, *_ in refused} == {
        "rewrites: a block comment kept open by `**/` hides the call from the rewriter as from the database"
    }


LOAD_ALIAS = (
    "UNWIND [1] AS LOAD WITH * LOAD FROM '/etc/passwd' (file_format='csv', header=false, delim=':') "
    "WITH * LOAD FROM '/etc/passwd' (file_format='csv', header=false, delim=':') RETURN *"
)

HOSTILE = [
    # (clause the verdict must name, query): the classes, verbatim where it gives them
    ("LOAD FROM", LOAD_ALIAS),
    (
        "LOAD FROM",
        "UNWIND [1] AS LOAD WITH * LOAD FROM '/etc/passwd' (...) WITH * LOAD FROM '/etc/passwd' (...) RETURN *",
    ),
    ("LOAD FROM", "UNWIND [1] AS LOAD WITH * LOAD FROM '/proc/self/cmdline' (header=false) RETURN *"),
    ("LOAD FROM", "UNWIND [1] AS load WITH * LOAD FROM '/tmp/*.txt' (header=false) RETURN *"),
    ("LOAD FROM", "UNWIND [1] AS LOAD RETURN * LOAD FROM '../../.cache/neo4j/password' RETURN *"),
    ("LOAD", "UNWIND [1] AS LOAD WITH LOAD LOAD FROM '/etc/passwd' RETURN *"),
    ("LOAD FROM", "UNWIND [1] AS LOAD WITH *, LOAD AS x LOAD FROM '/etc/passwd' RETURN *"),
    ("LOAD FROM", "WITH 1 AS x ORDER BY x LOAD FROM '/etc/passwd' RETURN *"),
    ("LOAD CSV", "UNWIND [1] AS LOAD WITH * LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row"),
    ("COPY", "UNWIND [1] AS COPY WITH * COPY (MATCH (m:MK) RETURN m.nama) TO '/tmp/o.csv'"),
    ("LOAD EXTENSION", "UNWIND [1] AS LOAD WITH * LOAD EXTENSION '/tmp/evil.so'"),
    ("SET", "UNWIND [1] AS SET WITH * MATCH (m:MK) SET m.sks = 0"),
    ("CREATE", "WITH 1 AS create RETURN create CREATE (:MK {nama: 'x'})"),
    ("CREATE", "WITH 1 AS not RETURN not CREATE (n)"),
    ("LOAD CSV", "WITH 1 AS distinct RETURN distinct LOAD CSV FROM 'file:///x' AS r RETURN r"),
    ("REMOVE", "MATCH (m:MK) WITH m, 2 AS k RETURN k * REMOVE"),
    # words the gate did not know
    ("UPDATE", "UPDATE json"),
    ("UPDATE", "MATCH (m:MK) RETURN m.nama UPDATE json"),
    ("ANALYZE", "ANALYZE"),
    ("ANALYZE", "MATCH (m:MK) WITH m ANALYZE"),
    ("INSERT", "INSERT (:MK {nama: 'x'})"),
    ("INSERT", "MATCH (m:MK) INSERT (m)-[:PREREQUISITE]->(:MK {nama: 'y'})"),
    ("UPSERT", "MATCH (a:MK) RETURN a.sks UPSERT (a)"),
    ("FOO", "MATCH (m:MK) WHERE m.sks = 3 FOO (m)"),
    ("apoc.cypher.runFirstColumnSingle", "RETURN `apoc`.cypher.runFirstColumnSingle('MATCH (n) RETURN n', {}) AS x"),
    ("apoc.cypher.doIt", "RETURN `apoc`.`cypher`.doIt('CREATE (n)', {}) AS x"),
    ("apoc.cypher.run", "RETURN `apoc.cypher.run`('CREATE (n)', {}) AS x"),
    ("CALL apoc.cypher.runWrite", "CALL `apoc`.cypher.runWrite('CREATE (n)', {})"),
    ("CALL { } IN TRANSACTIONS", "MATCH (n) CALL (n) { RETURN n AS x } IN TRANSACTIONS RETURN x"),
    ("CREATE", "MATCH (n) RETURN n { CREATE (x) }"),
    ("LOAD CSV", "MATCH ((a)-->(b))+ LOAD CSV FROM 'file:///x' AS r RETURN r"),
    ("USE SYSTEM", "USE system MATCH (n) RETURN n"),
    ("CYPHER", "CYPHER runtime=slotted MATCH (n) RETURN n"),
]


@pytest.mark.parametrize("dialect", DIALECTS, ids=[d.value for d in DIALECTS])
@pytest.mark.parametrize("clause,query", HOSTILE, ids=[q[:60] for _, q in HOSTILE])
def test_each_hostile_class_is_refused_with_the_clause_named(clause: str, query: str, dialect: Dialect) -> None:
    verdict = gate_check(query, dialect=dialect)
    expected = Refusal.UNKNOWN_WORD if clause == "FOO" else Refusal.NOT_READ_ONLY  # a word no grammar knows
    assert verdict.refusal is expected, verdict.message
    assert clause.lower() in (verdict.clause or "").lower() and clause.lower() in verdict.message.lower()
    with pytest.raises(QueryError if clause == "FOO" else UnsafeQuery, match="refused before the database"):
        admit(query, dialect=dialect)


ALIAS_READS = [
    "MATCH (load:MK) RETURN load.nama",
    "MATCH (m:MK) WITH m.sks AS load RETURN load",
    "MATCH (m:MK) WITH m.sks AS set RETURN set",
    "MATCH (m:MK) WITH m.sks AS call RETURN call",
    "MATCH (m:MK) WITH m.sks AS remove RETURN remove",
    "MATCH (m:MK) RETURN m.sks AS load ORDER BY load",
    "MATCH (m:MK) WITH m.sks AS set, m.nama AS load RETURN load, set ORDER BY set DESC, load",
    "MATCH (m:MK) WITH m.sks AS load WHERE load > 3 RETURN count(load)",
    "UNWIND [1, 2] AS call RETURN call, call * 2 AS twice",
    "MATCH (set:MK)-[:PREREQUISITE]->(remove:MK) RETURN set.nama, remove.nama",
    "MATCH (m:MK) WITH collect(m.nama) AS load RETURN size(load), load[1]",
    "UNWIND [1] AS LOAD WITH * RETURN *",
    "MATCH load = (a:MK)-[:PREREQUISITE]->(b:MK) RETURN length(load) LIMIT 1",
    "MATCH (m:MK) WITH m.sks AS load WITH load WHERE load > 3 RETURN count(*)",
]


@pytest.mark.parametrize("query", ALIAS_READS)
def test_aliases_named_like_clause_words_pass_where_they_are_plainly_values(query: str, kurikulum_store) -> None:
    for dialect in DIALECTS:
        assert gate_check(query, dialect=dialect).ok, (dialect, gate_check(query, dialect=dialect).message)
    kurikulum_store.query(query)  # and the embedded database reads each of them as a query


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (m:MK) WITH m.sks AS load RETURN 2 * load",  # after `*`, `+`, `-`: a star or quantifier in Neo4j
        "MATCH (m:MK) WITH m.sks > 3 AS set WHERE NOT set RETURN 1",  # NOT, CASE, DISTINCT may be variables in Neo4j
        "MATCH (m:MK) WITH m.sks AS load RETURN DISTINCT load",
        "MATCH (m:MK) WITH m.sks AS load RETURN load FROM",  # a DENY word followed by another word: command shape
        "UNWIND [1] AS load WITH load WITH HEADERS",  # LOAD WITH HEADERS: LadybugDB's file read
    ],
)
def test_remaining_false_refusal_classes_are_known(query: str) -> None:
    """Where a DENY word could be read either way, the gate refuses (safety first); these classes are reported."""
    assert not gate_check(query).ok


def test_the_walk_knows_every_read_clause_form() -> None:
    reads = [
        "MATCH (m:MK) WHERE m.nama STARTS WITH 'B' AND m.sks IS NOT NULL RETURN m.nama",
        "MATCH (m:MK) RETURN CASE m.sks WHEN 3 THEN 'a' ELSE 'b' END AS c",
        "MATCH (m:MK) RETURN (m.sks + 1) * 2 AS d, count(*) AS n",
        "MATCH (m:MK) WHERE COUNT { (m)<-[:PREREQUISITE]-() } > 1 RETURN m.nama",
        "MATCH p = shortestPath((a:MK)-[*]-(b:MK)) RETURN length(p) LIMIT 1",
        "RETURN [x IN range(1, 3) WHERE x > 1 | x * 2] AS xs",
        "MATCH (m:MK) WITH *, 1 AS one RETURN * ORDER BY one SKIP 1 LIMIT 2",
        "MATCH (m:MK) RETURN m.nama AS x UNION ALL MATCH (t:topic) RETURN t.nama AS x",
        "MATCH (m:MK) CALL { WITH m RETURN m.sks AS s } RETURN s",
        "OPTIONAL MATCH (m:MK)-[:PREREQUISITE]->(n) RETURN m, n",
        "MATCH (n) WHERE n:MK|SO RETURN labels(n)",
        "MATCH (m:MK) WITH count(m) AS c MATCH (t:topic) WITH count(t) AS d, c RETURN (d) * c, size([1, 2]) + c",
        "MATCH (m:MK) RETURN m {load: m.nama, set: m.sks} AS x",  # a map projection (Neo4j's; LadybugDB has none)
    ]
    neo4j_only = [
        "CALL db.labels() YIELD label WHERE label STARTS WITH 'M' RETURN label",
        "MATCH p = ANY SHORTEST (a:MK)-[:PREREQUISITE]-+(b:MK) RETURN length(p)",
        "MATCH (a:MK) ((x)-[:PREREQUISITE]->(y)){1,3} (b:MK) RETURN b.nama",
        "MATCH (m:MK) CALL (m) { RETURN m.sks AS s } RETURN s",
        "MATCH (m:MK) RETURN COLLECT { MATCH (m)-->(x) RETURN x.nama } AS xs",
    ]
    for query in reads:
        for dialect in DIALECTS:
            assert gate_check(query, dialect=dialect).ok, (query, gate_check(query, dialect=dialect).message)
    for query in neo4j_only:
        assert gate_check(query, dialect=Dialect.NEO4J).ok, (query, gate_check(query, dialect=Dialect.NEO4J).message)
    assert gate_check("CALL table_info('MK') RETURN *", dialect=Dialect.LADYBUG).ok


# --- lexing per dialect ------------------------------------------------------------------------------

STAR_COMMENT = "MATCH (n) RETURN n /* **/ CREATE (m) //*/"


def test_each_dialect_ends_a_block_comment_by_its_own_rule() -> None:
    ladybug = [t.text for t in tokenize(STAR_COMMENT, Dialect.LADYBUG, agree=False)]
    neo4j = [t.text for t in tokenize(STAR_COMMENT, Dialect.NEO4J, agree=False)]
    assert ladybug == ["MATCH", "(", "n", ")", "RETURN", "n"]  # `*` swallows the next character: /* **/ stays open
    assert neo4j[6:] == ["CREATE", "(", "m", ")"]  # the first */ ends it (Cypher5Lexer: '/*' .*? '*/')
    assert strip_comments("RETURN 1 /***/ + 1", Dialect.NEO4J, agree=False) == "RETURN 1   + 1"
    with pytest.raises(LexError, match="unterminated"):
        tokenize("RETURN 1 /***/ + 1", Dialect.LADYBUG, agree=False)
    assert [t.text for t in tokenize("RETURN 1 /* a */ + 2", Dialect.NEO4J)] == ["RETURN", "1", "+", "2"]


@pytest.mark.parametrize(
    "query",
    [
        STAR_COMMENT,
        "RETURN 1 /* **/ ; CREATE (x) /* */",
        "RETURN 1 /* **/ CALL dbms.components() YIELD name RETURN name //*/",
        "RETURN 1 /* **/ LOAD CSV FROM 'file:///etc/passwd' AS r RETURN r //*/",
        "RETURN 1 /* **/ SHOW DATABASES //*/",
        "/* **/ USE system SHOW USERS //*/ RETURN 1",
        "MATCH (n) WHERE n.x =~ '.*' /* **/ RETURN n //*/",
    ],
)
def test_a_comment_the_dialects_end_differently_is_refused_for_both(query: str) -> None:
    for dialect in DIALECTS:
        verdict = gate_check(query, dialect=dialect)
        assert verdict.refusal is Refusal.AMBIGUOUS, (dialect, verdict.message)
        assert "LadybugDB and Neo4j" in verdict.message


def test_a_line_comment_with_a_lone_carriage_return_is_refused_for_both() -> None:
    query = "MATCH (n) RETURN n // note\rCREATE (m)"  # Neo4j ends the comment at CR; LadybugDB reads // as code
    for dialect in DIALECTS:
        assert gate_check(query, dialect=dialect).refusal is Refusal.AMBIGUOUS
    assert gate_check("MATCH (n) RETURN n // note\r\n", dialect=Dialect.NEO4J).ok


def test_literals_and_names_lex_alike_in_both_dialects() -> None:
    text = "MATCH (n:`a*/b` {x: '/* no comment */'}) WHERE n.y = \"it\\'s\" RETURN n.`set` AS `LOAD`"
    assert tokenize(text, Dialect.LADYBUG) == tokenize(text, Dialect.NEO4J)
    assert [t.kind for t in tokenize(text, Dialect.NEO4J) if t.text == "LOAD"] == [Kind.QUOTED]


def test_the_stores_pass_their_dialect() -> None:
    """The Neo4j store and CyVer's driver admit in Neo4j's dialect; the embedded store uses the default."""
    from t2c_lib.graph import ladybug, neo4j
    from t2c_lib.validation import cyver

    assert Path(neo4j.__file__).read_text(encoding="utf-8").count("dialect=Dialect.NEO4J") >= 2
    assert "dialect=Dialect.NEO4J" in Path(cyver.__file__).read_text(encoding="utf-8")
    assert "Dialect.NEO4J" not in Path(ladybug.__file__).read_text(encoding="utf-8")


def test_the_embedded_store_refuses_the_alias_walk_before_the_database(kurikulum_store) -> None:
    before = kurikulum_store.counts()
    with pytest.raises(UnsafeQuery, match="refused before the database: LOAD FROM") as caught:
        kurikulum_store.query(LOAD_ALIAS, timeout_s=5)
    assert "root:" not in str(caught.value)
    assert kurikulum_store.counts() == before


# --- refusals per rule class ---------------------------------------------------------------------------


def rule_class(query: str, dialect: Dialect) -> str:
    """The rule class that refused `query` ("passed" if none)."""
    verdict = gate_check(query, dialect=dialect)
    if verdict.ok:
        return "passed"
    if verdict.refusal is not Refusal.NOT_READ_ONLY:
        return verdict.refusal.value
    message = verdict.message
    for needle, name in (
        ("is not a read clause", "not a read clause (allow-list)"),
        ("write clause", "write clause"),
        ("files or loads code", "file or code command"),
        ("admin", "admin or transaction command"),
        ("procedure", "procedure not allowed"),
        ("function", "denied function"),
        ("more than one statement", "several statements"),
        ("IN TRANSACTIONS", "CALL IN TRANSACTIONS"),
        ("box-drawing", "plan characters"),
    ):
        if needle in message:
            return name
    return "not a read clause (allow-list)"


def hostile_corpus() -> list[str]:
    """The write corpus, both fixture files of hostile texts (placeholders as written) and this file's classes."""
    texts = [q for _, q in WRITE_CASES] + [q for _, q in HOSTILE]
    for name in ("bypasses.yaml", "hostile_round2.yaml"):
        cases = yaml.safe_load((FIXTURES / "guard" / name).read_text(encoding="utf-8"))["cases"]
        texts += [c["query"] for c in cases if "query" in c and c.get("expect", "gate") == "gate"]
    return texts


def test_refusals_per_rule_class_on_the_hostile_corpus() -> None:
    texts = hostile_corpus()
    for dialect in DIALECTS:
        counts = Counter(rule_class(text, dialect) for text in texts)
        print(f"\n{dialect.value}: {len(texts)} hostile texts: {dict(sorted(counts.items()))}")
        assert counts["passed"] == 0
        assert counts[Refusal.UNKNOWN_WORD.value] >= 1  # unknown words; known ones are counted by kind


# --- Neo4j's own reading (live server; skipped without one) -------------------------------------------


def neo4j_reading(store, text: str) -> str:
    """What Neo4j reads in `text` without running it (EXPLAIN in a READ session, the gate skipped): read, non-read, error."""
    import neo4j

    from t2c_lib.graph.neo4j import _check_read_only_plan

    try:
        with store.driver.session(default_access_mode=neo4j.READ_ACCESS) as session:
            summary = session.run("EXPLAIN " + text).consume()
    except neo4j.exceptions.Neo4jError:
        return "error"
    try:
        _check_read_only_plan(summary)
    except UnsafeQuery:
        return "non-read"
    return "read"


@pytest.mark.neo4j
def test_neo4j_reads_the_comments_as_its_dialect_says(neo4j_kurikulum) -> None:
    """Neo4j 5 ends `/* **/` at its first `*/` and a `//` comment at a carriage return: the code after is code."""
    assert neo4j_reading(neo4j_kurikulum, "RETURN 1 /* **/ + 1") == "read"
    assert neo4j_reading(neo4j_kurikulum, "RETURN 1 /***/ + 1") == "read"
    assert neo4j_reading(neo4j_kurikulum, "MATCH (m:MK) WITH m /* **/ SET m.sks = 0 //*/") == "non-read"
    assert neo4j_reading(neo4j_kurikulum, "UNWIND [1] AS LOAD WITH * LOAD CSV FROM 'file:///x' AS r RETURN r") == (
        "non-read"
    )
    for text in ("MATCH (m:MK) WITH m /* **/ SET m.sks = 0 //*/", "MATCH (m:MK) WITH m // c\rSET m.sks = 0"):
        assert not gate_check(text, dialect=Dialect.NEO4J).ok


@pytest.mark.neo4j
def test_the_gate_never_passes_what_neo4j_reads_as_more_than_a_read(neo4j_kurikulum) -> None:
    """Differential: the Neo4j-dialect gate against Neo4j's EXPLAIN on the seeded fuzz texts and this file's corpus."""
    from tests.cypher.test_guard_fuzz import SEED, fuzz_texts

    texts = fuzz_texts(SEED, 2000) + hostile_corpus() + [q for _, q in HOSTILE]
    outcomes: Counter[str] = Counter()
    violations = []
    for text in texts:
        if not gate_check(text, dialect=Dialect.NEO4J).ok:
            outcomes["refused"] += 1
            continue
        reading = neo4j_reading(neo4j_kurikulum, text)
        outcomes[f"gate=read db={reading}"] += 1
        if reading == "non-read":
            violations.append(text)
    print(f"\nNeo4j differential: {dict(outcomes)}")
    assert outcomes["gate=read db=read"] > 100 and outcomes["refused"] > 500
    assert violations == []


@pytest.mark.parametrize("dialect", list(Dialect))
def test_a_typo_at_a_clause_position_is_refused_as_a_syntax_error_not_as_unsafe(dialect):
    """`LIMT` is refused before the database all the same, but the model hears a syntax error (as the parser
    would have said), while a write or file word stays unsafe."""
    typo = gate_check("MATCH (n:Person) RETURN n.name LIMT 3", dialect=dialect)
    assert typo.refusal is Refusal.UNKNOWN_WORD and typo.clause == "LIMT"
    with pytest.raises(QueryError) as raised:
        admit("MATCH (n:Person) RETURN n.name LIMT 3", dialect=dialect)
    assert raised.value.kind == "syntax"
    for hostile in ("MATCH (n) RETURN n LOAD FROM '/etc/passwd' RETURN *", "MATCH (n) DETACH DELETE n"):
        assert gate_check(hostile, dialect=dialect).refusal is Refusal.NOT_READ_ONLY
        with pytest.raises(UnsafeQuery):
            admit(hostile, dialect=dialect)
