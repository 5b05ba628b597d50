package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.FieldChecks;

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
public final class ResponderConfig extends SetupConfig {

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

    private final int requiredOrd;
    private final boolean enhanced;
    private final UnenhancedPolicy unenhancedPolicy;
    private final boolean requireP2p;
    private final boolean acceptP2p;

    private ResponderConfig(Builder b) {
        super(b.values);
        requiredOrd = b.requiredOrd;
        enhanced = b.enhanced;
        unenhancedPolicy = b.unenhancedPolicy;
        requireP2p = b.requireP2p;
        acceptP2p = b.acceptP2p;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.values = values;
        b.requiredOrd = requiredOrd;
        b.enhanced = enhanced;
        b.unenhancedPolicy = unenhancedPolicy;
        b.requireP2p = requireP2p;
        b.acceptP2p = acceptP2p;
        return b;
    }

    public int maxIrd() {
        return values.ird();
    }

    public int requiredOrd() {
        return requiredOrd;
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

    @Override
    public String toString() {
        return "ResponderConfig{maxIrd=" + maxIrd() + ", ord=" + ord() + ", requiredOrd=" + requiredOrd + ", rtr="
                + RtrType.format(rtrTypes()) + ", enhanced=" + enhanced + ", unenhanced=" + unenhancedPolicy
                + ", requireP2p=" + requireP2p + ", acceptP2p=" + acceptP2p + ", crc=" + crc() + ", markers=" + markers()
                + ", pd=" + values.ulpPrivateDataLength() + "B, limits=" + limits() + "}";
    }

    /**
     * Validating builder (RFC 6581 §9.1, §9.2, RFC 5044 §7.1.1). Defaults: maxIrd 16, ORD 16, no
     * required ORD, Write+Read RTR, enhanced, CRC. The A bit of its values is unused: the
     * initiator chooses the model, {@link #requireP2p(boolean)} and {@link #acceptP2p(boolean)} answer it.
     */
    public static final class Builder extends SetupBuilder<Builder> {
        private int requiredOrd;
        private boolean enhanced = true;
        private UnenhancedPolicy unenhancedPolicy = UnenhancedPolicy.CLOSE;
        private boolean requireP2p;
        private boolean acceptP2p = true;

        private Builder() {
        }

        @Override
        Builder self() {
            return this;
        }

        public Builder maxIrd(int v) {
            values = values.withIrd("maxIrd", v);
            return this;
        }

        public Builder requiredOrd(int v) {
            requiredOrd = FieldChecks.irdOrd("requiredOrd", v);
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

        /** @throws IllegalArgumentException naming the field and RFC section */
        public ResponderConfig build() {
            Set<RtrType> rtrTypes = values.rtrTypes();
            if (rtrTypes.isEmpty()) {
                throw new IllegalArgumentException("rtr: a responder offers at least one RTR type (RFC 6581 §9.2)");
            }
            if (values.ird() == 0 && rtrTypes.equals(EnumSet.of(RtrType.READ))) {
                throw new IllegalArgumentException("rtr: a Read RTR needs an IRD of at least 1, but maxIrd is 0 (RFC 6581 §9.2)");
            }
            int ord = values.ord();
            if (ord != EnhancedConnectionData.NO_NEGOTIATION && requiredOrd > ord) {
                throw new IllegalArgumentException("requiredOrd: " + requiredOrd + " is above ord " + ord + " (RFC 6581 §9.1)");
            }
            if (requireP2p && !acceptP2p) {
                throw new IllegalArgumentException("acceptP2p: a responder that requires peer-to-peer must accept it "
                        + "(RFC 6581 §9.2)");
            }
            values.checkPrivateData("privateData", enhanced);
            return new ResponderConfig(this);
        }
    }
}
