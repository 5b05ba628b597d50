package org.jwarp.soft;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.jwarp.soft.cm.CmSettings;
import org.jwarp.verbs.AwaitStrategy;

/**
 * Tunables of the embedded provider. Defaults follow Linux siw where it has a value: the
 * initiator waits 10 s for the MPA Reply, the responder 5 s for the MPA Request (RFC 5044 §7.1
 * leaves the timer to the implementation), TCP_NODELAY on, no markers (RFC 5044 §7.1.2 M=0), and
 * FPDUs no larger than the path's MSS rounded down to a multiple of 8 (RFC 5044 §8.1 MULPDU).
 *
 * <p>Each value can be set with a system property {@code jwarp.soft.<name>} (durations in
 * milliseconds) read by {@link #fromSystemProperties()}, or by the same name in the settings
 * handed to {@code Rdma.open("soft", settings)} ({@link #fromSettings}); README has the table.
 *
 * @param initiatorTimeout  longest wait for the MPA Reply after the Request was sent
 * @param responderTimeout  longest wait for a complete MPA Request after TCP accept, and for the
 *                          RTR after the Reply was sent (RFC 6581 §5)
 * @param decisionTimeout   longest time an accepted-but-undecided request may wait for
 *                          {@code accept}/{@code reject}; it is then rejected
 * @param maxFpdu           largest FPDU this side sends (bytes, incl. MPA header, pad and CRC)
 * @param txBufferSize      bytes of one transmit staging area: a stream borrows one from its
 *                          device's pool while it has bytes the socket has not taken, and gives it
 *                          back once they left (receive buffers are per reactor thread: the
 *                          decoders keep what they need)
 * @param reactors          event-loop threads per provider (connections are spread round-robin)
 * @param pollSpinMicros    receive polling ({@code jwarp.soft.pollSpinMicros}): a thread in
 *                          {@link org.jwarp.soft.cq.SoftCompletionQueue#await} on an empty CQ reads the sockets of that
 *                          CQ's streams itself; it spins this long (reading the readable sockets
 *                          without blocking), then yields up to {@code pollYields} times, before it
 *                          blocks in the CQ's selector; 0 turns receive polling off (the
 *                          reactor delivers every completion) and, with {@code pollYields} unset,
 *                          the yields too: a thread in {@code await} blocks at once.
 *                          See {@link org.jwarp.soft.cq.SoftCompletionQueue}.
 * @param pollMaxStreams    receive polling is used only on CQs serving at most this many streams
 *                          ({@code jwarp.soft.pollMaxStreams}; default: no practical limit, as the
 *                          poller reads only the sockets its selector reports readable)
 * @param pollLeaseMicros   a stream whose poller has not read it for this long is handed back to
 *                          the reactor ({@code jwarp.soft.pollLeaseMicros}; checked once per CQ); bounds the delay seen
 *                          by anything the reactor must notice (Read Requests to answer, Writes to
 *                          place, a TERM, a close) when the polling thread went off to do other work
 * @param fpduStallTimeout  longest time part of an inbound FPDU may wait for its remainder with no
 *                          whole FPDU arriving meanwhile ({@code jwarp.soft.fpduStallTimeoutMs});
 *                          then the stream ends with TERM layer 2 / type 0 / code 5, a local error
 *                          (RFC 6581 §9.3), and closes. Checked lazily: a stall is acted on within
 *                          one to two periods.
 * @param txStagingAreas    most transmit staging areas lent at once per device
 *                          ({@code jwarp.soft.txStagingAreas}); a stream holds at most one, and a
 *                          stream that finds none (this many streams' peers stopped reading)
 *                          waits as on a full socket until one is given back
 * @param pollYields        after the spin, a thread in {@code await} on an empty CQ yields its core
 *                          up to this many times, checking the CQ (and reading its sockets) after
 *                          each, before it blocks ({@code jwarp.soft.pollYields}); the default of
 *                          every CQ, which {@link org.jwarp.verbs.AwaitStrategy} overrides per CQ.
 *                          Unset (in the settings, or a constructor without it), it is
 *                          20, or 0 when {@code pollSpinMicros} is 0
 * @param reactorBusyPollMicros after each event, a reactor thread keeps polling its sockets without
 *                          blocking for this long before it sleeps in {@code epoll_wait}
 *                          ({@code jwarp.soft.reactorBusyPollMicros}; 0 = off, the default): the
 *                          passive side of a Read answers without a thread wake-up, at the cost of
 *                          that much CPU per event (like SO_BUSY_POLL)
 */
public record SoftConfig(Duration initiatorTimeout, Duration responderTimeout, Duration decisionTimeout,
                         int maxFpdu, int txBufferSize, int reactors, int pollSpinMicros, int pollMaxStreams,
                         int pollLeaseMicros, Duration fpduStallTimeout, int txStagingAreas, int pollYields,
                         int reactorBusyPollMicros) implements CmSettings {

    /** Default receive polling: spin this long before parking (covers a loopback round trip). */
    static final int DEFAULT_POLL_SPIN_MICROS = 2;
    static final int DEFAULT_POLL_MAX_STREAMS = 1 << 20;
    static final int DEFAULT_POLL_LEASE_MICROS = 1000;
    /** Default FPDU stall timeout (like the initiator's MPA Reply timeout). */
    static final Duration DEFAULT_FPDU_STALL = Duration.ofSeconds(10);
    /** Default bound on the staging areas lent at once per device (64 MiB at the default size). */
    static final int DEFAULT_TX_STAGING_AREAS = 1024;
    /**
     * Default yields between the spin and blocking in {@code await}: on 2 cores, 64 B await Read
     * 1.39x the TCP blocking floor with a CPU hog running against 1.78x for the spin alone, Send
     * 2.04x against 2.21x (5 runs; benchmarks/RESULTS.md, scripts/bench-await). Longer spins
     * lose by 4-8x under the hog: the spinner takes the core its peer needs.
     */
    static final int DEFAULT_POLL_YIELDS = 20;

    /**
     * {@code pollYields} when it is not set: {@link #DEFAULT_POLL_YIELDS}, or 0 when {@code
     * spinMicros} is 0, so {@code pollSpinMicros=0} alone still means "block at once".
     */
    static int defaultPollYields(int spinMicros) {
        return spinMicros == 0 ? 0 : DEFAULT_POLL_YIELDS;
    }

    /** Default reactor busy-poll window: off. */
    static final int DEFAULT_REACTOR_BUSY_POLL_MICROS = 0;

    public SoftConfig {
        if (maxFpdu < 64 || (maxFpdu & 7) != 0) {
            throw new IllegalArgumentException("maxFpdu: " + maxFpdu + " must be >= 64 and a multiple of 8 (RFC 5044 §8.1)");
        }
        if (txBufferSize < maxFpdu) {
            throw new IllegalArgumentException("txBufferSize >= maxFpdu required: tx=" + txBufferSize + " maxFpdu="
                    + maxFpdu);
        }
        if (reactors < 1 || reactors > 64) {
            throw new IllegalArgumentException("reactors: " + reactors + " must be 1..64");
        }
        if (pollSpinMicros < 0 || pollSpinMicros > 1_000_000) {
            throw new IllegalArgumentException("pollSpinMicros: " + pollSpinMicros + " must be 0..1000000");
        }
        if (pollMaxStreams < 1) {
            throw new IllegalArgumentException("pollMaxStreams: " + pollMaxStreams + " must be >= 1");
        }
        if (pollLeaseMicros < 100 || pollLeaseMicros > 1_000_000) {
            throw new IllegalArgumentException("pollLeaseMicros: " + pollLeaseMicros + " must be 100..1000000");
        }
        if (fpduStallTimeout == null || fpduStallTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("fpduStallTimeout: " + fpduStallTimeout + " must be at least 1 ms");
        }
        if (txStagingAreas < 1) {
            throw new IllegalArgumentException("txStagingAreas: " + txStagingAreas + " must be >= 1");
        }
        if (pollYields < 0 || pollYields > AwaitStrategy.MAX_YIELDS) {
            throw new IllegalArgumentException("pollYields: " + pollYields + " must be 0.." + AwaitStrategy.MAX_YIELDS);
        }
        if (reactorBusyPollMicros < 0 || reactorBusyPollMicros > 1_000_000) {
            throw new IllegalArgumentException("reactorBusyPollMicros: " + reactorBusyPollMicros + " must be 0..1000000");
        }
    }

    /** Without the await yields and the reactor busy-poll window: their defaults (no yields with spin 0). */
    public SoftConfig(Duration initiatorTimeout, Duration responderTimeout, Duration decisionTimeout, int maxFpdu,
                      int txBufferSize, int reactors, int pollSpinMicros, int pollMaxStreams, int pollLeaseMicros,
                      Duration fpduStallTimeout, int txStagingAreas) {
        this(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors, pollSpinMicros,
                pollMaxStreams, pollLeaseMicros, fpduStallTimeout, txStagingAreas, defaultPollYields(pollSpinMicros),
                DEFAULT_REACTOR_BUSY_POLL_MICROS);
    }

    /** The default await strategy of this provider's CQs: spin {@code pollSpinMicros}, then {@code pollYields} yields, then block. */
    public AwaitStrategy awaitStrategy() {
        return AwaitStrategy.of(pollSpinMicros, pollYields);
    }

    /** Without the staging bound: its default. */
    public SoftConfig(Duration initiatorTimeout, Duration responderTimeout, Duration decisionTimeout, int maxFpdu,
                      int txBufferSize, int reactors, int pollSpinMicros, int pollMaxStreams, int pollLeaseMicros,
                      Duration fpduStallTimeout) {
        this(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors, pollSpinMicros,
                pollMaxStreams, pollLeaseMicros, fpduStallTimeout, DEFAULT_TX_STAGING_AREAS);
    }

    /** Without the FPDU stall timeout: its default. */
    public SoftConfig(Duration initiatorTimeout, Duration responderTimeout, Duration decisionTimeout, int maxFpdu,
                      int txBufferSize, int reactors, int pollSpinMicros, int pollMaxStreams, int pollLeaseMicros) {
        this(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors, pollSpinMicros,
                pollMaxStreams, pollLeaseMicros, DEFAULT_FPDU_STALL);
    }

    /** Without the receive-polling knobs: their defaults. */
    public SoftConfig(Duration initiatorTimeout, Duration responderTimeout, Duration decisionTimeout, int maxFpdu,
                      int txBufferSize, int reactors) {
        this(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors,
                DEFAULT_POLL_SPIN_MICROS, DEFAULT_POLL_MAX_STREAMS, DEFAULT_POLL_LEASE_MICROS);
    }

    /**
     * Default cap of the FPDU size: the largest multiple of 8 whose ULPDU fits MPA's 16-bit length
     * (RFC 5044 §4.1), so the path's MSS decides ({@link FpduSizing}): 1448 on Ethernet, 65480 on
     * loopback as Linux siw sends there. One FPDU per 64 KiB rather than four halves the socket
     * reads of a bulk transfer read straight into registered memory (1 MiB RDMA Write on loopback:
     * median 1556 vs 967 MB/s with CRC, 2824 vs 860 without; 10 interleaved runs each, load 4-12).
     */
    static final int DEFAULT_MAX_FPDU = 65528;

    public static SoftConfig defaults() {
        return new SoftConfig(Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(10),
                DEFAULT_MAX_FPDU, 65536, 1);
    }

    /** Prefix of every setting's name, as a system property and in {@link #fromSettings}. */
    public static final String PREFIX = "jwarp.soft.";
    /** Names of the settings after {@link #PREFIX}; the {@code Ms} ones are durations in milliseconds. */
    static final List<String> NAMES = List.of("initiatorTimeoutMs", "responderTimeoutMs", "decisionTimeoutMs",
            "maxFpdu", "txBufferSize", "reactors", "pollSpinMicros", "pollMaxStreams", "pollLeaseMicros",
            "fpduStallTimeoutMs", "txStagingAreas", "pollYields", "reactorBusyPollMicros");

    /** Defaults, overridden by {@code jwarp.soft.*} system properties. */
    public static SoftConfig fromSystemProperties() {
        return fromSettings(Map.of());
    }

    /**
     * Defaults, overridden by {@code jwarp.soft.*} system properties, overridden by {@code
     * settings} (same names, e.g. {@code "jwarp.soft.pollSpinMicros" -> "0"}); names without the
     * prefix are ignored (they belong to other providers), unknown names with it are rejected.
     *
     * @throws IllegalArgumentException for an unknown {@code jwarp.soft.*} name or a value that is no number
     */
    public static SoftConfig fromSettings(Map<String, String> settings) {
        for (String k : settings.keySet()) {
            if (k.startsWith(PREFIX) && !NAMES.contains(k.substring(PREFIX.length()))) {
                throw new IllegalArgumentException("unknown setting " + k + "; known: " + NAMES);
            }
        }
        SoftConfig d = defaults();
        int spinMicros = integer(settings, "pollSpinMicros", d.pollSpinMicros);
        return new SoftConfig(
                millis(settings, "initiatorTimeoutMs", d.initiatorTimeout),
                millis(settings, "responderTimeoutMs", d.responderTimeout),
                millis(settings, "decisionTimeoutMs", d.decisionTimeout),
                integer(settings, "maxFpdu", d.maxFpdu),
                integer(settings, "txBufferSize", d.txBufferSize),
                integer(settings, "reactors", d.reactors),
                spinMicros,
                integer(settings, "pollMaxStreams", d.pollMaxStreams),
                integer(settings, "pollLeaseMicros", d.pollLeaseMicros),
                millis(settings, "fpduStallTimeoutMs", d.fpduStallTimeout),
                integer(settings, "txStagingAreas", d.txStagingAreas),
                integer(settings, "pollYields", defaultPollYields(spinMicros)),
                integer(settings, "reactorBusyPollMicros", d.reactorBusyPollMicros));
    }

    private static int integer(Map<String, String> settings, String name, int dflt) {
        String v = lookup(settings, name);
        try {
            return v == null ? dflt : Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PREFIX + name + ": '" + v + "' is not a whole number", e);
        }
    }

    private static Duration millis(Map<String, String> settings, String name, Duration dflt) {
        String v = lookup(settings, name);
        try {
            return v == null ? dflt : Duration.ofMillis(Long.parseLong(v.trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PREFIX + name + ": '" + v + "' is not a whole number of milliseconds", e);
        }
    }

    private static String lookup(Map<String, String> settings, String name) {
        String key = PREFIX + name;
        return settings.containsKey(key) ? settings.get(key) : System.getProperty(key);
    }

    public SoftConfig withTimeouts(Duration initiator, Duration responder, Duration decision) {
        return new SoftConfig(initiator, responder, decision, maxFpdu, txBufferSize, reactors, pollSpinMicros,
                pollMaxStreams, pollLeaseMicros, fpduStallTimeout, txStagingAreas, pollYields,
                reactorBusyPollMicros);
    }

    public SoftConfig withBuffers(int fpdu, int tx) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, fpdu, tx, reactors, pollSpinMicros,
                pollMaxStreams, pollLeaseMicros, fpduStallTimeout, txStagingAreas, pollYields,
                reactorBusyPollMicros);
    }

    public SoftConfig withReactors(int n) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, n,
                pollSpinMicros, pollMaxStreams, pollLeaseMicros, fpduStallTimeout, txStagingAreas, pollYields,
                reactorBusyPollMicros);
    }

    /**
     * Receive polling: spin time (0 = off), largest CQ fan-out polled, lease; see the record's
     * parameters. Keeps {@code pollYields}: with spin 0, {@code withPollYields(0)} blocks at once.
     */
    public SoftConfig withPolling(int spinMicros, int maxStreams, int leaseMicros) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors,
                spinMicros, maxStreams, leaseMicros, fpduStallTimeout, txStagingAreas, pollYields,
                reactorBusyPollMicros);
    }

    /** Yields in {@code await} between the spin and blocking (every CQ's default); see the record's parameters. */
    public SoftConfig withPollYields(int yields) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors,
                pollSpinMicros, pollMaxStreams, pollLeaseMicros, fpduStallTimeout, txStagingAreas, yields,
                reactorBusyPollMicros);
    }

    /** The reactors' busy-poll window after each event (0 = off); see the record's parameters. */
    public SoftConfig withReactorBusyPoll(int micros) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors,
                pollSpinMicros, pollMaxStreams, pollLeaseMicros, fpduStallTimeout, txStagingAreas, pollYields, micros);
    }

    /** The FPDU stall timeout; see the record's parameters. */
    public SoftConfig withFpduStallTimeout(Duration stall) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors,
                pollSpinMicros, pollMaxStreams, pollLeaseMicros, stall, txStagingAreas, pollYields,
                reactorBusyPollMicros);
    }

    /** The bound on staging areas lent at once; see the record's parameters. */
    public SoftConfig withTxStagingAreas(int areas) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, reactors,
                pollSpinMicros, pollMaxStreams, pollLeaseMicros, fpduStallTimeout, areas, pollYields,
                reactorBusyPollMicros);
    }
}
