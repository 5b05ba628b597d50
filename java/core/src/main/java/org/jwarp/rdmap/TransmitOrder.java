package org.jwarp.rdmap;

import java.nio.ByteBuffer;

import org.jwarp.mpa.FpduSink;

/**
 * The order in which one {@link RdmapEndpoint} puts messages on the wire (RFC 5040 §5, on DDP
 * segments of RFC 5041 §5.2 in RFC 5044 §4 FPDUs): in state TERMINATE only the Terminate (RFC 5040
 * §7, the last message); in RTS, Read Responses ({@link ReadResponder}) between messages of the
 * send ring ({@link SendTransmitter}), never inside a Send or Write already begun: the peer's DDP
 * counts a tagged message's bytes until its Last flag, RFC 5041 §5.2, and siw keeps one tagged
 * receive context. Stateless; the endpoint's thread only.
 */
final class TransmitOrder {
    private TransmitOrder() {
    }

    /** Whole FPDUs into {@code dst} while they fit and work is pending; payloads referenced through {@code sink} if not null. */
    static int transmit(RdmapEndpoint ep, ByteBuffer dst, FpduSink sink) {
        int start = dst.position();
        while (true) {
            if (ep.state() == RdmapEndpoint.State.TERMINATE) {
                if (ep.term.emit(dst)) {
                    ep.enter(RdmapEndpoint.State.ERROR);
                }
                break;
            }
            if (ep.state() != RdmapEndpoint.State.RTS) {
                break;
            }
            if (ep.irq.pending() > 0 && !ep.out.begun()) {
                if (!ep.irq.emit(dst, sink)) {
                    break;
                }
                continue;
            }
            if (!ep.out.emit(dst, sink)) {
                break;
            }
        }
        return dst.position() - start;
    }

    /** True when {@link #transmit} has something to write. */
    static boolean pending(RdmapEndpoint ep) {
        if (ep.state() == RdmapEndpoint.State.TERMINATE) {
            return true;
        }
        if (ep.state() != RdmapEndpoint.State.RTS) {
            return false;
        }
        return (ep.irq.pending() > 0 && !ep.out.begun()) || ep.out.hasPending();
    }
}
