package org.jwarp.interop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The project's C rdma_cm peer ({@code native/interop/siw_peer.c}) as a child process on the
 * kernel siw device. Its output is {@code siw_peer: key=value ...} lines, echoed to stdout with the
 * case name so the guest report shows what the kernel side saw.
 */
final class SiwPeer implements AutoCloseable {
    static final String PREFIX = "siw_peer: ";

    private final Process process;
    private final List<String> lines = new ArrayList<>();
    private final Thread reader;

    private SiwPeer(Process process) {
        this.process = process;
        this.reader = new Thread(this::readOutput, "siw_peer-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code siw_peer MODE args...}. */
    static SiwPeer start(String mode, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Guest.peerBinary().toString());
        cmd.add(mode);
        cmd.addAll(List.of(args));
        System.out.println("interop: starting " + String.join(" ", cmd));
        return new SiwPeer(new ProcessBuilder(cmd).redirectErrorStream(true).start());
    }

    private void readOutput() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                System.out.println("  | " + line);
                synchronized (lines) {
                    lines.add(line);
                    lines.notifyAll();
                }
            }
        } catch (IOException e) {
            synchronized (lines) {
                lines.add("reader: " + e);
                lines.notifyAll();
            }
        }
    }

    /** Waits for the first line starting with {@code siw_peer: <start>}; fails on timeout or exit. */
    String awaitLine(String start, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lines) {
            while (true) {
                for (String l : lines) {
                    if (l.startsWith(PREFIX + start)) {
                        return l;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || (!process.isAlive() && !reader.isAlive())) {
                    throw new AssertionError("siw_peer printed no '" + start + "' line (alive=" + process.isAlive()
                            + "):\n" + transcript());
                }
                lines.wait(Math.max(1, Math.min(100, left / 1_000_000)));
            }
        }
    }

    /** The first line starting with {@code start}, or null. */
    String line(String start) {
        synchronized (lines) {
            for (String l : lines) {
                if (l.startsWith(PREFIX + start)) {
                    return l;
                }
            }
        }
        return null;
    }

    /** Whether any output line contains {@code text}. */
    boolean printed(String text) {
        synchronized (lines) {
            return lines.stream().anyMatch(l -> l.contains(text));
        }
    }

    /** key=value fields of one output line. */
    static Map<String, String> fields(String line) {
        Map<String, String> m = new LinkedHashMap<>();
        String body = line.startsWith(PREFIX) ? line.substring(PREFIX.length()) : line;
        for (String tok : body.split(" ")) {
            int eq = tok.indexOf('=');
            if (eq > 0) {
                m.putIfAbsent(tok.substring(0, eq), tok.substring(eq + 1));
            }
        }
        return m;
    }

    /** Waits for exit; returns the status, or fails (killing it) after {@code timeout}. */
    int waitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("siw_peer did not exit within " + timeout + ":\n" + transcript());
        }
        reader.join(2000);
        return process.exitValue();
    }

    String transcript() {
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(2, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
