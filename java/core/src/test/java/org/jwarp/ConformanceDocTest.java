package org.jwarp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code java/CONFORMANCE.md} names the test of every RFC 6581 / RFC 5041 requirement as
 * {@code package/Class#method}; this checks that each such class and method exists, and that every
 * requirement row names a test or says why none applies.
 */
class ConformanceDocTest {
    private static final Pattern REF = Pattern.compile("\\b((?:[a-z]+/)+)([A-Z][A-Za-z0-9]*)#([A-Za-z0-9_]+)");
    private static final Path DOC = Path.of("..", "CONFORMANCE.md");
    private static final Path CORE_TESTS = Path.of("src", "test", "java", "org", "jwarp");
    private static final Path CLI_TESTS = Path.of("..", "cli", "src", "test", "java", "org", "jwarp");

    @Test
    @DisplayName("Every test named in CONFORMANCE.md exists, and every requirement row names a test or a reason")
    void everyNamedTestExists() throws IOException {
        String doc = Files.readString(DOC);
        List<String> missing = new ArrayList<>();
        int refs = 0;
        Matcher m = REF.matcher(doc);
        while (m.find()) {
            refs++;
            String pkg = m.group(1);
            Path base = pkg.startsWith("cli/") ? CLI_TESTS : CORE_TESTS;
            Path file = base.resolve(pkg + m.group(2) + ".java");
            if (!Files.isRegularFile(file)) {
                missing.add(m.group() + " (no " + file + ")");
                continue;
            }
            String src = Files.readString(file);
            if (!Pattern.compile("\\bvoid " + Pattern.quote(m.group(3)) + "\\(").matcher(src).find()) {
                missing.add(m.group() + " (no method " + m.group(3) + " in " + file + ")");
            }
        }
        assertTrue(missing.isEmpty(), "CONFORMANCE.md names tests that do not exist:\n" + String.join("\n", missing));
        assertTrue(refs > 150, "only " + refs + " test references found: is the path to CONFORMANCE.md right?");
        List<String> bare = new ArrayList<>();
        for (String line : doc.split("\n")) {
            String[] cells = line.split("\\|", -1);
            // requirement rows: | § | requirement | kind | test | status |
            if (cells.length == 7 && cells[1].trim().matches("[0-9][0-9.]*(, [0-9.]+)*")) {
                String test = cells[4].trim();
                boolean named = REF.matcher(test).find();
                boolean reasoned = test.startsWith("not applicable") || test.startsWith("no test")
                        || test.startsWith("decision") || test.startsWith("pending");
                if (!named && !reasoned) {
                    bare.add(line);
                }
                if (test.startsWith("no test") && !cells[5].trim().startsWith("gap")) {
                    bare.add("untested but not a gap: " + line);
                }
            }
        }
        assertTrue(bare.isEmpty(), "requirement rows without a test or a reason:\n" + String.join("\n", bare));
    }
}
