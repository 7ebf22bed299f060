"""Generate `t2c_lib/cypher/ladybug_keywords.py`: the words LadybugDB's parser refuses as a bare name.

Not a hand list: the candidates are every capitalised word in the installed `ladybug` package's
shared library (its grammar's literal names among them) plus openCypher's and Neo4j 5's keywords;
a candidate is a keyword when the parser refuses it in any name position (a label, a relationship
type, a property, a map key). Each probe is only prepared, on an empty in-memory database: a
parser error means the word needs backticks, a binder error ("table does not exist") means it
does not. Usage: `python tools/ladybug_keywords.py [--check]` (`--check`: exit 1 when the committed
module differs from what the installed parser says).
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "t2c_lib" / "cypher" / "ladybug_keywords.py"

PROBES = (
    "MATCH (n:{w}) RETURN n",
    "MATCH ()-[r:{w}]->() RETURN r",
    "MATCH (n) RETURN n.{w}",
    "RETURN {{{w}: 1}}",
)
"""The name positions probed; a word the parser refuses in any of them is listed."""

CYPHER_KEYWORDS = """
ALL AND ANY AS ASC ASCENDING BY CALL CASE CONTAINS COUNT CREATE DELETE DESC DESCENDING DETACH
DISTINCT ELSE END ENDS EXISTS FALSE FOREACH IN IS LIMIT MATCH MERGE NONE NOT NULL ON OPTIONAL OR
ORDER REMOVE RETURN SET SINGLE SKIP STARTS THEN TRUE UNION UNWIND WHEN WHERE WITH XOR YIELD
ADD CONSTRAINT DO DROP FOR FROM GRAPH KEY MANDATORY OF REQUIRE SCALAR UNIQUE USE GROUP LOAD COPY
INDEX TABLE PRIMARY TRANSACTION BEGIN COMMIT ROLLBACK SHOW SUBQUERY CAST
"""
"""openCypher's reserved words and Neo4j 5's clause words, probed besides the library's strings."""

_WORD = re.compile(rb"(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]{1,31}(?![A-Za-z0-9_])")


def candidates() -> list[str]:
    """Every capitalised word in the installed parser's shared library, plus CYPHER_KEYWORDS."""
    import ladybug

    words = set(CYPHER_KEYWORDS.split())
    for library in sorted(Path(ladybug.__file__).parent.glob("_lbug*.so")):
        words |= {m.decode("ascii") for m in _WORD.findall(library.read_bytes())}
    return sorted(words)


def probe(words: list[str]) -> list[str]:
    """The words the installed LadybugDB parser refuses in at least one name position (PROBES)."""
    import ladybug

    warnings.simplefilter("ignore", DeprecationWarning)
    db = ladybug.Database(":memory:")
    conn = ladybug.Connection(db)

    def refused(text: str) -> bool:
        try:
            prepared = conn.prepare(text)
        except RuntimeError as exc:
            return str(exc).startswith("Parser exception")
        return not prepared.is_success() and prepared.get_error_message().startswith("Parser exception")

    try:
        return sorted(w for w in words if any(refused(p.format(w=w)) for p in PROBES))
    finally:
        conn.close()
        db.close()


def render(keywords: list[str], version: str) -> str:
    """The module's text (the words eight to a line, so a change reads as a small diff)."""
    rows = [keywords[i : i + 8] for i in range(0, len(keywords), 8)]
    body = "\n".join("        " + " ".join(f'"{w}",' for w in row) for row in rows)
    return (
        '"""LadybugDB\'s reserved words: names that need backticks on the embedded store (GENERATED, do not edit).\n\n'
        f"Made by `tools/ladybug_keywords.py` from the parser of ladybug {version}: each word is refused by\n"
        "that parser as a bare label, relationship type, property or map key, which Neo4j accepts (`Order`,\n"
        "`Group`, `End`); the Neo4j-dialect rewrite (`cypher/dialect.py`) backticks them in those positions.\n"
        "Compared case-insensitively (the parser's keywords are). `tests/cypher/test_keyword_labels.py` checks\n"
        'that this list is what the installed parser says.\n"""\n\n'
        "from __future__ import annotations\n\n"
        f'LADYBUG_VERSION = "{version}"\n'
        '"""The ladybug version whose parser was probed."""\n\n'
        "KEYWORDS = frozenset(\n    {\n" + body + "\n    }\n)  # fmt: skip\n"
        '"""Upper-case words LadybugDB\'s parser refuses as a bare name."""\n'
    )


def generated() -> str:
    """The module text the installed parser gives."""
    import ladybug

    return render(probe(candidates()), getattr(ladybug, "__version__", "unknown"))


def main(argv: list[str]) -> int:
    text = generated()
    if "--check" in argv:
        same = TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{TARGET.relative_to(ROOT)} differs from the installed parser: regenerate")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
