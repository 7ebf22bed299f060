#!/usr/bin/env bash
# Start, stop or check a local Neo4j 5.26 Community server for t2c (Bolt on 127.0.0.1 only).
#
#   tools/neo4j/neo4j.sh start|stop|status|build
#
# The DBMS comes from Maven Central (tools/neo4j/pom.xml) and runs through the one-class
# launcher in tools/neo4j/src. Data, pid file, log and password live under <project>/.cache/neo4j/.
# Authentication is always on: NEO4J_USER (default neo4j) gets NEO4J_PASSWORD when it is set
# (at least 8 characters), else the password in <dir>/password, generated at random (mode 0600)
# on the first start and read by t2c whenever NEO4J_URI names this loopback server.
# Environment: NEO4J_PORT (7687), NEO4J_PASSWORD, NEO4J_USER, NEO4J_HEAP (1g),
# NEO4J_PAGECACHE (256m), NEO4J_TX_MEMORY (256m: one transaction), NEO4J_TX_MEMORY_TOTAL
# (512m: all transactions), NEO4J_START_TIMEOUT (120 s), T2C_NEO4J_DIR (<project>/.cache/neo4j),
# T2C_NEO4J_RUNAWAY_S (10; 0 = off), NEO4J_RESTART_LIMIT (30 restarts in 10 minutes).
#
# Supervision: the JVM runs with -XX:+ExitOnOutOfMemoryError (a value built inside one
# expression is not memory-tracked and can fill the heap; a JVM that goes on after that stops
# enforcing transaction timeouts), under a small supervisor (`neo4j.sh supervise`, pid in
# <dir>/supervisor.pid) that starts it again whenever it exits on its own after having been
# ready; the launcher itself exits (code 4) when a terminated transaction still runs after
# T2C_NEO4J_RUNAWAY_S (10) seconds, or a thread matches one regex that long (a backtracking
# regex ignores termination). `stop` stops the
# supervisor first, then the server.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIR="${T2C_NEO4J_DIR:-$ROOT/.cache/neo4j}"
PORT="${NEO4J_PORT:-7687}"
HEAP="${NEO4J_HEAP:-1g}"
START_TIMEOUT="${NEO4J_START_TIMEOUT:-120}"
STOP_TIMEOUT="${NEO4J_STOP_TIMEOUT:-60}"
PIDFILE="$DIR/neo4j.pid"
SUPERVISOR_PIDFILE="$DIR/supervisor.pid"
RESTART_LIMIT="${NEO4J_RESTART_LIMIT:-30}"  # restarts within RESTART_WINDOW seconds before giving up
RESTART_WINDOW=600
LOG="$DIR/neo4j.log"
PASSWORD_FILE="$DIR/password"
HOME_DIR="$DIR/home"
TARGET="$HERE/target"
CLASSPATH_FILE="$TARGET/classpath.txt"
MAIN_CLASS="$TARGET/classes/t2c/neo4j/Launcher.class"
LAUNCHER_JAR="$TARGET/t2c-neo4j-launcher.jar"  # a jar, not target/classes: class-data sharing refuses directories
CDS_ARCHIVE="$TARGET/neo4j-cds.jsa"
# Retries for flaky first downloads (Maven 3.8 wagon transport); harmless offline.
MVN_OPTS=(-B -q -Dmaven.wagon.http.retryHandler.count=5 -Dmaven.wagon.httpconnectionManager.ttlSeconds=25)

say() { echo "neo4j: $*"; }
die() { echo "neo4j: ERROR: $*" >&2; exit 1; }

# True when the pid file names a live launcher process.
running_pid() {
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "t2c.neo4j.Launcher" || return 1
    echo "$pid"
}

# True when the supervisor pid file names a live supervisor of this script.
supervisor_pid() {
    [[ -f "$SUPERVISOR_PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$SUPERVISOR_PIDFILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "neo4j.sh supervise" || return 1
    echo "$pid"
}

# Bolt handshake on 127.0.0.1:$PORT: magic 0x6060B017 + four version proposals; a server
# answers with the 4-byte version it picked (non-zero).
bolt_answers() {
    timeout 5 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf "\x60\x60\xb0\x17\x00\x08\x08\x05\x00\x00\x04\x04\x00\x00\x00\x00\x00\x00\x00\x00" >&3
        reply="$(head -c 4 <&3 | od -An -tx1 | tr -d " \n")"
        exec 3>&-
        [[ ${#reply} -eq 8 && "$reply" != "00000000" ]]
    ' _ "$PORT" 2>/dev/null
}

# The password the server starts with: NEO4J_PASSWORD, else the cached one (generated once:
# 32 URL-safe characters from /dev/urandom, written with umask 077, never printed).
server_password() {
    if [[ -n "${NEO4J_PASSWORD:-}" ]]; then
        ((${#NEO4J_PASSWORD} >= 8)) || die "NEO4J_PASSWORD must hold at least 8 characters"
        printf '%s' "$NEO4J_PASSWORD"
        return 0
    fi
    if [[ ! -s "$PASSWORD_FILE" ]]; then
        local fresh
        fresh="$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')"
        ((${#fresh} == 32)) || die "could not generate a password"
        (umask 077 && printf '%s\n' "$fresh" >"$PASSWORD_FILE.tmp" && mv -f "$PASSWORD_FILE.tmp" "$PASSWORD_FILE") \
            || die "could not write $PASSWORD_FILE"
    fi
    chmod 600 "$PASSWORD_FILE"
    local cached
    cached="$(head -n 1 "$PASSWORD_FILE")"
    ((${#cached} >= 8)) || die "$PASSWORD_FILE holds no usable password (delete it to generate a new one)"
    printf '%s' "$cached"
}

needs_build() {
    [[ -f "$CLASSPATH_FILE" && -f "$MAIN_CLASS" && -f "$LAUNCHER_JAR" ]] || return 0
    [[ "$HERE/pom.xml" -nt "$CLASSPATH_FILE" ]] && return 0
    local src
    for src in "$HERE"/src/main/java/t2c/neo4j/*.java; do [[ "$src" -nt "$LAUNCHER_JAR" ]] && return 0; done
    # Every jar on the class path must still be in the local repository.
    local jar
    while IFS= read -r jar; do [[ -f "$jar" ]] || return 0; done < <(tr ':' '\n' <"$CLASSPATH_FILE")
    return 1
}

build() {
    command -v java >/dev/null || die "java not found (Neo4j 5.26 needs Java 17+)"
    if needs_build; then
        command -v mvn >/dev/null || die "mvn not found (needed once to fetch Neo4j from Maven Central)"
        say "building the launcher (first run downloads the Neo4j jars from Maven Central into ~/.m2)"
        local attempt
        for attempt in 1 2 3; do
            mkdir -p "$DIR"
            if mvn "${MVN_OPTS[@]}" -f "$HERE/pom.xml" compile >"$DIR/build.log" 2>&1; then
                rm -f "$LAUNCHER_JAR" "$CDS_ARCHIVE"
                jar cf "$LAUNCHER_JAR" -C "$TARGET/classes" . || die "could not write $LAUNCHER_JAR"
                return 0
            fi
            tail -n 20 "$DIR/build.log" >&2
            say "maven attempt $attempt failed (log: $DIR/build.log); retrying"
            sleep $((attempt * 5))
        done
        die "maven could not build tools/neo4j (log: $DIR/build.log)"
    fi
}

start() {
    local pid spid
    if pid="$(running_pid)"; then
        if bolt_answers; then
            say "already running (pid $pid) on bolt://127.0.0.1:$PORT"
            return 0
        fi
        say "process $pid is up but Bolt does not answer yet; waiting"
    elif spid="$(supervisor_pid)"; then
        say "the supervisor ($spid) is restarting the server; waiting"
        local waited=0
        until pid="$(running_pid)" || ((waited >= 300)); do sleep 0.1; waited=$((waited + 1)); done
        [[ -n "$pid" ]] || die "the supervisor ($spid) did not start the server again (log: $LOG)"
    else
        if bolt_answers; then
            die "something else already answers Bolt on 127.0.0.1:$PORT (not started by this script); stop it or set NEO4J_PORT"
        fi
        build
        mkdir -p "$DIR" "$HOME_DIR"
        chmod 700 "$DIR"
        local password
        password="$(server_password)" || exit 1
        : >"$LOG"
        local t0
        t0="$(date +%s.%N)"
        echo "$t0" >"$DIR/start_time"
        rm -f "$PIDFILE"
        # setsid: the supervisor and the server outlive the calling shell (make), and a Ctrl-C
        # there does not reach them.
        NEO4J_PASSWORD="$password" setsid "$HERE/neo4j.sh" supervise </dev/null >>"$LOG" 2>&1 &
        echo "$!" >"$SUPERVISOR_PIDFILE"
        local waited=0
        while [[ ! -s "$PIDFILE" ]] && ((waited < 100)); do sleep 0.1; waited=$((waited + 1)); done
        pid="$(cat "$PIDFILE" 2>/dev/null || true)"
        [[ "$pid" =~ ^[0-9]+$ ]] || die "the supervisor did not start the server (log: $LOG)"
    fi
    local deadline=$((SECONDS + START_TIMEOUT))
    while ((SECONDS < deadline)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$PIDFILE"
            echo "---- tail of $LOG ----" >&2
            tail -n 40 "$LOG" >&2 || true
            die "the server process exited during start-up (log above: $LOG)"
        fi
        if grep -q "T2C-NEO4J READY" "$LOG" 2>/dev/null && bolt_answers; then
            local t0 secs
            t0="$(cat "$DIR/start_time" 2>/dev/null || date +%s.%N)"
            secs="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
            local source="password $PASSWORD_FILE"
            [[ -n "${NEO4J_PASSWORD:-}" ]] && source="password from NEO4J_PASSWORD"
            say "started (pid $pid) on bolt://127.0.0.1:$PORT in ${secs}s; $(grep -o 'auth=[^ ]* user=[^ ]* websocket=[^ ]*' "$LOG" | tail -1), $source; log $LOG"
            return 0
        fi
        sleep 0.5
    done
    echo "---- tail of $LOG ----" >&2
    tail -n 40 "$LOG" >&2 || true
    if spid="$(supervisor_pid)"; then kill "$spid" 2>/dev/null || true; fi
    kill "$pid" 2>/dev/null || true
    local waited=0
    while kill -0 "$pid" 2>/dev/null && ((waited < 60)); do sleep 0.5; waited=$((waited + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$PIDFILE"
    die "Bolt did not answer on 127.0.0.1:$PORT within ${START_TIMEOUT}s; stopped pid $pid (log above: $LOG)"
}

# The JVM, in the foreground of the supervisor (its pid goes to $PIDFILE).
run_server() {
    # Class-data sharing: the first run records the classes it loads into an archive at exit,
    # later runs map it (faster start). A stale archive is ignored by the JVM, never fatal.
    local cds=("-XX:ArchiveClassesAtExit=$CDS_ARCHIVE")
    [[ -s "$CDS_ARCHIVE" && "$CDS_ARCHIVE" -nt "$CLASSPATH_FILE" ]] && cds=("-XX:SharedArchiveFile=$CDS_ARCHIVE")
    java -Xms256m "-Xmx$HEAP" -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -XX:-OmitStackTraceInFastThrow \
        "${cds[@]}" -Xlog:cds=off -Xlog:cds+dynamic=off \
        -Dfile.encoding=UTF-8 \
        -cp "$LAUNCHER_JAR:$(cat "$CLASSPATH_FILE")" \
        t2c.neo4j.Launcher "$HOME_DIR" "$PORT" </dev/null &
    child=$!
    echo "$child" >"$PIDFILE"
}

# Runs the server and starts it again whenever it exits on its own after having been ready, or
# with code 3 (ExitOnOutOfMemoryError) or 4 (the launcher's runaway watch) at any time; a server
# that exits otherwise before it was ready, or more than RESTART_LIMIT restarts within
# RESTART_WINDOW seconds, ends the supervision.
supervise() {
    local stopping=0 rc ready_before ready_after
    child=""
    echo "$$" >"$SUPERVISOR_PIDFILE"
    trap 'stopping=1; [[ -n "$child" ]] && kill -TERM "$child" 2>/dev/null' TERM INT
    local -a restarts=()
    while ((stopping == 0)); do
        ready_before="$(grep -c "T2C-NEO4J READY" "$LOG" 2>/dev/null || true)"
        run_server
        rc=0
        wait "$child" || rc=$?
        while kill -0 "$child" 2>/dev/null; do  # `wait` returns early when a trapped signal arrives
            rc=0
            wait "$child" || rc=$?
        done
        ((stopping == 0)) || break
        ready_after="$(grep -c "T2C-NEO4J READY" "$LOG" 2>/dev/null || true)"
        # A full heap (3) or a runaway (4) restarts even before READY: Bolt already takes queries then.
        if ((ready_after <= ready_before && rc != 3 && rc != 4)); then
            echo "T2C-NEO4J supervisor: the server exited with code $rc before it was ready; not restarting"
            break
        fi
        local now=$SECONDS recent=()
        for t in "${restarts[@]}"; do ((now - t < RESTART_WINDOW)) && recent+=("$t"); done
        restarts=("${recent[@]}" "$now")
        if ((${#restarts[@]} > RESTART_LIMIT)); then
            echo "T2C-NEO4J supervisor: ${#restarts[@]} restarts within ${RESTART_WINDOW}s; giving up"
            break
        fi
        echo "T2C-NEO4J supervisor: the server exited with code $rc (3: its heap ran out, 4: a runaway query); restarting"
    done
    rm -f "$PIDFILE"
    [[ "$(cat "$SUPERVISOR_PIDFILE" 2>/dev/null)" == "$$" ]] && rm -f "$SUPERVISOR_PIDFILE"
    exit 0
}

stop() {
    local pid spid
    if spid="$(supervisor_pid)"; then
        kill -TERM "$spid"
        local deadline=$((SECONDS + STOP_TIMEOUT))
        while kill -0 "$spid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
    fi
    rm -f "$SUPERVISOR_PIDFILE"
    if ! pid="$(running_pid)"; then
        rm -f "$PIDFILE"
        if [[ -n "${spid:-}" ]]; then say "stopped (supervisor $spid and its server)"; else say "not running"; fi
        return 0
    fi
    kill -TERM "$pid"
    local deadline=$((SECONDS + STOP_TIMEOUT))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
        say "pid $pid did not stop within ${STOP_TIMEOUT}s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$PIDFILE"
    say "stopped (pid $pid)"
}

status() {
    local pid spid
    if pid="$(running_pid)"; then
        if bolt_answers; then
            say "running (pid $pid), Bolt answers on 127.0.0.1:$PORT"
            return 0
        fi
        say "process $pid is up but Bolt does not answer on 127.0.0.1:$PORT"
        return 1
    fi
    if spid="$(supervisor_pid)"; then
        say "restarting (supervisor $spid): the server is not up yet"
        return 1
    fi
    say "not running"
    return 3
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    supervise) supervise ;;
    status) status ;;
    build) build ;;
    *) echo "usage: $0 {start|stop|status|build}" >&2; exit 2 ;;
esac
