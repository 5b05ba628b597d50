package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.FieldChecks;
import org.jwarp.mpa.MpaFrameLimits;

/**
 * How the responder answers an MPA Request, RFC 6581 §9.1 (IRD/ORD), §9.2 (RTR types), §10
 * (enhanced or not) and RFC 5044 §7.1.1 (C, M). Immutable; {@link Builder#build()} validates.
 *
 * <p>{@code maxIrd} caps the IRD granted (the responder grants the initiator's ORD up to it,
 * raised to 1 for a Read RTR). {@code ord} is the ORD wanted, lowered to the initiator's IRD;
 * {@code requiredOrd} is the least ORD the ULP can live with: below it the request is rejected
 * with the required ORD in the Reject frame and TERM code 6. {@code 0x3FFF} means no automatic
 * negotiation. {@code requireP2p} refuses client-server requests (as irdma does).
 */
public final class ResponderConfig {

    /**
     * What a responder without RFC 6581 support ({@code enhanced(false)}) does with a Rev 2
     * request. RFC 6581 §10 says it closes the TCP connection; {@link #CLOSE} is the default.
     */
    public enum UnenhancedPolicy {
        /**
         * Not RFC 6581 §10 behaviour, kept to model a lax RFC 5044 peer: reply with Rev 1, taking the
         * enhanced data for ULP private data. An enhanced initiator fails such a connect.
         */
        REPLY_REV1,
        /** Close without replying, RFC 6581 §10 (default); the initiator may retry with Rev 1. */
        CLOSE
    }

    private final int maxIrd;
    private final int ord;
    private final int requiredOrd;
    private final Set<RtrType> rtrTypes;
    private final boolean enhanced;
    private final UnenhancedPolicy unenhancedPolicy;
    private final boolean requireP2p;
    private final boolean acceptP2p;
    private final boolean crc;
    private final boolean markers;
    private final byte[] ulpPrivateData;
    private final MpaFrameLimits limits;

    private ResponderConfig(Builder b) {
        maxIrd = b.maxIrd;
        ord = b.ord;
        requiredOrd = b.requiredOrd;
        rtrTypes = Set.copyOf(b.rtrTypes);
        enhanced = b.enhanced;
        unenhancedPolicy = b.unenhancedPolicy;
        requireP2p = b.requireP2p;
        acceptP2p = b.acceptP2p;
        crc = b.crc;
        markers = b.markers;
        ulpPrivateData = b.ulpPrivateData.clone();
        limits = b.limits;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxIrd = maxIrd;
        b.ord = ord;
        b.requiredOrd = requiredOrd;
        b.rtrTypes = EnumSet.copyOf(rtrTypes);
        b.enhanced = enhanced;
        b.unenhancedPolicy = unenhancedPolicy;
        b.requireP2p = requireP2p;
        b.acceptP2p = acceptP2p;
        b.crc = crc;
        b.markers = markers;
        b.ulpPrivateData = ulpPrivateData.clone();
        b.limits = limits;
        return b;
    }

    public int maxIrd() {
        return maxIrd;
    }

    public int ord() {
        return ord;
    }

    public int requiredOrd() {
        return requiredOrd;
    }

    /** RTR types this responder accepts; at least one (RFC 6581 §9.2). */
    public Set<RtrType> rtrTypes() {
        return rtrTypes;
    }

    /** Supports RFC 6581 (Rev 2, S, enhanced data). */
    public boolean enhanced() {
        return enhanced;
    }

    public UnenhancedPolicy unenhancedPolicy() {
        return unenhancedPolicy;
    }

    public boolean requireP2p() {
        return requireP2p;
    }

    /**
     * Whether a peer-to-peer Request (A=1) may be accepted. The Reply must echo A (RFC 6581 §9.2),
     * so a responder that serves the client-server model only rejects such a Request.
     */
    public boolean acceptP2p() {
        return acceptP2p;
    }

    public boolean crc() {
        return crc;
    }

    public boolean markers() {
        return markers;
    }

    public byte[] ulpPrivateData() {
        return ulpPrivateData.clone();
    }

    public MpaFrameLimits limits() {
        return limits;
    }

    @Override
    public String toString() {
        return "ResponderConfig{maxIrd=" + maxIrd + ", ord=" + ord + ", requiredOrd=" + requiredOrd + ", rtr="
                + RtrType.format(rtrTypes) + ", enhanced=" + enhanced + ", unenhanced=" + unenhancedPolicy
                + ", requireP2p=" + requireP2p + ", acceptP2p=" + acceptP2p + ", crc=" + crc + ", markers=" + markers + ", pd="
                + ulpPrivateData.length + "B, limits=" + limits + "}";
    }

    /** Validating builder (RFC 6581 §9.1, §9.2, RFC 5044 §7.1.1). Defaults: maxIrd 16, ORD 16, no required ORD, Write+Read RTR, enhanced, CRC. */
    public static final class Builder {
        private int maxIrd = 16;
        private int ord = 16;
        private int requiredOrd;
        private Set<RtrType> rtrTypes = EnumSet.of(RtrType.WRITE, RtrType.READ);
        private boolean enhanced = true;
        private UnenhancedPolicy unenhancedPolicy = UnenhancedPolicy.CLOSE;
        private boolean requireP2p;
        private boolean acceptP2p = true;
        private boolean crc = true;
        private boolean markers;
        private byte[] ulpPrivateData = new byte[0];
        private MpaFrameLimits limits = MpaFrameLimits.RFC;

        private Builder() {
        }

        public Builder maxIrd(int v) {
            maxIrd = FieldChecks.irdOrd("maxIrd", v);
            return this;
        }

        public Builder ord(int v) {
            ord = FieldChecks.irdOrd("ord", v);
            return this;
        }

        public Builder requiredOrd(int v) {
            requiredOrd = FieldChecks.irdOrd("requiredOrd", v);
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

        public Builder unenhancedPolicy(UnenhancedPolicy v) {
            unenhancedPolicy = Objects.requireNonNull(v, "unenhancedPolicy");
            return this;
        }

        public Builder requireP2p(boolean v) {
            requireP2p = v;
            return this;
        }

        /** False: a peer-to-peer Request is rejected (the client-server model only, RFC 6581 §9.2). */
        public Builder acceptP2p(boolean v) {
            acceptP2p = v;
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

        /** @throws IllegalArgumentException naming the field and RFC section */
        public ResponderConfig build() {
            if (rtrTypes.isEmpty()) {
                throw new IllegalArgumentException("rtr: a responder offers at least one RTR type (RFC 6581 §9.2)");
            }
            if (maxIrd == 0 && rtrTypes.equals(EnumSet.of(RtrType.READ))) {
                throw new IllegalArgumentException("rtr: a Read RTR needs an IRD of at least 1, but maxIrd is 0 (RFC 6581 §9.2)");
            }
            if (ord != EnhancedConnectionData.NO_NEGOTIATION && requiredOrd > ord) {
                throw new IllegalArgumentException("requiredOrd: " + requiredOrd + " is above ord " + ord + " (RFC 6581 §9.1)");
            }
            if (requireP2p && !acceptP2p) {
                throw new IllegalArgumentException("acceptP2p: a responder that requires peer-to-peer must accept it "
                        + "(RFC 6581 §9.2)");
            }
            FieldChecks.ulpPrivateData("privateData", ulpPrivateData.length, limits, enhanced);
            return new ResponderConfig(this);
        }
    }
}
