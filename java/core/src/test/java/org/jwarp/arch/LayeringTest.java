package org.jwarp.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages follow the protocol stack and only point down: ground (wire vocabulary) → memory →
 * mpa → sctp → ddp → rdmap → negotiation → verbs → provider → {soft, disni} → cli. A package may use
 * its own layer and the layers below; soft and disni never use each other. Checked on the sources of
 * both modules: every reference to an {@code org.jwarp} package, in imports and fully qualified
 * names alike.
 */
class LayeringTest {
    /** Layer rank of each package; equal ranks (soft, disni) may not use each other. */
    static final Map<String, Integer> RANK = Map.ofEntries(
            Map.entry("ground", 0), Map.entry("memory", 1), Map.entry("mpa", 2), Map.entry("sctp", 3),
            Map.entry("ddp", 4), Map.entry("rdmap", 5), Map.entry("negotiation", 6), Map.entry("verbs", 7),
            Map.entry("provider", 8), Map.entry("soft", 9), Map.entry("disni", 9), Map.entry("cli", 10));

    private static final Pattern REF = Pattern.compile("\\borg\\.jwarp\\.([a-z]+)\\b");
    private static final Pattern PKG = Pattern.compile("^package org\\.jwarp\\.([a-z]+)", Pattern.MULTILINE);

    static Path projectRoot() {
        Path p = Paths.get("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("java/core/pom.xml"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("project root (with java/core/pom.xml) not found above " + Paths.get("").toAbsolutePath());
        }
        return p;
    }

    static List<Path> mainSources() throws IOException {
        Path root = projectRoot();
        List<Path> out = new ArrayList<>();
        for (String m : List.of("java/core/src/main/java", "java/cli/src/main/java")) {
            try (Stream<Path> s = Files.walk(root.resolve(m))) {
                s.filter(f -> f.toString().endsWith(".java")).forEach(out::add);
            }
        }
        return out;
    }

    /** The violations in one source text: "pkg → used" pairs that point up or sideways. */
    static Set<String> violations(String source) {
        Set<String> bad = new TreeSet<>();
        Matcher pm = PKG.matcher(source);
        if (!pm.find()) {
            return bad;
        }
        String own = pm.group(1);
        Integer ownRank = RANK.get(own);
        if (ownRank == null) {
            bad.add(own + " is not in the layer map");
            return bad;
        }
        // Comments may name upper layers ({@link}s are checked by javadoc); code may not.
        String code = source.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\\n]*", "");
        Matcher m = REF.matcher(code.substring(code.indexOf(';') + 1));
        while (m.find()) {
            String used = m.group(1);
            Integer r = RANK.get(used);
            if (r == null) {
                bad.add(own + " → " + used + " (package not in the layer map)");
            } else if (!used.equals(own) && r >= ownRank) {
                bad.add(own + " → " + used);
            }
        }
        return bad;
    }

    @Test
    void noPackageImportsUpward() throws IOException {
        List<String> found = new ArrayList<>();
        List<Path> sources = mainSources();
        assertTrue(sources.size() > 100, "found only " + sources.size() + " sources");
        for (Path f : sources) {
            String src;
            try {
                src = Files.readString(f);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            for (String v : violations(src)) {
                found.add(projectRoot().relativize(f) + ": " + v);
            }
        }
        assertEquals(List.of(), found, "imports that point up the stack or between the providers");
    }

    @Test
    void theCheckSeesUpwardAndSidewaysImports() {
        assertEquals(Set.of("mpa → rdmap"), violations("package org.jwarp.mpa;\nimport org.jwarp.rdmap.TermCode;\n"));
        assertEquals(Set.of("soft → disni"), violations("package org.jwarp.soft;\nclass X { org.jwarp.disni.DisniInfo i; }\n"));
        assertEquals(Set.of(), violations("package org.jwarp.rdmap;\nimport org.jwarp.ddp.DdpHeader;\nimport org.jwarp.ground.TermCode;\n"));
        assertEquals(Set.of(), violations("package org.jwarp.ddp;\n/** see {@link org.jwarp.rdmap.RdmapEndpoint} */ class X {}\n"));
        assertEquals(Set.of("cli → bench (package not in the layer map)"), violations("package org.jwarp.cli;\nimport org.jwarp.bench.X;\n"));
    }

    @Test
    void publicVerbsSignaturesUseOnlyVerbsAndGroundTypes() throws IOException {
        // The verbs API may read constants from below (e.g. MPA limits) but its public signatures
        // name only verbs and ground types: a consumer never needs an engine class.
        Path verbs = projectRoot().resolve("java/core/src/main/java/org/jwarp/verbs");
        List<String> found = new ArrayList<>();
        try (Stream<Path> s = Files.list(verbs)) {
            for (Path f : (Iterable<Path>) s.filter(p -> p.toString().endsWith(".java"))::iterator) {
                String code = Files.readString(f).replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\\n]*", "");
                for (String line : code.split("\n")) {
                    if (!line.trim().startsWith("public") && !line.trim().startsWith("protected")) {
                        continue;
                    }
                    for (String imp : importedBelowVerbs(code)) {
                        if (Pattern.compile("\\b" + imp + "\\b").matcher(line).find() && !line.contains("static final")) {
                            found.add(f.getFileName() + ": " + line.trim());
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), found);
    }

    /** Simple names imported from org.jwarp packages other than verbs and ground. */
    private static List<String> importedBelowVerbs(String code) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("import org\\.jwarp\\.([a-z]+)\\.([A-Z]\\w*);").matcher(code);
        while (m.find()) {
            if (!m.group(1).equals("verbs") && !m.group(1).equals("ground")) {
                out.add(m.group(2));
            }
        }
        return out;
    }
}
