package org.jwarp.soft;

import java.time.Duration;

/**
 * Tunables of the embedded provider. Defaults follow Linux siw where it has a value: the
 * initiator waits 10 s for the MPA Reply, the responder 5 s for the MPA Request (RFC 5044 §7.1
 * leaves the timer to the implementation), TCP_NODELAY on, no markers (RFC 5044 §7.1.2 M=0), and
 * FPDUs no larger than the path's MSS rounded down to a multiple of 8 (RFC 5044 §8.1 MULPDU).
 *
 * <p>Each value can be set with a system property {@code jwarp.soft.<name>} (durations in
 * milliseconds) read by {@link #fromSystemProperties()}.
 *
 * @param initiatorTimeout  longest wait for the MPA Reply after the Request was sent
 * @param responderTimeout  longest wait for a complete MPA Request after TCP accept, and for the
 *                          RTR after the Reply was sent (RFC 6581 §5)
 * @param decisionTimeout   longest time an accepted-but-undecided request may wait for
 *                          {@code accept}/{@code reject}; it is then rejected
 * @param maxFpdu           largest FPDU this side sends (bytes, incl. MPA header, pad and CRC)
 * @param txBufferSize      transmit staging buffer per connection (receive buffers are per
 *                          reactor thread: the decoders keep what they need)
 * @param reactors          event-loop threads per provider (connections are spread round-robin)
 */
public record SoftConfig(Duration initiatorTimeout, Duration responderTimeout, Duration decisionTimeout,
                         int maxFpdu, int txBufferSize, int reactors) {

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
    }

    public static SoftConfig defaults() {
        return new SoftConfig(Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(10),
                16384, 65536, 1);
    }

    /** Defaults, overridden by {@code jwarp.soft.*} system properties. */
    public static SoftConfig fromSystemProperties() {
        SoftConfig d = defaults();
        return new SoftConfig(
                millis("initiatorTimeoutMs", d.initiatorTimeout),
                millis("responderTimeoutMs", d.responderTimeout),
                millis("decisionTimeoutMs", d.decisionTimeout),
                Integer.getInteger("jwarp.soft.maxFpdu", d.maxFpdu),
                Integer.getInteger("jwarp.soft.txBufferSize", d.txBufferSize),
                Integer.getInteger("jwarp.soft.reactors", d.reactors));
    }

    private static Duration millis(String name, Duration dflt) {
        Long v = Long.getLong("jwarp.soft." + name);
        return v == null ? dflt : Duration.ofMillis(v);
    }

    public SoftConfig withTimeouts(Duration initiator, Duration responder, Duration decision) {
        return new SoftConfig(initiator, responder, decision, maxFpdu, txBufferSize, reactors);
    }

    public SoftConfig withBuffers(int fpdu, int tx) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, fpdu, tx, reactors);
    }

    public SoftConfig withReactors(int n) {
        return new SoftConfig(initiatorTimeout, responderTimeout, decisionTimeout, maxFpdu, txBufferSize, n);
    }
}
