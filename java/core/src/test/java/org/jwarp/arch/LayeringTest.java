package org.jwarp.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages follow the protocol stack and only point down: ground (wire vocabulary) → memory →
 * mpa → sctp → ddp → rdmap → negotiation → verbs → provider → {soft, disni, ffm} → {cli, examples} →
 * bench. A package may use its own layer and the layers below; equal layers never use each other.
 * Checked on the main sources of core, ffm, cli, examples and benchmarks: every reference to an
 * {@code org.jwarp} package in code, imports and fully qualified names alike, with comments and
 * string literals taken out first. More rules:
 * <ul>
 *   <li>{@code disni.impl} and {@code disni.natives} are defined by DiSNI's own class loader: no
 *       class outside them refers to them in code (the parent loader would load its own copy), and
 *       {@code disni} names them in strings only at the entry points in {@link #DISNI_ENTRY_POINTS}.
 *   <li>{@code ffm} (java/ffm, JDK 22+) is reached through {@code ServiceLoader} only: no package
 *       outside {@code ffm} refers to it, not even the layers above.
 *   <li>Every file sits in a package of the layer map, never in the bare {@code org.jwarp}.
 *   <li>The sub-packages of a layer in {@link #ACYCLIC} form no import cycle.
 *   <li>Inside {@code soft} the sub-packages point one way only, down {@link #SOFT_ORDER}.
 *   <li>In {@code soft}'s top package only {@link #SOFT_DEVICE_SIDE} name the device and the
 *       provider; the connection side sees its device as {@code StreamHost}, setup as
 *       {@code soft.cm.ConnectionHost}.
 *   <li>Connection setup is {@code soft.cm}'s: no class of {@code soft}'s top package accepts on a
 *       server socket or implements the verbs' {@code Listener} or {@code ConnectionManager}.
 * </ul>
 */
class LayeringTest {
    /** Layer rank of each package; equal ranks (soft, disni, ffm; cli, examples) may not use each other. */
    static final Map<String, Integer> RANK = Map.ofEntries(
            Map.entry("ground", 0), Map.entry("memory", 1), Map.entry("mpa", 2), Map.entry("sctp", 3),
            Map.entry("ddp", 4), Map.entry("rdmap", 5), Map.entry("negotiation", 6), Map.entry("verbs", 7),
            Map.entry("provider", 8), Map.entry("soft", 9), Map.entry("disni", 9), Map.entry("ffm", 9),
            Map.entry("cli", 10),
            Map.entry("examples", 10), Map.entry("bench", 11));

    /** Packages whose classes DisniClassLoader defines (its CHILD_FIRST list). */
    static final List<String> DISNI_LOADED = List.of("disni.impl", "disni.natives");

    /** The only names by which {@code disni} reaches into its loader (reflectively). */
    static final Set<String> DISNI_ENTRY_POINTS = Set.of(
            "org.jwarp.disni.impl.", "org.jwarp.disni.natives.",
            "org.jwarp.disni.impl.DisniProviderImpl", "org.jwarp.disni.impl.NativeInfoImpl",
            "org.jwarp.disni.natives.JwarpNative");

    /** Layers whose sub-packages must not import each other in a cycle. */
    static final Set<String> ACYCLIC = Set.of("rdmap", "soft");

    /**
     * Inside {@code soft}, bottom first: a sub-package may use only those before it; connection
     * setup ({@code soft.cm}: the connection manager, the listener's accept, backlog and eviction,
     * MPA setup) sees the stream only through its own {@code SetupStream} and the device as its
     * {@code ConnectionHost}, and the bare {@code soft} (the provider, its config and factory, the
     * connection and stream, the listener's idle sweep) sits on top.
     */
    static final List<String> SOFT_ORDER = List.of("soft.loop", "soft.tx", "soft.verbs", "soft.cq", "soft.cm", "soft");

    /** Classes of the top {@code soft} package that may name {@code SoftDevice} and {@code SoftProvider}. */
    static final Set<String> SOFT_DEVICE_SIDE = Set.of("SoftDevice", "SoftProvider", "SoftProviderFactory", "SoftConfig");
    private static final Pattern SOFT_DEVICE_NAME = Pattern.compile("\\b(SoftDevice|SoftProvider)\\b");
    /** What only connection setup ({@code soft.cm}) does: accept on a server socket, be rdma_cm's listener or manager. */
    private static final Pattern SETUP_ONLY = Pattern.compile(
            "\\bServerSocketChannel\\b|\\bimplements\\b[^{]*\\b(Listener|ConnectionManager)\\b");

    /** A package path below org.jwarp, e.g. "disni.impl" in org.jwarp.disni.impl.DisniQp. */
    private static final Pattern REF = Pattern.compile("\\borg\\.jwarp\\.([a-z][a-z0-9_]*(?:\\.[a-z][a-z0-9_]*)*)");
    private static final Pattern PKG = Pattern.compile("^\\s*package\\s+org\\.jwarp(?:\\.([a-z][a-z0-9_.]*))?\\s*;", Pattern.MULTILINE);
    private static final Pattern NAMES_LOADED = Pattern.compile("org\\.jwarp\\.disni\\.(?:impl|natives)\\b");

    static final List<String> SOURCE_ROOTS = List.of("java/core/src/main/java", "java/ffm/src/main/java",
            "java/cli/src/main/java", "java/examples/src/main/java", "benchmarks/src/main/java");

    /** A provider that only its own packages may refer to (the others find it through ServiceLoader). */
    static final String SEALED_PROVIDER = "ffm";

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
        for (String m : SOURCE_ROOTS) {
            try (Stream<Path> s = Files.walk(root.resolve(m))) {
                s.filter(f -> f.toString().endsWith(".java")).forEach(out::add);
            }
        }
        return out;
    }

    /** A source split into code (comments removed, literals emptied) and its string literals. */
    record Stripped(String code, List<String> strings) {
    }

    /**
     * One pass over the source, so that a comment marker inside a string ({@code "//"}) and a quote
     * inside a comment are each read as what they are: string and char literals (text blocks too)
     * become empty, comments become a space.
     */
    static Stripped strip(String src) {
        StringBuilder code = new StringBuilder(src.length());
        List<String> strings = new ArrayList<>();
        int i = 0;
        int n = src.length();
        while (i < n) {
            char c = src.charAt(i);
            if (src.startsWith("//", i)) {
                while (i < n && src.charAt(i) != '\n') {
                    i++;
                }
            } else if (src.startsWith("/*", i)) {
                int close = src.indexOf("*/", i + 2);
                i = close < 0 ? n : close + 2;
                code.append(' ');
            } else if (src.startsWith("\"\"\"", i)) {
                int j = i + 3;
                while (j < n && !src.startsWith("\"\"\"", j)) {
                    j += src.charAt(j) == '\\' ? 2 : 1;
                }
                strings.add(src.substring(i + 3, Math.min(j, n)));
                code.append("\"\"");
                i = j + 3;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && src.charAt(j) != c && src.charAt(j) != '\n') {
                    j += src.charAt(j) == '\\' ? 2 : 1;
                }
                if (c == '"') {
                    strings.add(src.substring(i + 1, Math.min(j, n)));
                }
                code.append(c).append(c);
                i = j + 1;
            } else {
                code.append(c);
                i++;
            }
        }
        return new Stripped(code.toString(), strings);
    }

    /** The package of a source below org.jwarp ("" for the bare package), or null if it has none. */
    static String packageOf(String code) {
        Matcher pm = PKG.matcher(code);
        if (!pm.find()) {
            return null;
        }
        return pm.group(1) == null ? "" : pm.group(1);
    }

    static String layerOf(String pkg) {
        int dot = pkg.indexOf('.');
        return dot < 0 ? pkg : pkg.substring(0, dot);
    }

    static boolean disniLoaded(String pkg) {
        for (String p : DISNI_LOADED) {
            if (pkg.equals(p) || pkg.startsWith(p + ".")) {
                return true;
            }
        }
        return false;
    }

    /** The org.jwarp packages that a source's code refers to, besides its own. */
    static Set<String> references(String code) {
        Set<String> used = new TreeSet<>();
        Matcher m = REF.matcher(code.substring(code.indexOf(';') + 1));
        while (m.find()) {
            used.add(m.group(1));
        }
        return used;
    }

    /** The violations in one source text: "pkg → used" pairs that point up, sideways or into DiSNI's loader. */
    static Set<String> violations(String source) {
        Set<String> bad = new TreeSet<>();
        Stripped s = strip(source);
        String own = packageOf(s.code());
        if (own == null || own.isEmpty()) {
            bad.add(own == null ? "no package declaration" : "in the bare org.jwarp package (not in the layer map)");
            return bad;
        }
        Integer ownRank = RANK.get(layerOf(own));
        if (ownRank == null) {
            bad.add(own + " is not in the layer map");
            return bad;
        }
        for (String used : references(s.code())) {
            Integer r = RANK.get(layerOf(used));
            if (r == null) {
                bad.add(own + " → " + used + " (package not in the layer map)");
            } else if (layerOf(used).equals(SEALED_PROVIDER) && !layerOf(own).equals(SEALED_PROVIDER)) {
                bad.add(own + " → " + used + " (" + SEALED_PROVIDER + " is reached through ServiceLoader only)");
            } else if (!layerOf(used).equals(layerOf(own)) && r >= ownRank) {
                bad.add(own + " → " + layerOf(used));
            } else if (layerOf(own).equals("soft") && layerOf(used).equals("soft") && !used.equals(own)
                    && !(SOFT_ORDER.indexOf(used) >= 0 && SOFT_ORDER.indexOf(used) < SOFT_ORDER.indexOf(own))) {
                bad.add(own + " → " + used + " (against soft's order " + SOFT_ORDER + ")");
            } else if (disniLoaded(used) && !disniLoaded(own)) {
                bad.add(own + " → " + used + " (DiSNI's class loader defines it: reach it through DisniRuntime)");
            }
        }
        for (String str : s.strings()) {
            if (NAMES_LOADED.matcher(str).find() && (!own.equals("disni") || !DISNI_ENTRY_POINTS.contains(str))) {
                bad.add(own + " names \"" + str + "\" (not a DiSNI entry point)");
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
            for (String v : violations(read(f))) {
                found.add(projectRoot().relativize(f) + ": " + v);
            }
        }
        assertEquals(List.of(), found, "imports that point up the stack, between equal layers or into DiSNI's loader");
    }

    @Test
    void noImportCycleBetweenSubPackagesOfOneLayer() throws IOException {
        Map<String, Set<String>> graph = new TreeMap<>();
        for (Path f : mainSources()) {
            Stripped s = strip(read(f));
            String own = packageOf(s.code());
            if (own == null || !ACYCLIC.contains(layerOf(own))) {
                continue;
            }
            Set<String> out = graph.computeIfAbsent(own, k -> new TreeSet<>());
            for (String used : references(s.code())) {
                if (!used.equals(own) && layerOf(used).equals(layerOf(own))) {
                    out.add(used);
                }
            }
        }
        assertEquals(List.of(), cycles(graph), "import cycles between sub-packages of " + ACYCLIC);
    }

    /** Each cycle in a package graph, as "a → b → a", found once from its smallest package. */
    static List<String> cycles(Map<String, Set<String>> graph) {
        List<String> found = new ArrayList<>();
        for (String start : new TreeSet<>(graph.keySet())) {
            Deque<List<String>> paths = new ArrayDeque<>();
            paths.push(List.of(start));
            Set<String> seen = new TreeSet<>();
            while (!paths.isEmpty()) {
                List<String> path = paths.pop();
                for (String next : graph.getOrDefault(path.get(path.size() - 1), Set.of())) {
                    if (next.equals(start)) {
                        found.add(String.join(" → ", path) + " → " + start);
                    } else if (next.compareTo(start) > 0 && seen.add(next)) {
                        List<String> longer = new ArrayList<>(path);
                        longer.add(next);
                        paths.push(longer);
                    }
                }
            }
        }
        return found;
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theCheckSeesUpwardAndSidewaysImports() {
        assertEquals(Set.of("mpa → rdmap"), violations("package org.jwarp.mpa;\nimport org.jwarp.rdmap.TermCode;\n"));
        assertEquals(Set.of("soft → disni"), violations("package org.jwarp.soft;\nclass X { org.jwarp.disni.DisniInfo i; }\n"));
        assertEquals(Set.of(), violations("package org.jwarp.rdmap;\nimport org.jwarp.ddp.DdpHeader;\nimport org.jwarp.ground.TermCode;\n"));
        assertEquals(Set.of(), violations("package org.jwarp.ddp;\n/** see {@link org.jwarp.rdmap.RdmapEndpoint} */ class X {}\n"));
        assertEquals(Set.of("cli → bench"), violations("package org.jwarp.cli;\nimport org.jwarp.bench.X;\n"));
        assertEquals(Set.of("cli → ffm (ffm is reached through ServiceLoader only)"),
                violations("package org.jwarp.cli;\nimport org.jwarp.ffm.X;\n"));
        assertEquals(Set.of("bench → ffm.impl (ffm is reached through ServiceLoader only)"),
                violations("package org.jwarp.bench;\nclass X { org.jwarp.ffm.impl.FfmDevice d; }\n"));
        assertEquals(Set.of("ffm.impl → soft"), violations("package org.jwarp.ffm.impl;\nimport org.jwarp.soft.SoftConfig;\n"));
        assertEquals(Set.of(), violations("package org.jwarp.ffm.impl;\nimport org.jwarp.provider.CmNegotiation;\n"
                + "import org.jwarp.verbs.Device;\nimport org.jwarp.ffm.FfmRuntime;\n"));
        assertEquals(Set.of("examples.kv → cli"), violations("package org.jwarp.examples.kv;\nimport org.jwarp.cli.X;\n"));
    }

    @Test
    void softSubPackagesPointOnlyDown() {
        assertEquals(Set.of("soft.tx → soft (against soft's order " + SOFT_ORDER + ")"),
                violations("package org.jwarp.soft.tx;\nimport org.jwarp.soft.SoftConfig;\n"));
        assertEquals(Set.of("soft.tx → soft.nowhere (against soft's order " + SOFT_ORDER + ")"),
                violations("package org.jwarp.soft.tx;\nclass X { org.jwarp.soft.nowhere.Y y; }\n"));
        assertEquals(Set.of("soft.tx → soft.verbs (against soft's order " + SOFT_ORDER + ")"),
                violations("package org.jwarp.soft.tx;\nimport org.jwarp.soft.verbs.SoftQueuePair;\n"));
        assertEquals(Set.of(), violations("package org.jwarp.soft;\nimport org.jwarp.soft.tx.TxGather;\n"));
        assertEquals(Set.of(), violations("package org.jwarp.soft.verbs;\nimport org.jwarp.soft.tx.TxGather;\n"));
        // connection setup sits below the stream that uses it, above the verbs objects it binds
        assertEquals(Set.of("soft.cm → soft (against soft's order " + SOFT_ORDER + ")"),
                violations("package org.jwarp.soft.cm;\nclass X { org.jwarp.soft.SoftConfig c; }\n"));
        assertEquals(Set.of("soft.verbs → soft.cm (against soft's order " + SOFT_ORDER + ")"),
                violations("package org.jwarp.soft.verbs;\nimport org.jwarp.soft.cm.SetupStream;\n"));
        assertEquals(Set.of(), violations("package org.jwarp.soft.cm;\nimport org.jwarp.soft.verbs.SoftQueuePair;\n"
                + "import org.jwarp.soft.loop.Reactor;\n"));
        assertEquals(Set.of(), violations("package org.jwarp.soft;\nimport org.jwarp.soft.cm.StreamSetup;\n"));
        // the listener's accept is setup's; its idle sweep reads the data path, which setup never sees
        assertEquals(Set.of("soft.cm → soft (against soft's order " + SOFT_ORDER + ")"),
                violations("package org.jwarp.soft.cm;\nclass SoftListener { org.jwarp.soft.SoftStream s; }\n"));
        assertEquals(Set.of(), violations("package org.jwarp.soft;\nimport org.jwarp.soft.cm.AcceptedStreams;\n"
                + "import org.jwarp.soft.cm.SoftListener;\n"));
    }

    /** What class {@code cls} of the top {@code soft} package names of the device side, in code only. */
    static Set<String> deviceNames(String cls, String source) {
        Set<String> named = new TreeSet<>();
        if (!SOFT_DEVICE_SIDE.contains(cls)) {
            Matcher m = SOFT_DEVICE_NAME.matcher(strip(source).code());
            while (m.find()) {
                named.add(cls + " names " + m.group(1));
            }
        }
        return named;
    }

    @Test
    void softConnectionSideSeesItsDeviceOnlyAsConnectionHost() throws IOException {
        assertEquals(Set.of("SoftStream names SoftDevice"),
                deviceNames("SoftStream", "package org.jwarp.soft;\nclass SoftStream { SoftDevice d; }\n"));
        assertEquals(Set.of(), deviceNames("SoftStream", "package org.jwarp.soft;\n/** {@link SoftDevice} */ class SoftStream { String s = \"SoftProvider\"; }\n"));
        Set<String> found = new TreeSet<>();
        try (Stream<Path> files = Files.list(projectRoot().resolve("java/core/src/main/java/org/jwarp/soft"))) {
            for (Path f : files.filter(x -> x.toString().endsWith(".java")).toList()) {
                found.addAll(deviceNames(f.getFileName().toString().replace(".java", ""), read(f)));
            }
        }
        assertEquals(Set.of(), found, "connection classes that name the device or the provider instead of StreamHost");
    }

    /** What class {@code cls} of the top {@code soft} package does of connection setup, in code only. */
    static Set<String> setupDoneAbove(String cls, String source) {
        Set<String> done = new TreeSet<>();
        Matcher m = SETUP_ONLY.matcher(strip(source).code());
        while (m.find()) {
            done.add(cls + ": " + m.group().replaceAll("\\s+", " "));
        }
        return done;
    }

    @Test
    void softTopPackageLeavesConnectionSetupToCm() throws IOException {
        assertEquals(Set.of("SoftListener: implements Listener"),
                setupDoneAbove("SoftListener", "package org.jwarp.soft;\nfinal class SoftListener implements Listener, Reactor.Handler {}\n"));
        assertEquals(Set.of("X: ServerSocketChannel"),
                setupDoneAbove("X", "package org.jwarp.soft;\nclass X { java.nio.channels.ServerSocketChannel s; }\n"));
        assertEquals(Set.of("M: implements org.jwarp.verbs.ConnectionManager"),
                setupDoneAbove("M", "package org.jwarp.soft;\nclass M implements org.jwarp.verbs.ConnectionManager {}\n"));
        assertEquals(Set.of(), setupDoneAbove("SoftDevice", "package org.jwarp.soft;\n/** a ServerSocketChannel */ class SoftDevice"
                + " implements CqDevice { ConnectionManager connectionManager() { return cm; } AsyncEventListener l; }\n"));
        Set<String> found = new TreeSet<>();
        try (Stream<Path> files = Files.list(projectRoot().resolve("java/core/src/main/java/org/jwarp/soft"))) {
            for (Path f : files.filter(x -> x.toString().endsWith(".java")).toList()) {
                found.addAll(setupDoneAbove(f.getFileName().toString().replace(".java", ""), read(f)));
            }
        }
        assertEquals(Set.of(), found, "connection setup in soft's top package instead of soft.cm");
    }

    @Test
    void stringLiteralsAreTakenOutBeforeComments() {
        // A comment opener inside a string does not hide the code after it...
        assertEquals(Set.of("mpa → rdmap"), violations("package org.jwarp.mpa;\nclass X { String s = \"/*\"; org.jwarp.rdmap.Y y; String t = \"*/\"; }\n"));
        assertEquals(Set.of("mpa → rdmap"), violations("package org.jwarp.mpa;\nclass X { String s = \"http://x\"; org.jwarp.rdmap.Y y; }\n"));
        // ...and a package named in a string or a text block is not a reference.
        assertEquals(Set.of(), violations("package org.jwarp.mpa;\nclass X { String s = \"org.jwarp.rdmap.Y\"; char q = '\"'; }\n"));
        assertEquals(Set.of(), violations("package org.jwarp.mpa;\nclass X { String s = \"\"\"\n  \\\"org.jwarp.cli.Y\n\"\"\"; }\n"));
    }

    @Test
    void disniImplIsReachedOnlyThroughTheLoaderEntryPoints() {
        assertEquals(Set.of("disni → disni.impl (DiSNI's class loader defines it: reach it through DisniRuntime)"),
                violations("package org.jwarp.disni;\nimport org.jwarp.disni.impl.DisniQp;\n"));
        assertEquals(Set.of("cli → disni.natives (DiSNI's class loader defines it: reach it through DisniRuntime)"),
                violations("package org.jwarp.cli;\nclass X { org.jwarp.disni.natives.JwarpNative n; }\n"));
        assertEquals(Set.of("disni names \"org.jwarp.disni.impl.DisniQp\" (not a DiSNI entry point)"),
                violations("package org.jwarp.disni;\nclass X { String s = \"org.jwarp.disni.impl.DisniQp\"; }\n"));
        assertEquals(Set.of("cli names \"org.jwarp.disni.impl.DisniProviderImpl\" (not a DiSNI entry point)"),
                violations("package org.jwarp.cli;\nclass X { String s = \"org.jwarp.disni.impl.DisniProviderImpl\"; }\n"));
        assertEquals(Set.of(), violations("package org.jwarp.disni;\nclass X { String s = \"org.jwarp.disni.impl.NativeInfoImpl\"; }\n"));
        assertEquals(Set.of(), violations("package org.jwarp.disni.impl;\nimport org.jwarp.disni.NativeInfo;\nimport org.jwarp.disni.natives.JwarpNative;\n"));
    }

    @Test
    void everyFileSitsInALayerPackage() {
        assertEquals(Set.of("in the bare org.jwarp package (not in the layer map)"), violations("package org.jwarp;\nclass X {}\n"));
        assertEquals(Set.of("no package declaration"), violations("class X { org.jwarp.ground.TermCode t; }\n"));
        assertEquals(Set.of(), violations("/* package org.jwarp; */\npackage org.jwarp.ground;\nclass X {}\n"));
    }

    @Test
    void theCycleCheckSeesCyclesBetweenSubPackages() {
        assertEquals(List.of("rdmap.a → rdmap.b → rdmap.a"),
                cycles(Map.of("rdmap.a", Set.of("rdmap.b"), "rdmap.b", Set.of("rdmap.a"))));
        assertEquals(List.of("rdmap → rdmap.a → rdmap.b → rdmap"),
                cycles(Map.of("rdmap", Set.of("rdmap.a"), "rdmap.a", Set.of("rdmap.b"), "rdmap.b", Set.of("rdmap"))));
        assertEquals(List.of(), cycles(Map.of("rdmap", Set.of("rdmap.a", "rdmap.b"), "rdmap.a", Set.of("rdmap.b"))));
    }

    @Test
    void publicVerbsSignaturesUseOnlyVerbsAndGroundTypes() throws IOException {
        // The verbs API may read constants from below (e.g. MPA limits) but its public signatures
        // name only verbs and ground types: a consumer never needs an engine class.
        Path verbs = projectRoot().resolve("java/core/src/main/java/org/jwarp/verbs");
        List<String> found = new ArrayList<>();
        try (Stream<Path> s = Files.list(verbs)) {
            for (Path f : (Iterable<Path>) s.filter(p -> p.toString().endsWith(".java"))::iterator) {
                String code = strip(Files.readString(f)).code();
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
