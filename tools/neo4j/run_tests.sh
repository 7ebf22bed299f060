#!/usr/bin/env bash
# Run the test suite with a local Neo4j server up for the `neo4j`-marked tests.
#
#   tools/neo4j/run_tests.sh PYTHON [pytest args...]
#
# Starts the server (tools/neo4j/neo4j.sh) when Java is present and none is running, runs
# pytest with the plugin tools/neo4j/pytest_neo4j_report.py, stops the server again if it
# started it, and checks how many `neo4j`-marked tests actually ran. With a server up, T2C_REQUIRE_NEO4J=1 is exported so the
# Neo4j tests fail rather than skip. T2C_REQUIRE_NEO4J=1 (or CI=true) in the caller's
# environment makes a missing Java, a server that will not start, or zero Neo4j tests run
# an error; otherwise each of those is reported loudly and the suite runs without them.
# The server runs with authentication on; the tests log in as t2c does, with the password
# neo4j.sh generated into .cache/neo4j/password (or NEO4J_PASSWORD when set).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY="${1:?usage: run_tests.sh PYTHON [pytest args...]}"
shift
REQUIRE="${T2C_REQUIRE_NEO4J:-0}"
[[ "${CI:-}" == "true" ]] && REQUIRE=1
REPORT="$ROOT/.cache/neo4j-tests.json"
mkdir -p "$ROOT/.cache"

banner() { printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n!!! %s\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n' "$*" >&2; }

server_up=0
started_here=0
if ! command -v java >/dev/null 2>&1; then
    banner "NO JAVA: cannot start Neo4j; the Neo4j tests will be SKIPPED"
elif "$HERE/neo4j.sh" status >/dev/null 2>&1; then
    echo "neo4j: using the server that is already running" >&2
    server_up=1
else
    # The port is taken by something else (another checkout's server, say): use a free one.
    port="${NEO4J_PORT:-7687}"
    if timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then
        NEO4J_PORT="$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
        export NEO4J_PORT
        echo "neo4j: port $port is in use; the test server gets port $NEO4J_PORT" >&2
    fi
fi
if [[ $server_up == 1 ]] || ! command -v java >/dev/null 2>&1; then
    :
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

rm -f "$REPORT"
PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}" T2C_NEO4J_REPORT="$REPORT" "$PY" -m pytest -p pytest_neo4j_report "$@"
rc=$?

# How many `neo4j`-marked tests ran (passed or failed) and how many were skipped.
read -r ran skipped < <("$PY" -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    d = {}
print(d.get("ran", 0), d.get("skipped", 0))' "$REPORT")
echo "neo4j tests: ${ran:-0} ran, ${skipped:-0} skipped (counts: $REPORT)" >&2
if [[ $server_up == 1 && ${ran:-0} == 0 ]]; then
    banner "the Neo4j server was up but no Neo4j test ran"
    [[ $REQUIRE == 1 && $rc == 0 ]] && rc=1
elif [[ $server_up == 0 ]]; then
    banner "Neo4j tests SKIPPED: no server (install Java 17 and Maven, or run \`make neo4j\`)"
fi
exit $rc
