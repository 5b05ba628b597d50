package org.jwarp.twonode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Tells a dead virtual link from a failing case. On 2026-12-07 node 2 stopped sending anything on
 * the siw link mid-transfer (no TCP ACK of node 1's FIN, no ARP reply, no agent output) while it
 * kept sending on the rxe link: the qemu/virtio link, not jwarp nor siw. The signature, and the
 * only one {@code scripts/two-node-tests} retries (once, on freshly booted nodes): node 2's agent
 * has not answered a PING on the siw link for {@link #SILENCE}, busybox ping of its siw address
 * fails, and ping of its rxe address answers. A failure with the link alive keeps its own message.
 */
final class LinkWatch implements Runnable {
    /** Every message of a case failed by a dead link starts with this. */
    static final String SIGNATURE = "virtual link stall";
    static final Duration SILENCE = Duration.ofSeconds(30);
    static final long PING_EVERY_MS = 5000;

    private static volatile String dead;
    private static volatile LinkWatch watch;
    private final Agent agent;
    private final String siwPeer;
    private final String rxePeer;
    private volatile boolean stopped;

    private LinkWatch(Agent agent, String siwPeer, String rxePeer) {
        this.agent = agent;
        this.siwPeer = siwPeer;
        this.rxePeer = rxePeer;
    }

    /** Starts watching node 2 through {@code agent}; the waits of the running case then end once the link is dead. */
    static void start(Agent agent, String siwPeer, String rxePeer) {
        LinkWatch w = new LinkWatch(agent, siwPeer, rxePeer);
        watch = w;
        Thread t = new Thread(w, "link-watch");
        t.setDaemon(true);
        t.start();
    }

    static void stop() {
        LinkWatch w = watch;
        if (w != null) {
            w.stopped = true;
        }
    }

    /** Why the siw link is dead, or null while it is not known to be. */
    static String dead() {
        return dead;
    }

    static void failIfDead() {
        String d = dead;
        if (d != null) {
            throw new AssertionError(d);
        }
    }

    @Override
    public void run() {
        while (!stopped && dead == null) {
            try {
                agent.ping();
            } catch (IOException e) {
                // counted as silence below
            }
            try {
                Thread.sleep(PING_EVERY_MS);
            } catch (InterruptedException e) {
                return;
            }
            if (!stopped && agent.silentNanos() > SILENCE.toNanos()) {
                probe();
            }
        }
    }

    /** Declares the link dead when the siw address does not answer ping and the rxe address does. */
    private synchronized void probe() {
        if (dead != null) {
            return;
        }
        long silentS = agent.silentNanos() / 1_000_000_000L;
        if (silentS < SILENCE.toSeconds() || answers(siwPeer) || !answers(rxePeer)) {
            return;
        }
        String why = SIGNATURE + ": node 2 has not answered on the siw link for " + silentS + " s (no PONG from "
                + "its agent, " + siwPeer + " does not answer ping) while " + rxePeer + " answers ping on the rxe "
                + "link: the virtual Ethernet link stopped, not jwarp";
        dead = why;
        LinkExchange.abort = why;
        System.out.println("twonode: LINK STALL: " + why);
    }

    /** After a failure: asks the agent once more and probes the links when no PONG comes within {@link #SILENCE}. */
    private void confirm() throws InterruptedException {
        long sent = System.nanoTime();
        try {
            agent.ping();
        } catch (IOException e) {
            // silence
        }
        long end = sent + SILENCE.toNanos() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < end) {
            if (agent.silentNanos() < System.nanoTime() - sent) {
                return; // answered after our PING: the link is alive
            }
            Thread.sleep(200);
        }
        probe();
    }

    static boolean answers(String ip) {
        try {
            Process p = new ProcessBuilder("busybox", "ping", "-c", "3", "-w", "6", ip).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /**
     * The JUnit side: a case that starts after the link died fails at once, and a case that failed
     * while it died says so first (its own failure follows). Knows the retried cases from
     * {@code -Djwarp.twonode.retried=FILE} (lines {@code method<TAB>first attempt's failure}).
     */
    static final class Cases implements BeforeEachCallback, TestExecutionExceptionHandler {
        private static volatile String method = "";
        private static final Map<String, String> RETRIED = retried();

        @Override
        public void beforeEach(ExtensionContext c) {
            method = c.getRequiredTestMethod().getName();
            String d = dead;
            if (d != null) {
                throw new AssertionError(SIGNATURE + " in an earlier case, this one not run: " + d);
            }
        }

        @Override
        public void handleTestExecutionException(ExtensionContext c, Throwable t) throws Throwable {
            LinkWatch w = watch;
            if (dead == null && w != null) {
                w.confirm();
            }
            String d = dead;
            if (d == null || String.valueOf(t.getMessage()).startsWith(SIGNATURE)) {
                throw t;
            }
            throw new AssertionError(d + "; the case's own failure: " + firstLine(t), t);
        }

        /** " RETRIED (first attempt: ...)" for a case that runs again after a dead link, else "". */
        static String retriedNote() {
            String why = RETRIED.get(method);
            return why == null ? "" : " RETRIED (first attempt: " + why + ")";
        }

        private static Map<String, String> retried() {
            Map<String, String> m = new HashMap<>();
            String f = System.getProperty("jwarp.twonode.retried", "");
            if (f.isEmpty()) {
                return m;
            }
            try {
                for (String l : Files.readAllLines(Path.of(f), StandardCharsets.UTF_8)) {
                    String[] kv = l.split("\t", 2);
                    m.put(kv[0], kv.length > 1 ? kv[1] : "");
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot read the retried cases from " + f, e);
            }
            return m;
        }

        private static String firstLine(Throwable t) {
            String s = String.valueOf(t);
            int nl = s.indexOf('\n');
            return nl < 0 ? s : s.substring(0, nl);
        }
    }
}
