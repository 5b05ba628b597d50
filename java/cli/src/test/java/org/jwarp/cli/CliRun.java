package org.jwarp.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs {@link JwarpCli#run} with captured stdout and stderr. */
record CliRun(int exit, String out, String err) {
    static synchronized CliRun of(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int rc = JwarpCli.run(args);
            System.out.flush();
            System.err.flush();
            return new CliRun(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    /** stderr split into non-empty lines. */
    String[] errLines() {
        return err.lines().filter(l -> !l.isBlank()).toArray(String[]::new);
    }
}
