package org.jwarp.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Runs the CLI in-process with stdout and stderr captured. */
record CliCapture(int exit, String out, String err) {
    static synchronized CliCapture run(String... args) {
        PrintStream o = System.out;
        PrintStream e = System.err;
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        ByteArrayOutputStream be = new ByteArrayOutputStream();
        int rc;
        try {
            System.setOut(new PrintStream(bo, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(be, true, StandardCharsets.UTF_8));
            rc = JwarpCli.run(args);
        } finally {
            System.setOut(o);
            System.setErr(e);
        }
        return new CliCapture(rc, bo.toString(StandardCharsets.UTF_8), be.toString(StandardCharsets.UTF_8));
    }

    /** Every number following {@code "key":} in the output. */
    List<Double> numbers(String key) {
        List<Double> v = new ArrayList<>();
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\":(-?[0-9.Ee+-]+)").matcher(out);
        while (m.find()) {
            v.add(Double.parseDouble(m.group(1)));
        }
        return v;
    }

    /** Every string value following {@code "key":}. */
    List<String> strings(String key) {
        List<String> v = new ArrayList<>();
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\":\"([^\"]*)\"").matcher(out);
        while (m.find()) {
            v.add(m.group(1));
        }
        return v;
    }
}
