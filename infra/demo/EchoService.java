// Demo system under test: a tiny HTTP echo service with a Tomcat-style access log.
//
//   java -Duser.timezone=UTC infra/demo/EchoService.java --port 18081 --access-log app1/access.log --name app1
//
// POST /echo returns the request body, GET /health returns "ok". Every 997th request (per instance) sleeps
// ~120 ms and every 1009th answers HTTP 500, so reports have a tail and a few errors to find.
// POST /echo?delay_ms=N holds a worker N ms first: with WORKERS workers an instance then serves at most
// WORKERS * 1000 / N calls/s, a capacity an open-model test can exceed (infra/k6/echo-open.js).
// POST /admin/settings?workers=W&delay_ms=N changes the running instance (either may be left out): W worker
// threads, and a delay every later /echo call waits on top of its own delay_ms; GET or POST answers
// `workers=W delay_ms=N`. Stage hooks (campaign before_step) scale the service between load steps with it.
// --slowdown-ms-per-s R (soak tests): every POST /echo waits R ms more for each second since the first
// /echo call, a service that slows down steadily as a leaking one does (R=2: 0 ms at first, 40 ms after 20 s).
// Access log pattern: %h %l %u %t "%r" %s %b %D, with %t the request start and %D in microseconds (as Tomcat 10+ and Jetty write it: a sub-millisecond
// echo needs that resolution, or every fast call would log 0).
// Single file, JDK 17, no dependencies: run with the source-file launcher, no build step.

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

public class EchoService {
    static final int WORKERS = 4;
    static final int SLOW_EVERY = 997;
    static final int ERROR_EVERY = 1009;
    static final long SLOW_MS = 120;
    static final DateTimeFormatter CLF_TIME =
            DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ENGLISH).withZone(ZoneId.systemDefault());

    final AtomicLong requests = new AtomicLong();
    // --- stage hooks: the settings POST /admin/settings changes ---
    final AtomicLong adminDelayMs = new AtomicLong();
    ThreadPoolExecutor pool;
    final BufferedWriter log;
    // --- slowdown (soak tests): a delay growing with the time since the first /echo call ---
    double slowdownMsPerS = 0;
    final AtomicLong firstEchoNs = new AtomicLong(Long.MIN_VALUE);

    long slowdownMs(long nowNs) {
        if (slowdownMsPerS <= 0) {
            return 0;
        }
        firstEchoNs.compareAndSet(Long.MIN_VALUE, nowNs);
        double seconds = (nowNs - firstEchoNs.get()) / 1e9;
        return Math.min(10_000, Math.round(slowdownMsPerS * seconds));
    }
    // --- end slowdown ---

    EchoService(BufferedWriter log) {
        this.log = log;
    }

    static long delayMs(String query) {
        return Math.max(0, queryLong(query, "delay_ms", 10_000));
    }

    /** A query parameter as a number up to max; -1 when it is absent or not a number. */
    static long queryLong(String query, String name, long max) {
        if (query != null) {
            for (String pair : query.split("&")) {
                if (pair.startsWith(name + "=")) {
                    try {
                        return Math.max(0, Math.min(max, Long.parseLong(pair.substring(name.length() + 1))));
                    } catch (NumberFormatException e) {
                        return -1;
                    }
                }
            }
        }
        return -1;
    }

    /** POST /admin/settings: resize the worker pool and set the added delay; answers the settings now. */
    byte[] settings(String method, String query) {
        synchronized (pool) {
            long workers = queryLong(query, "workers", 64);
            if (method.equals("POST") && workers >= 1) {
                if (workers > pool.getMaximumPoolSize()) {
                    pool.setMaximumPoolSize((int) workers);
                    pool.setCorePoolSize((int) workers);
                } else {
                    pool.setCorePoolSize((int) workers);
                    pool.setMaximumPoolSize((int) workers);
                }
            }
            long delay = queryLong(query, "delay_ms", 10_000);
            if (method.equals("POST") && delay >= 0) {
                adminDelayMs.set(delay);
            }
            String now = "workers=" + pool.getCorePoolSize() + " delay_ms=" + adminDelayMs.get() + "\n";
            return now.getBytes(StandardCharsets.UTF_8);
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = parse(args);
        int port = Integer.parseInt(require(opts, "--port"));
        String logPath = require(opts, "--access-log");
        String name = opts.getOrDefault("--name", "echo");
        String bind = opts.getOrDefault("--bind", "127.0.0.1");

        // Without TCP_NODELAY the JDK server's small writes meet the client's delayed ACK: ~40 ms per call.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
        BufferedWriter log = new BufferedWriter(
                new OutputStreamWriter(new FileOutputStream(logPath, true), StandardCharsets.UTF_8));
        EchoService service = new EchoService(log);
        service.slowdownMsPerS = Double.parseDouble(opts.getOrDefault("--slowdown-ms-per-s", "0"));
        ExecutorService workers = Executors.newFixedThreadPool(WORKERS);
        service.pool = (ThreadPoolExecutor) workers;
        HttpServer server = HttpServer.create(new InetSocketAddress(bind, port), 256);
        server.createContext("/", service::handle);
        server.setExecutor(workers);
        server.start();

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop(0);
            workers.shutdown();
            try {
                workers.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
            service.closeLog();
        }, name + "-shutdown"));

        System.out.println("listening on " + server.getAddress().getPort());
        System.out.flush();
    }

    void handle(HttpExchange exchange) {
        long startMs = System.currentTimeMillis();
        long startNs = System.nanoTime();
        long n = requests.incrementAndGet();
        int status = 500;
        long bytes = 0;
        try (exchange) {
            byte[] request = readAll(exchange.getRequestBody());
            String method = exchange.getRequestMethod();
            String path = exchange.getRequestURI().getPath();
            byte[] body;
            if (n % ERROR_EVERY == 0) {
                status = 500;
                body = "injected error\n".getBytes(StandardCharsets.UTF_8);
            } else if (path.equals("/echo") && method.equals("POST")) {
                if (n % SLOW_EVERY == 0) {
                    Thread.sleep(SLOW_MS);
                }
                Thread.sleep(delayMs(exchange.getRequestURI().getQuery()) + adminDelayMs.get() + slowdownMs(startNs));
                status = 200;
                body = request;
            } else if (path.equals("/admin/settings")) {
                body = settings(method, exchange.getRequestURI().getQuery());
                status = 200;
            } else if (path.equals("/health") && method.equals("GET")) {
                status = 200;
                body = "ok".getBytes(StandardCharsets.UTF_8);
            } else {
                status = 404;
                body = "not found\n".getBytes(StandardCharsets.UTF_8);
            }
            exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
            exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
            if (body.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
            bytes = body.length;
        } catch (IOException | InterruptedException e) {
            bytes = 0;
        } finally {
            long elapsedUs = (System.nanoTime() - startNs) / 1_000;
            writeLine(exchange, startMs, status, bytes, elapsedUs);
        }
    }

    void writeLine(HttpExchange exchange, long startMs, int status, long bytes, long elapsedUs) {
        String line = exchange.getRemoteAddress().getAddress().getHostAddress()
                + " - - [" + CLF_TIME.format(Instant.ofEpochMilli(startMs)) + "] \""
                + exchange.getRequestMethod() + " " + exchange.getRequestURI() + " " + exchange.getProtocol()
                + "\" " + status + " " + (bytes == 0 ? "-" : Long.toString(bytes)) + " " + elapsedUs + "\n";
        // Flushed per line: a collector tails this file while the service runs.
        synchronized (log) {
            try {
                log.write(line);
                log.flush();
            } catch (IOException e) {
                System.err.println("access log write failed: " + e);
            }
        }
    }

    void closeLog() {
        synchronized (log) {
            try {
                log.close();
            } catch (IOException e) {
                System.err.println("access log close failed: " + e);
            }
        }
    }

    static byte[] readAll(InputStream in) throws IOException {
        try (in) {
            return in.readAllBytes();
        }
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value pairs, got " + args[i]);
            }
            opts.put(args[i], args[i + 1]);
        }
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("option " + args[args.length - 1] + " has no value");
        }
        return opts;
    }

    static String require(Map<String, String> opts, String key) {
        String value = opts.get(key);
        if (value == null) {
            throw new IllegalArgumentException("missing " + key
                    + " (usage: --port P --access-log FILE --name NAME [--bind 127.0.0.1] [--slowdown-ms-per-s R])");
        }
        return value;
    }
}
