package org.jwarp.mpa;

import org.jwarp.ground.DecodeException;
import java.util.Collection;

/**
 * The checks that every builder of connection-setup values applies to what a local caller asks
 * for, each rule in one place: the 14-bit IRD/ORD range of RFC 6581 §9.1, the MPA private-data
 * limit of RFC 5044 §7.1.1 (less the RFC 6581 §9 enhanced data), and the RTR type that the
 * peer-to-peer model of RFC 6581 §9.2 needs. Used by {@link MpaFrame.Builder} and by
 * {@link SetupValues}, which {@code negotiation.InitiatorConfig}, {@code negotiation.ResponderConfig}
 * and {@code verbs.ConnectionParameters} keep their shared values in.
 *
 * <p>Each check throws an {@link IllegalArgumentException} whose message is
 * {@code "<field>: <detail> (<RFC section>)"}; received input is checked by the decoders, which
 * throw {@link DecodeException} subtypes instead.
 */
public final class FieldChecks {

    private FieldChecks() {
    }

    /**
     * RFC 6581 §9.1: IRD and ORD are 14-bit fields, 0..{@value EnhancedConnectionData#IRD_ORD_MASK}
     * (the maximum, 0x3FFF, meaning no automatic negotiation).
     *
     * @return {@code v}
     * @throws IllegalArgumentException naming {@code field} when {@code v} is outside the range
     */
    public static int irdOrd(String field, int v) {
        if (v < 0 || v > EnhancedConnectionData.IRD_ORD_MASK) {
            throw new IllegalArgumentException(field + ": " + v + " is outside the 14-bit range 0..16383 (RFC 6581 §9.1)");
        }
        return v;
    }

    /**
     * RFC 5044 §7.1.1: the ULP private data to send fits {@code limits}, after the 4 bytes of
     * RFC 6581 §9 enhanced data when {@code enhanced} ({@link MpaFrameLimits#ulpCapacity(boolean)}).
     *
     * @throws IllegalArgumentException naming {@code field} and the limit when {@code length} exceeds it
     */
    public static void ulpPrivateData(String field, int length, MpaFrameLimits limits, boolean enhanced) {
        int cap = limits.ulpCapacity(enhanced);
        if (length > cap) {
            throw new IllegalArgumentException(field + ": " + length + " bytes of ULP private data exceed the limit of "
                    + cap + " (RFC 5044 §7.1.1" + (enhanced ? ", 4 bytes taken by RFC 6581 §9 enhanced data" : "") + ")");
        }
    }

    /**
     * RFC 6581 §9.2: the peer-to-peer model (A=1) offers at least one RTR type.
     *
     * @throws IllegalArgumentException naming {@code field} when {@code peerToPeer} and no type is offered
     */
    public static void rtrTypeForPeerToPeer(String field, boolean peerToPeer, Collection<?> rtrTypes) {
        if (peerToPeer && rtrTypes.isEmpty()) {
            throw new IllegalArgumentException(field + ": peer-to-peer mode needs at least one RTR type (RFC 6581 §9.2)");
        }
    }

    /** Private data as a builder keeps it: a copy, or empty for null. */
    public static byte[] privateDataCopy(byte[] v) {
        return v == null ? new byte[0] : v.clone();
    }
}
