package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.FieldChecks;
import org.jwarp.mpa.MpaFrameLimits;

/**
 * What the initiator offers in its MPA Request and how far it may move, RFC 6581 §9.1 (IRD/ORD),
 * §9.2 (peer-to-peer and RTR types) and §10 (enhanced or not, unenhanced retry), plus RFC 5044
 * §7.1.1 C and M. Immutable; {@link Builder#build()} validates every field.
 *
 * <p>{@code ird} is the IRD offered; the initiator raises it up to {@code maxIrd} when the
 * responder's ORD needs more, else terminates with TERM code 6. {@code ord} is the ORD wanted;
 * it is lowered to the responder's IRD. {@code 0x3FFF} for either means no automatic negotiation.
 */
public final class InitiatorConfig {
    private final int ird;
    private final int ord;
    private final int maxIrd;
    private final boolean peerToPeer;
    private final Set<RtrType> rtrTypes;
    private final boolean enhanced;
    private final boolean crc;
    private final boolean markers;
    private final byte[] ulpPrivateData;
    private final MpaFrameLimits limits;
    private final boolean fallbackToUnenhanced;

    private InitiatorConfig(Builder b) {
        ird = b.ird;
        ord = b.ord;
        maxIrd = b.maxIrd < 0 ? b.ird : b.maxIrd;
        peerToPeer = b.peerToPeer;
        rtrTypes = Set.copyOf(b.rtrTypes);
        enhanced = b.enhanced;
        crc = b.crc;
        markers = b.markers;
        ulpPrivateData = b.ulpPrivateData.clone();
        limits = b.limits;
        fallbackToUnenhanced = b.fallbackToUnenhanced;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.ird = ird;
        b.ord = ord;
        b.maxIrd = maxIrd;
        b.peerToPeer = peerToPeer;
        b.rtrTypes = RtrType.mutableCopy(rtrTypes);
        b.enhanced = enhanced;
        b.crc = crc;
        b.markers = markers;
        b.ulpPrivateData = ulpPrivateData.clone();
        b.limits = limits;
        b.fallbackToUnenhanced = fallbackToUnenhanced;
        return b;
    }

    /** IRD offered in the request. */
    public int ird() {
        return ird;
    }

    /** ORD wanted. */
    public int ord() {
        return ord;
    }

    /** The largest IRD this side can provide if the responder's ORD asks for more than {@link #ird()}. */
    public int maxIrd() {
        return maxIrd;
    }

    /** A: use the peer-to-peer model (send an RTR). */
    public boolean peerToPeer() {
        return peerToPeer;
    }

    /** RTR types offered (B/C/D) when {@link #peerToPeer()}. */
    public Set<RtrType> rtrTypes() {
        return rtrTypes;
    }

    /** Send Rev 2 with S=1 and enhanced data; false sends Rev 1 (RFC 5044). */
    public boolean enhanced() {
        return enhanced;
    }

    /** C: prefer CRC. */
    public boolean crc() {
        return crc;
    }

    /** M: this side implements markers and asks the peer for them. */
    public boolean markers() {
        return markers;
    }

    public byte[] ulpPrivateData() {
        return ulpPrivateData.clone();
    }

    public MpaFrameLimits limits() {
        return limits;
    }

    /**
     * RFC 6581 §10 ("MAY"): retry with Rev 1 when the peer closes an enhanced attempt without
     * replying. Off unless set: the retry gives up the IRD/ORD exchange and the RTR.
     */
    public boolean fallbackToUnenhanced() {
        return fallbackToUnenhanced;
    }

    @Override
    public String toString() {
        return "InitiatorConfig{ird=" + ird + ", ord=" + ord + ", maxIrd=" + maxIrd + ", p2p=" + peerToPeer
                + ", rtr=" + RtrType.format(rtrTypes) + ", enhanced=" + enhanced + ", crc=" + crc + ", markers=" + markers
                + ", pd=" + ulpPrivateData.length + "B, limits=" + limits + ", fallback=" + fallbackToUnenhanced + "}";
    }

    /** Validating builder (RFC 6581 §9.1, §9.2, RFC 5044 §7.1.1). Defaults: IRD 16, ORD 16, P2P with Write+Read RTR, enhanced, CRC, RFC limits. */
    public static final class Builder {
        private int ird = 16;
        private int ord = 16;
        private int maxIrd = -1;
        private boolean peerToPeer = true;
        private Set<RtrType> rtrTypes = EnumSet.of(RtrType.WRITE, RtrType.READ);
        private boolean enhanced = true;
        private boolean crc = true;
        private boolean markers;
        private byte[] ulpPrivateData = new byte[0];
        private MpaFrameLimits limits = MpaFrameLimits.RFC;
        private boolean fallbackToUnenhanced;

        private Builder() {
        }

        public Builder ird(int v) {
            ird = FieldChecks.irdOrd("ird", v);
            return this;
        }

        public Builder ord(int v) {
            ord = FieldChecks.irdOrd("ord", v);
            return this;
        }

        /** Defaults to {@link #ird(int)}. */
        public Builder maxIrd(int v) {
            maxIrd = FieldChecks.irdOrd("maxIrd", v);
            return this;
        }

        public Builder peerToPeer(boolean v) {
            peerToPeer = v;
            return this;
        }

        public Builder rtrTypes(Set<RtrType> v) {
            rtrTypes = RtrType.mutableCopy(v);
            return this;
        }

        public Builder enhanced(boolean v) {
            enhanced = v;
            return this;
        }

        public Builder crc(boolean v) {
            crc = v;
            return this;
        }

        public Builder markers(boolean v) {
            markers = v;
            return this;
        }

        public Builder ulpPrivateData(byte[] v) {
            ulpPrivateData = FieldChecks.privateDataCopy(v);
            return this;
        }

        public Builder limits(MpaFrameLimits v) {
            limits = Objects.requireNonNull(v, "limits");
            return this;
        }

        public Builder fallbackToUnenhanced(boolean v) {
            fallbackToUnenhanced = v;
            return this;
        }

        /** @throws IllegalArgumentException naming the field and RFC section */
        public InitiatorConfig build() {
            int effectiveMax = maxIrd < 0 ? ird : maxIrd;
            if (ird != EnhancedConnectionData.NO_NEGOTIATION && effectiveMax < ird) {
                throw new IllegalArgumentException("maxIrd: " + effectiveMax + " is below ird " + ird + " (RFC 6581 §9.1)");
            }
            FieldChecks.rtrTypeForPeerToPeer("rtr", peerToPeer, rtrTypes);
            FieldChecks.ulpPrivateData("privateData", ulpPrivateData.length, limits, enhanced);
            return new InitiatorConfig(this);
        }
    }
}
