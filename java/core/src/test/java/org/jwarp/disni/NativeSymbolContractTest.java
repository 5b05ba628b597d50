package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The JNI contract of the bundled libdisni: every native method that DiSNI 2.1's
 * NativeDispatcher and NativeAffinity declare, and every one of jwarp's JwarpNative, is exported
 * by {@code nm -D}, and nothing else named {@code Java_*} is.
 */
@Tag("native")
class NativeSymbolContractTest {
    static final String DISPATCHER = "com.ibm.disni.verbs.impl.NativeDispatcher";
    static final String AFFINITY = "com.ibm.disni.util.NativeAffinity";
    static final String EXTENSION = "org.jwarp.disni.natives.JwarpNative";

    static Path bundledLibrary() throws URISyntaxException {
        URL url = NativeSymbolContractTest.class.getClassLoader().getResource(NativeLibrary.resourcePath());
        assertNotNull(url, "the build must put " + NativeLibrary.resourcePath() + " on the class path");
        assertEquals("file", url.getProtocol(), "expected target/classes during the build");
        return Paths.get(url.toURI());
    }

    static Set<String> exportedJniSymbols(Path lib) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("nm", "-D", "--defined-only", lib.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "nm did not finish");
        assertEquals(0, p.exitValue(), "nm -D failed: " + out);
        Set<String> syms = new TreeSet<>();
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3 && "T".equals(f[1]) && f[2].startsWith("Java_")) {
                syms.add(f[2]);
            }
        }
        return syms;
    }

    /** JNI short name mangling (JNI spec, "Resolving Native Method Names"). */
    static String mangle(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '.' || c == '/') {
                b.append('_');
            } else if (c == '_') {
                b.append("_1");
            } else if (c == ';') {
                b.append("_2");
            } else if (c == '[') {
                b.append("_3");
            } else if (c < 128 && Character.isLetterOrDigit(c)) {
                b.append(c);
            } else {
                b.append(String.format("_0%04x", (int) c));
            }
        }
        return b.toString();
    }

    static List<String> expectedSymbols(String className) throws ClassNotFoundException {
        Class<?> c = Class.forName(className, false, NativeSymbolContractTest.class.getClassLoader());
        List<String> out = new ArrayList<>();
        Set<String> names = new TreeSet<>();
        for (Method m : c.getDeclaredMethods()) {
            if (Modifier.isNative(m.getModifiers())) {
                assertTrue(names.add(m.getName()), "overloaded native " + m + " would need long JNI names");
                out.add("Java_" + mangle(className) + "_" + mangle(m.getName()));
            }
        }
        return out;
    }

    @Test
    @DisplayName("libdisni exports exactly the 50 DiSNI 2.1 natives plus the jwarp extension")
    void exportsExactlyTheDeclaredNatives() throws Exception {
        List<String> disni = new ArrayList<>(expectedSymbols(DISPATCHER));
        disni.addAll(expectedSymbols(AFFINITY));
        assertEquals(50, disni.size(), "DiSNI 2.1 declares 48 + 2 natives");
        Set<String> expected = new TreeSet<>(disni);
        expected.addAll(expectedSymbols(EXTENSION));
        Set<String> exported = exportedJniSymbols(bundledLibrary());
        Set<String> missing = new TreeSet<>(expected);
        missing.removeAll(exported);
        Set<String> extra = new TreeSet<>(exported);
        extra.removeAll(expected);
        assertTrue(missing.isEmpty(), "natives without a symbol: " + missing);
        assertTrue(extra.isEmpty(), "exported Java_ symbols no class declares: " + extra);
    }

    @Test
    void manglingFollowsTheJniSpec() {
        assertEquals("com_ibm_disni_verbs_impl_NativeDispatcher", mangle(DISPATCHER));
        assertEquals("_1getCmEvent", mangle("_getCmEvent"));
        assertEquals("a_2b_3c_00024", mangle("a;b[c$"));
    }
}
