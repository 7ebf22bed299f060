package t2c.neo4j;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;

/**
 * Runs a Neo4j Community DBMS whose only listener is Bolt on 127.0.0.1, until SIGTERM.
 *
 * <p>Usage: {@code java -cp ... t2c.neo4j.Launcher <home-dir> <port>}. Authentication is off
 * unless {@code NEO4J_PASSWORD} is set in the environment; then it is on and the user
 * {@code NEO4J_USER} (default {@code neo4j}) gets that password on every start. Prints one
 * {@code T2C-NEO4J READY} line to stdout once the DBMS (and the password) is in place.
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
        boolean auth = !password.isEmpty();
        long pageCache = ByteUnit.parse(System.getenv().getOrDefault("NEO4J_PAGECACHE", "256m"));

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
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "2 files")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                // LOAD CSV may not read local files (the store also refuses LOAD CSV plans).
                .setConfig(GraphDatabaseSettings.allow_file_urls, false)
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

        if (auth) {
            setPassword(dbms, user, password);
        }
        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(Duration.ofSeconds(60).toMillis())) {
            System.err.println("T2C-NEO4J database 'neo4j' did not become available");
            System.exit(1);
        }
        long ms = Duration.between(t0, Instant.now()).toMillis();
        System.out.printf("T2C-NEO4J READY bolt://127.0.0.1:%d auth=%s started_ms=%d%n",
                port, auth ? "on user=" + user : "off", ms);
        System.out.flush();
        stopped.await();
    }

    /** Gives {@code user} the password (creating the user if needed); runs on every start. */
    private static void setPassword(DatabaseManagementService dbms, String user, String password) {
        GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        Map<String, Object> params = Map.of("pw", password);
        String name = "`" + user.replace("`", "``") + "`";
        system.executeTransactionally(
                "CREATE USER " + name + " IF NOT EXISTS SET PASSWORD $pw CHANGE NOT REQUIRED", params);
        system.executeTransactionally(
                "ALTER USER " + name + " SET PASSWORD $pw CHANGE NOT REQUIRED", params);
    }
}
