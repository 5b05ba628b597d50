package org.jwarp.ffm.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Which wait {@code FfmCq.await} uses (host, no device): jwarp's native library's
 * {@code jw_cq_await} when {@code -Djwarp.ffm.nativeLib} names it, the Java steps otherwise,
 * also when the library or its symbol is missing.
 */
class FfmNativeWaitTest {
    @Test
    void theNamedLibrarysOneCallWaitIsBound() {
        String lib = NativeWaitLibrary.path().toString();
        FfmNativeWait w = NativeWaitLibrary.with(lib, FfmNativeWait::configured);
        assertNotNull(w, "jw_cq_await of " + lib);
        assertEquals("jw_cq_await of " + lib, w.toString());
        assertEquals(7, w.await.type().parameterCount(), "cq, channel, wakeFd, n, wcs, timeoutNanos, unacked");
        assertSame(w, NativeWaitLibrary.with(lib, FfmNativeWait::configured), "bound once per path");
    }

    @Test
    void withoutThePropertyTheWaitIsJavas() {
        assertNull(NativeWaitLibrary.with(null, FfmNativeWait::configured));
        assertNull(NativeWaitLibrary.with(" ", FfmNativeWait::configured));
    }

    @Test
    void aMissingLibraryOrSymbolFallsBackToJava() {
        assertNull(NativeWaitLibrary.with("/nonexistent/libdisni.so", FfmNativeWait::configured));
        // a library without the symbol: the JDK's own
        String other = Path.of(System.getProperty("java.home"), "lib", "libjava.so").toString();
        assertNull(NativeWaitLibrary.with(other, FfmNativeWait::configured));
    }
}
