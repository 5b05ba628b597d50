package org.jwarp.twonode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;

/**
 * Node 2's side of the two-node suite: one long-lived JVM (a JVM start costs ~20 s under TCG)
 * that node 1's {@link TwoNodeTest} drives over a TCP control connection on the siw link
 * ({@code JWARP_SIW_IP}, port 7070). Lines are tab-separated:
 * <pre>
 *   node 1 -> agent: RUN id argv...    a process (siw_peer, rping), output streamed back
 *                    JAVA id role args  a {@link LinkExchange} role in this JVM: accept|connect
 *                    KILL id            stop a process
 *                    PING -             answered by PONG (node 1's {@link LinkWatch})
 *                    QUIT               end; the agent exits 0
 *   agent -> node 1: OUT id line, EXIT id status, PONG -, READY, BYE
 * </pre>
 * It exits 1 when node 1 goes away without QUIT, so a broken suite fails node 2 too.
 */
public final class Node2Agent {
    static final int PORT = 7070;

    private final Writer out;
    private final Map<String, Process> processes = new ConcurrentHashMap<>();

    private Node2Agent(Writer out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        String ip = System.getenv().getOrDefault("JWARP_SIW_IP", "10.80.0.2");
        int port = args.length > 0 ? Integer.parseInt(args[0]) : PORT;
        long t0 = System.nanoTime();
        warmUp(ip);
        System.out.println("agent: warm-up done in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        try (ServerSocket ss = new ServerSocket()) {
            ss.bind(new InetSocketAddress(InetAddress.getByName(ip), port));
            System.out.println("agent: listening on " + ip + ":" + port);
            ss.setSoTimeout(600_000);
            try (Socket s = ss.accept()) {
                s.setTcpNoDelay(true);
                System.out.println("agent: node 1 connected from " + s.getRemoteSocketAddress());
                Node2Agent a = new Node2Agent(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8));
                System.exit(a.serve(new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8))));
            }
        }
    }

    /** Loads the soft provider's connection and data path once (siw's MPA timers do not wait for a cold JVM). */
    static void warmUp(String ip) throws Exception {
        CompletableFuture<LinkExchange.Result> server = CompletableFuture.supplyAsync(() -> {
            try {
                return LinkExchange.accept("soft", ip, 7069, LinkExchange.Role.PEER, 4096, l -> { });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(500);
        LinkExchange.connect("soft", ip, new InetSocketAddress(ip, 7069), LinkExchange.Role.MIRROR, 4096, l -> { });
        server.get();
    }

    private int serve(BufferedReader in) throws IOException {
        send("READY");
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t");
            if (f[0].equals("PING")) {
                send("PONG", f.length > 1 ? f[1] : "-");
                continue;
            }
            System.out.println("agent: " + String.join(" ", f));
            switch (f[0]) {
                case "RUN" -> run(f[1], Arrays.asList(f).subList(2, f.length));
                case "JAVA" -> java(f[1], Arrays.copyOfRange(f, 2, f.length));
                case "KILL" -> {
                    Process p = processes.get(f[1]);
                    if (p != null) {
                        p.destroyForcibly();
                    }
                }
                case "QUIT" -> {
                    processes.values().forEach(Process::destroyForcibly);
                    send("BYE");
                    return 0;
                }
                default -> send("OUT", "-", "agent: unknown command " + f[0]);
            }
        }
        System.out.println("agent: node 1 closed the control connection without QUIT");
        return 1;
    }

    private synchronized void send(String... fields) {
        try {
            out.write(String.join("\t", fields));
            out.write('\n');
            out.flush();
        } catch (IOException e) {
            System.out.println("agent: control connection lost: " + e);
        }
    }

    private void run(String id, List<String> argv) {
        Thread t = new Thread(() -> {
            int rc;
            try {
                Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
                processes.put(id, p);
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String l;
                    while ((l = r.readLine()) != null) {
                        System.out.println("  " + id + "| " + (l.length() > 160 ? l.substring(0, 160) + "..." : l));
                        send("OUT", id, l);
                    }
                }
                rc = p.waitFor();
            } catch (Exception e) {
                send("OUT", id, "agent: " + e);
                rc = 127;
            }
            processes.remove(id);
            send("EXIT", id, Integer.toString(rc));
        }, "run-" + id);
        t.setDaemon(true);
        t.start();
    }

    private void java(String id, String[] a) {
        Thread t = new Thread(() -> {
            int rc = 0;
            try {
                // role provider localIp [remoteIp] port role area
                LinkExchange.Result r = LinkExchange.role(a, l -> send("OUT", id, l));
                send("OUT", id, "result " + r);
            } catch (Throwable e) {
                send("OUT", id, "error " + e);
                for (StackTraceElement el : e.getStackTrace()) {
                    System.out.println("    at " + el);
                }
                rc = 1;
            }
            System.out.println("agent: " + id + " ended with " + rc);
            send("EXIT", id, Integer.toString(rc));
        }, "java-" + id);
        t.setDaemon(true);
        t.start();
    }
}
