package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.FieldChecks;

/**
 * What the initiator offers in its MPA Request and how far it may move, RFC 6581 §9.1 (IRD/ORD),
 * §9.2 (peer-to-peer and RTR types) and §10 (enhanced or not, unenhanced retry), plus RFC 5044
 * §7.1.1 C and M. Immutable; {@link Builder#build()} validates every field.
 *
 * <p>{@code ird} is the IRD offered; the initiator raises it up to {@code maxIrd} when the
 * responder's ORD needs more, else terminates with TERM code 6. {@code ord} is the ORD wanted;
 * it is lowered to the responder's IRD. {@code 0x3FFF} for either means no automatic negotiation.
 */
public final class InitiatorConfig extends SetupConfig {
    private final int maxIrd;
    private final boolean enhanced;
    private final boolean fallbackToUnenhanced;

    private InitiatorConfig(Builder b) {
        super(b.values);
        maxIrd = b.maxIrd < 0 ? b.values.ird() : b.maxIrd;
        enhanced = b.enhanced;
        fallbackToUnenhanced = b.fallbackToUnenhanced;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.values = values;
        b.maxIrd = maxIrd;
        b.enhanced = enhanced;
        b.fallbackToUnenhanced = fallbackToUnenhanced;
        return b;
    }

    /** IRD offered in the request. */
    public int ird() {
        return values.ird();
    }

    /** The largest IRD this side can provide if the responder's ORD asks for more than {@link #ird()}. */
    public int maxIrd() {
        return maxIrd;
    }

    /** A: use the peer-to-peer model (send an RTR). */
    public boolean peerToPeer() {
        return values.peerToPeer();
    }

    /** Send Rev 2 with S=1 and enhanced data; false sends Rev 1 (RFC 5044). */
    public boolean enhanced() {
        return enhanced;
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
        return "InitiatorConfig{ird=" + ird() + ", ord=" + ord() + ", maxIrd=" + maxIrd + ", p2p=" + peerToPeer()
                + ", rtr=" + RtrType.format(rtrTypes()) + ", enhanced=" + enhanced + ", crc=" + crc() + ", markers="
                + markers() + ", pd=" + values.ulpPrivateDataLength() + "B, limits=" + limits() + ", fallback="
                + fallbackToUnenhanced + "}";
    }

    /** Validating builder (RFC 6581 §9.1, §9.2, RFC 5044 §7.1.1). Defaults: IRD 16, ORD 16, P2P with Write+Read RTR, enhanced, CRC, RFC limits. */
    public static final class Builder extends SetupBuilder<Builder> {
        private int maxIrd = -1;
        private boolean enhanced = true;
        private boolean fallbackToUnenhanced;

        private Builder() {
        }

        @Override
        Builder self() {
            return this;
        }

        public Builder ird(int v) {
            values = values.withIrd("ird", v);
            return this;
        }

        /** Defaults to {@link #ird(int)}. */
        public Builder maxIrd(int v) {
            maxIrd = FieldChecks.irdOrd("maxIrd", v);
            return this;
        }

        public Builder peerToPeer(boolean v) {
            values = values.withPeerToPeer(v);
            return this;
        }

        public Builder enhanced(boolean v) {
            enhanced = v;
            return this;
        }

        public Builder fallbackToUnenhanced(boolean v) {
            fallbackToUnenhanced = v;
            return this;
        }

        /** @throws IllegalArgumentException naming the field and RFC section */
        public InitiatorConfig build() {
            int ird = values.ird();
            int effectiveMax = maxIrd < 0 ? ird : maxIrd;
            if (ird != EnhancedConnectionData.NO_NEGOTIATION && effectiveMax < ird) {
                throw new IllegalArgumentException("maxIrd: " + effectiveMax + " is below ird " + ird + " (RFC 6581 §9.1)");
            }
            values.checkRtrForPeerToPeer("rtr");
            values.checkPrivateData("privateData", enhanced);
            return new InitiatorConfig(this);
        }
    }
}
