package org.jwarp.twonode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Node 1's handle on {@link Node2Agent}: starts processes and Java roles on node 2 and follows them. */
final class Agent implements AutoCloseable {
    private final Socket socket;
    private final Writer out;
    private final Map<String, Remote> remotes = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();
    private volatile boolean bye;
    private volatile long lastPong = System.nanoTime();

    private Agent(Socket socket) throws IOException {
        this.socket = socket;
        this.out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
        Thread t = new Thread(this::read, "agent-reader");
        t.setDaemon(true);
        t.start();
    }

    /** Connects to the agent, retrying while node 2's JVM starts and warms up. */
    static Agent connect(String host, int port, Duration timeout) throws Exception {
        long end = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        while (System.nanoTime() < end) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(host, port), 2000);
                s.setTcpNoDelay(true);
                return new Agent(s);
            } catch (IOException e) {
                last = e;
                s.close();
                Thread.sleep(500);
            }
        }
        throw new AssertionError("node 2's agent at " + host + ":" + port + " did not answer within " + timeout, last);
    }

    /** Runs {@code argv} as a process on node 2. */
    Remote run(String... argv) throws IOException {
        return start("RUN", argv);
    }

    /** Runs a {@link LinkExchange} role in node 2's JVM ({@code accept ...} or {@code connect ...}). */
    Remote java(String... args) throws IOException {
        return start("JAVA", args);
    }

    private Remote start(String kind, String... args) throws IOException {
        String id = kind.toLowerCase() + ids.incrementAndGet();
        Remote r = new Remote(id, String.join(" ", args));
        remotes.put(id, r);
        System.out.println("twonode: node 2 " + id + ": " + r.what);
        send(kind + "\t" + id + "\t" + String.join("\t", args));
        return r;
    }

    /** Asks the agent for a PONG over the control connection (on the siw link); {@link #silentNanos} follows it. */
    void ping() throws IOException {
        send("PING\t-");
    }

    /** How long since the agent last answered a {@link #ping}. */
    long silentNanos() {
        return System.nanoTime() - lastPong;
    }

    private synchronized void send(String line) throws IOException {
        out.write(line);
        out.write('\n');
        out.flush();
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split("\t", 3);
                if (f[0].equals("BYE")) {
                    bye = true;
                    continue;
                }
                if (f[0].equals("PONG")) {
                    lastPong = System.nanoTime();
                    continue;
                }
                Remote r = f.length > 1 ? remotes.get(f[1]) : null;
                if (r == null) {
                    continue;
                }
                synchronized (r) {
                    if (f[0].equals("OUT")) {
                        r.lines.add(f.length > 2 ? f[2] : "");
                    } else if (f[0].equals("EXIT")) {
                        r.exit = Integer.parseInt(f[2]);
                    }
                    r.notifyAll();
                }
            }
        } catch (IOException e) {
            System.out.println("twonode: agent connection: " + e);
        }
        for (Remote r : remotes.values()) {
            synchronized (r) {
                r.gone = true;
                r.notifyAll();
            }
        }
    }

    /** Ends the agent (node 2's command then exits 0). */
    @Override
    public void close() throws Exception {
        send("QUIT");
        long end = System.nanoTime() + 10_000_000_000L;
        while (!bye && System.nanoTime() < end) {
            Thread.sleep(50);
        }
        socket.close();
    }

    /** A process or Java role on node 2: its output lines and exit status. */
    final class Remote {
        final String id;
        final String what;
        final List<String> lines = new ArrayList<>();
        Integer exit;
        boolean gone;

        Remote(String id, String what) {
            this.id = id;
            this.what = what;
        }

        /** Waits for the first line containing {@code text}; fails on timeout or when it ended. */
        synchronized String awaitLine(String text, Duration timeout) throws InterruptedException {
            long end = System.nanoTime() + timeout.toNanos();
            while (true) {
                for (String l : lines) {
                    if (l.contains(text)) {
                        return l;
                    }
                }
                LinkWatch.failIfDead();
                long left = end - System.nanoTime();
                if (left <= 0 || exit != null || gone) {
                    throw new AssertionError("node 2 " + what + " printed no '" + text + "' (exit " + exit + "):\n"
                            + transcript());
                }
                wait(Math.max(1, Math.min(100, left / 1_000_000)));
            }
        }

        synchronized int waitExit(Duration timeout) throws Exception {
            long end = System.nanoTime() + timeout.toNanos();
            while (exit == null) {
                if (LinkWatch.dead() != null) {
                    kill();
                    LinkWatch.failIfDead();
                }
                long left = end - System.nanoTime();
                if (left <= 0 || gone) {
                    kill();
                    throw new AssertionError("node 2 " + what + " did not end within " + timeout + ":\n" + transcript());
                }
                wait(Math.max(1, Math.min(100, left / 1_000_000)));
            }
            return exit;
        }

        synchronized List<String> lines(String prefix) {
            return lines.stream().filter(l -> l.startsWith(prefix)).toList();
        }

        synchronized String transcript() {
            return "--- node 2 " + what + " ---\n" + String.join("\n", lines);
        }

        void kill() throws IOException {
            send("KILL\t" + id);
        }
    }
}
