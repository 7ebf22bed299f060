package t2c.neo4j;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import org.neo4j.bolt.BoltServer;
import org.neo4j.bolt.protocol.common.connector.Connector;
import org.neo4j.bolt.protocol.common.connector.connection.Connection;
import org.neo4j.bolt.protocol.common.connector.listener.ConnectorListener;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * Runs a Neo4j Community DBMS whose only listener is Bolt on 127.0.0.1, until SIGTERM.
 *
 * <p>Usage: {@code java -cp ... t2c.neo4j.Launcher <home-dir> <port>}. Authentication is always
 * on: the user {@code NEO4J_USER} (default {@code neo4j}) gets the password in {@code NEO4J_PASSWORD}
 * (at least 8 characters; {@code neo4j.sh} passes the one it generated into the project's cache)
 * on every start. Prints one {@code T2C-NEO4J READY} line to stdout once the DBMS, the password and
 * the WebSocket refusal are in place.
 *
 * <p>Why the rest:
 * <ul>
 *   <li>Memory: {@code db.memory.transaction.max} ({@code NEO4J_TX_MEMORY}, 256m) bounds one
 *       transaction and {@code db.memory.transaction.total.max} / {@code dbms.memory.transaction.total.max}
 *       ({@code NEO4J_TX_MEMORY_TOTAL}, 512m) all of them, below the heap, so one query that builds a
 *       huge value fails with MemoryPoolOutOfMemoryError instead of filling the heap (a full heap
 *       left the server no longer enforcing transaction timeouts).</li>
 *   <li>WebSocket: Neo4j 5.26's Bolt connector speaks Bolt over WebSocket on the same port to any
 *       HTTP client, with no setting to switch it off and no Origin check, so any web page in the
 *       user's browser could reach it. A handler placed first in every Bolt connection's pipeline
 *       answers anything that starts like an HTTP request with 403 and closes the connection; only
 *       the Bolt handshake passes.</li>
 *   <li>What the memory limits do not cover: Neo4j Community tracks the memory of its operators
 *       (collect, sort, distinct, aggregation, eager), not of a value built inside one expression
 *       ({@code [x IN range(1, 100000000) | x]}, {@code reduce} over a long range). Such a query checks
 *       neither its time limit nor termination and runs until the heap is exhausted (17-60 s with a
 *       1 GiB heap, other queries stalled meanwhile). A server that went on after that stopped
 *       enforcing transaction timeouts, so {@code neo4j.sh} runs the JVM with
 *       {@code -XX:+ExitOnOutOfMemoryError} under a supervisor that starts it again. Stopping the thread
 *       from outside was tried (a heap guard calling Thread.stop) and dropped: Neo4j then sends the
 *       client no reply at all.</li>
 *   <li>Runaways: such work, and a backtracking regex, also ignores termination (a match went on
 *       10-17 s and more after its transaction was closed). A transaction still listed
 *       {@code T2C_NEO4J_RUNAWAY_S} (10) seconds after it was terminated, or a thread inside Java's regex
 *       engine that long on end, makes the JVM exit with code 4, and the supervisor starts it again
 *       ({@code 0} turns the watch off).</li>
 * </ul>
 */
public final class Launcher {

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Launcher <home-dir> <bolt-port>");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        String password = System.getenv().getOrDefault("NEO4J_PASSWORD", "");
        String user = System.getenv().getOrDefault("NEO4J_USER", "neo4j");
        if (user.isBlank()) {
            user = "neo4j";
        }
        if (password.length() < 8) {
            System.err.println("T2C-NEO4J refusing to start: NEO4J_PASSWORD must hold at least 8 characters "
                    + "(tools/neo4j/neo4j.sh generates one); authentication is always on");
            System.exit(2);
        }
        long pageCache = ByteUnit.parse(env("NEO4J_PAGECACHE", "256m"));
        long txMemory = ByteUnit.parse(env("NEO4J_TX_MEMORY", "256m"));
        long txMemoryTotal = ByteUnit.parse(env("NEO4J_TX_MEMORY_TOTAL", "512m"));

        Instant t0 = Instant.now();
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress("127.0.0.1"))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.routing_enabled, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "2 files")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                // LOAD CSV may not read local files (the store also refuses LOAD CSV plans).
                .setConfig(GraphDatabaseSettings.allow_file_urls, false)
                // One transaction, and all of them together, stay well below the heap.
                .setConfig(GraphDatabaseSettings.memory_tracking, true)
                .setConfig(GraphDatabaseSettings.memory_transaction_max_size, txMemory)
                .setConfig(GraphDatabaseSettings.memory_transaction_database_max_size, txMemoryTotal)
                .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, txMemoryTotal)
                // Stop timed-out queries promptly (default check every 2 s) and shut down fast.
                .setConfig(GraphDatabaseSettings.transaction_monitor_check_interval, Duration.ofMillis(100))
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("T2C-NEO4J stopping");
            dbms.shutdown();
            System.out.println("T2C-NEO4J stopped");
            stopped.countDown();
        }, "t2c-neo4j-shutdown"));

        int refusing;
        try {
            GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
            refusing = refuseWebSockets(system);
            setPassword(system, user, password);
            GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
            if (!db.isAvailable(Duration.ofSeconds(60).toMillis())) {
                throw new IllegalStateException("database 'neo4j' did not become available");
            }
        } catch (RuntimeException e) {
            // The DBMS's threads would keep the JVM alive: exit (the shutdown hook stops the DBMS).
            System.err.println("T2C-NEO4J start failed: " + e);
            System.exit(1);
            return;
        }
        long runawayMs = Duration.ofSeconds(Long.parseLong(env("T2C_NEO4J_RUNAWAY_S", "10"))).toMillis();
        if (runawayMs > 0) {
            watchRunaways(dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME), runawayMs);
        }
        long ms = Duration.between(t0, Instant.now()).toMillis();
        System.out.printf("T2C-NEO4J READY bolt://127.0.0.1:%d auth=on user=%s websocket=refused(%d) "
                        + "tx_memory=%s tx_memory_total=%s started_ms=%d%n",
                port, user, refusing, ByteUnit.bytesToString(txMemory), ByteUnit.bytesToString(txMemoryTotal), ms);
        System.out.flush();
        stopped.await();
    }

    /**
     * Exits the JVM (code 4) when work goes on that no timeout stops: a transaction still listed
     * {@code graceMs} after it was terminated (by its timeout or by TERMINATE TRANSACTIONS), or a thread
     * inside Java's regex engine for {@code graceMs} on end (a backtracking match goes on after its
     * transaction was closed, 10-17 s and more past the client's deadline, and checks neither timeout
     * nor termination). A server that goes on with such work is not enforcing its timeouts; {@code
     * neo4j.sh}'s supervisor starts it again. Sampled every second.
     */
    private static void watchRunaways(GraphDatabaseService db, long graceMs) {
        Thread watch = new Thread(() -> {
            Map<Object, Long> inRegexSince = new HashMap<>();
            Map<Object, Long> terminatedSince = new HashMap<>();
            while (true) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
                long now = System.currentTimeMillis();
                long regex = longest(inRegexSince, threadsInRegex(), now);
                if (regex >= graceMs) {
                    runaway("a thread has been matching one regular expression for " + regex + " ms");
                }
                Set<Object> terminated = terminatedTransactions(db);
                if (terminated != null) {
                    long lingering = longest(terminatedSince, terminated, System.currentTimeMillis());
                    if (lingering >= graceMs) {
                        runaway("a transaction still runs " + lingering + " ms after it was terminated");
                    }
                }
            }
        }, "t2c-runaway-watch");
        watch.setDaemon(true);
        watch.start();
    }

    /** Keeps {@code since} to the keys seen now (first-seen times kept) and returns the longest time seen. */
    private static long longest(Map<Object, Long> since, Set<Object> seen, long now) {
        since.keySet().retainAll(seen);
        long longest = 0;
        for (Object key : seen) {
            longest = Math.max(longest, now - since.computeIfAbsent(key, k -> now));
        }
        return longest;
    }

    /** Ids of the threads whose stack is inside Java's regex engine right now. */
    private static Set<Object> threadsInRegex() {
        Set<Object> matching = new HashSet<>();
        for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
            for (StackTraceElement frame : entry.getValue()) {
                if (frame.getClassName().startsWith("java.util.regex.")) {
                    matching.add(entry.getKey().getId());
                    break;
                }
            }
        }
        return matching;
    }

    /** Ids of the transactions listed as terminated, or null when they cannot be read (shutting down, busy). */
    private static Set<Object> terminatedTransactions(GraphDatabaseService db) {
        Set<Object> terminated = new HashSet<>();
        try {
            db.executeTransactionally(
                    "SHOW TRANSACTIONS YIELD transactionId, status WHERE status STARTS WITH 'Terminated' "
                            + "RETURN transactionId",
                    Map.of(),
                    result -> {
                        while (result.hasNext()) {
                            terminated.add(String.valueOf(result.next().get("transactionId")));
                        }
                        return null;
                    });
            return terminated;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static void runaway(String what) {
        System.out.println("T2C-NEO4J runaway: " + what + "; exiting so that the supervisor starts the server again");
        System.out.flush();
        Runtime.getRuntime().halt(4);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /**
     * Registers the HTTP/WebSocket refusal on every Bolt connector; returns how many. Fails the
     * start (exit 1) when no connector can be reached, rather than run with WebSocket open.
     */
    private static int refuseWebSockets(GraphDatabaseService system) {
        int count = 0;
        try {
            BoltServer bolt = ((GraphDatabaseAPI) system).getDependencyResolver().resolveDependency(BoltServer.class);
            for (Connector<?> connector : bolt.getConnectors()) {
                connector.registerListener(new RefuseHttpListener());
                count++;
            }
        } catch (RuntimeException | LinkageError e) {
            System.err.println("T2C-NEO4J cannot install the WebSocket refusal: " + e);
        }
        if (count == 0) {
            System.err.println("T2C-NEO4J no Bolt connector to guard; refusing to run with WebSocket open");
            System.exit(1);
        }
        return count;
    }

    /** Puts {@link RefuseHttp} first in each new connection's pipeline (runs on the event loop, before any read). */
    private static final class RefuseHttpListener implements ConnectorListener {
        @Override
        public void onConnectionCreated(Connection connection) {
            connection.modifyPipeline(pipeline -> pipeline.addFirst("t2c-refuse-http", RefuseHttp.INSTANCE));
        }
    }

    /**
     * Looks at a connection's first byte: a Bolt handshake starts with 0x60 (TLS, when enabled, with
     * 0x16) and passes, the handler then leaving the pipeline; an HTTP request (which is how
     * Bolt-over-WebSocket starts: {@code GET / HTTP/1.1 ... Upgrade: websocket}) starts with an ASCII
     * letter and gets 403 and a close.
     */
    @ChannelHandler.Sharable
    static final class RefuseHttp extends ChannelInboundHandlerAdapter {
        static final RefuseHttp INSTANCE = new RefuseHttp();
        private static final String BODY = "HTTP and Bolt over WebSocket are refused on this t2c server.\n";
        private static final byte[] FORBIDDEN = ("HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: " + BODY.length() + "\r\nConnection: close\r\n\r\n" + BODY)
                .getBytes(StandardCharsets.US_ASCII);

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof ByteBuf buf) || buf.readableBytes() == 0) {
                ctx.fireChannelRead(msg);
                return;
            }
            byte first = buf.getByte(buf.readerIndex());
            boolean letter = (first >= 'A' && first <= 'Z') || (first >= 'a' && first <= 'z');
            if (letter) {
                ReferenceCountUtil.release(msg);
                ctx.writeAndFlush(Unpooled.wrappedBuffer(FORBIDDEN)).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            ctx.pipeline().remove(this);
            ctx.fireChannelRead(msg);
        }
    }

    /** Gives {@code user} the password (creating the user if needed); runs on every start. */
    private static void setPassword(GraphDatabaseService system, String user, String password) {
        Map<String, Object> params = Map.of("pw", password);
        String name = "`" + user.replace("`", "``") + "`";
        system.executeTransactionally(
                "CREATE USER " + name + " IF NOT EXISTS SET PASSWORD $pw CHANGE NOT REQUIRED", params);
        try {
            system.executeTransactionally(
                    "ALTER USER " + name + " SET PASSWORD $pw CHANGE NOT REQUIRED", params);
        } catch (QueryExecutionException e) {
            // Neo4j refuses to "change" a password to itself: then it already is the one wanted.
            if (!String.valueOf(e.getMessage()).contains("Old password and new password cannot be the same")) {
                throw e;
            }
        }
    }
}
