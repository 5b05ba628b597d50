package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The blocking wait of {@link FfmCq#await} in one downcall (RFC 5040 §5.5 completion
 * notification): {@code jw_cq_await} of jwarp's native library ({@code libdisni.so}, the DiSNI
 * provider's JNI library, which exports the sequence as a plain C function), bound at run time
 * from the path the system property {@value #PROPERTY} names. The call polls, arms, polls, sleeps
 * on the CQ's channel and its wake-up eventfd, takes the event and polls again, acknowledging
 * events in batches. Optional: without the property, or when the library or the symbol is missing
 * (said once in a warning), the wait is the pure-Java sequence of {@link FfmCqWait}, one downcall
 * per step; the provider needs nothing beyond libibverbs and librdmacm either way.
 */
final class FfmNativeWait {
    private static final Logger LOG = LoggerFactory.getLogger(FfmNativeWait.class);
    /** The system property naming the native library's path. */
    static final String PROPERTY = "jwarp.ffm.nativeLib";
    static final String SYMBOL = "jw_cq_await";
    /**
     * {@code int jw_cq_await(struct ibv_cq *, struct ibv_comp_channel *, int wakeFd, int n,
     * struct ibv_wc *, int64_t timeoutNanos, uint32_t *unacked)}: blocks, so not a critical call.
     */
    private static final FunctionDescriptor AWAIT = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT,
            ADDRESS, JAVA_LONG, ADDRESS);
    /** Each path tried: its binding, or {@link #NONE} when it could not be bound (warned once). */
    private static final Map<String, FfmNativeWait> BOUND = new ConcurrentHashMap<>();
    private static final FfmNativeWait NONE = new FfmNativeWait(null, null);

    /** The library's path. */
    final String library;
    /** The downcall handle of {@value #SYMBOL}. */
    final MethodHandle await;

    private FfmNativeWait(String library, MethodHandle await) {
        this.library = library;
        this.await = await;
    }

    /** The wait the property names now, or null for the Java sequence (property unset, or not bindable). */
    static FfmNativeWait configured() {
        String path = System.getProperty(PROPERTY);
        if (path == null || path.isBlank()) {
            return null;
        }
        FfmNativeWait w = BOUND.computeIfAbsent(path.strip(), FfmNativeWait::bind);
        return w == NONE ? null : w;
    }

    private static FfmNativeWait bind(String path) {
        try {
            SymbolLookup lib = SymbolLookup.libraryLookup(java.nio.file.Path.of(path), Arena.global());
            MethodHandle h = Linker.nativeLinker().downcallHandle(lib.findOrThrow(SYMBOL), AWAIT);
            LOG.debug("ffm: CompletionQueue.await waits in one downcall, {} of {}", SYMBOL, path);
            return new FfmNativeWait(path, h);
        } catch (IllegalArgumentException | NoSuchElementException | IllegalCallerException e) {
            LOG.warn("ffm: -D{}={}: {} could not be bound ({}); CompletionQueue.await waits in Java steps", PROPERTY, path,
                    SYMBOL, e.getMessage());
            return NONE;
        }
    }

    @Override
    public String toString() {
        return SYMBOL + " of " + library;
    }
}
