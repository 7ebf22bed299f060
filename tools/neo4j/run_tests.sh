#!/usr/bin/env bash
# Run the test suite with a local Neo4j server up for the `neo4j`-marked tests.
#
#   tools/neo4j/run_tests.sh PYTHON [pytest args...]
#
# Starts the server (tools/neo4j/neo4j.sh) when Java is present and none is running, runs
# pytest with a JUnit report, stops the server again if it started it, and counts the
# Neo4j tests that actually ran. With a server up, T2C_REQUIRE_NEO4J=1 is exported so the
# Neo4j tests fail rather than skip. T2C_REQUIRE_NEO4J=1 (or CI=true) in the caller's
# environment makes a missing Java, a server that will not start, or zero Neo4j tests run
# an error; otherwise each of those is reported loudly and the suite runs without them.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY="${1:?usage: run_tests.sh PYTHON [pytest args...]}"
shift
REQUIRE="${T2C_REQUIRE_NEO4J:-0}"
[[ "${CI:-}" == "true" ]] && REQUIRE=1
JUNIT="$ROOT/.cache/pytest-junit.xml"
mkdir -p "$ROOT/.cache"

banner() { printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n!!! %s\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n' "$*" >&2; }

server_up=0
started_here=0
if ! command -v java >/dev/null 2>&1; then
    banner "NO JAVA: cannot start Neo4j; the Neo4j tests will be SKIPPED"
elif "$HERE/neo4j.sh" status >/dev/null 2>&1; then
    echo "neo4j: using the server that is already running" >&2
    server_up=1
elif "$HERE/neo4j.sh" start; then
    server_up=1
    started_here=1
    trap '"$HERE/neo4j.sh" stop' EXIT
else
    banner "NEO4J DID NOT START (see above): the Neo4j tests will be SKIPPED"
fi
if [[ $server_up == 0 && $REQUIRE == 1 ]]; then
    banner "T2C_REQUIRE_NEO4J=1 / CI: the Neo4j tests must run; failing"
    exit 1
fi
[[ $server_up == 1 ]] && export T2C_REQUIRE_NEO4J=1

"$PY" -m pytest --junitxml="$JUNIT" "$@"
rc=$?

# How many test cases of the test_neo4j_* modules ran (passed or failed), how many skipped.
read -r ran skipped < <("$PY" - "$JUNIT" <<'PYEOF'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print(0, 0)
    raise SystemExit
ran = skipped = 0
for case in root.iter("testcase"):
    if "test_neo4j_" not in case.get("classname", ""):
        continue
    if case.find("skipped") is not None:
        skipped += 1
    else:
        ran += 1
print(ran, skipped)
PYEOF
)
echo "neo4j tests: ${ran:-0} ran, ${skipped:-0} skipped (report: $JUNIT)" >&2
if [[ $server_up == 1 && ${ran:-0} == 0 ]]; then
    banner "the Neo4j server was up but no Neo4j test ran"
    [[ $rc == 0 ]] && rc=1
elif [[ $server_up == 0 ]]; then
    banner "Neo4j tests SKIPPED: no server (install Java 17 and Maven, or run \`make neo4j\`)"
fi
exit $rc
