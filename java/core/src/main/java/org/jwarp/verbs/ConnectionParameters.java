package org.jwarp.verbs;

import java.util.EnumSet;
import java.util.Set;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.mpa.SetupValues;
import org.jwarp.ground.RtrType;

/**
 * What a consumer asks for when it connects or accepts: the rdma_cm {@code rdma_conn_param}
 * mapping of RFC 6581 §9.1 ({@code responder_resources} = local IRD, {@code initiator_depth} =
 * local ORD), the ULP private data, the retry counts, and the peer-to-peer model with its RTR types
 * (§9.2), plus the MPA C preference (RFC 5044 §7.1.1).
 *
 * <p>Immutable; the builder validates every field and names the RFC section when it refuses one.
 * IRD and ORD are 14-bit quantities on the wire; {@value #NO_NEGOTIATION} (0x3FFF) means "no
 * automatic negotiation" (RFC 6581 §9.1). librdmacm carries them as u8, so
 * {@link #responderResources()} and {@link #initiatorDepth()} clamp to {@value #RDMA_CM_MAX_DEPTH}
 * (RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH: "the device maximum"). Private data is the ULP's only:
 * the provider prepends the 4-byte enhanced data itself, never the consumer. Linux siw keeps user
 * private data at {@value #SIW_SAFE_PRIVATE_DATA} bytes or fewer.
 */
public final class ConnectionParameters {
    /** RFC 6581 §9.1: the IRD/ORD value that disables automatic IRD/ORD negotiation. */
    public static final int NO_NEGOTIATION = EnhancedConnectionData.NO_NEGOTIATION;
    /** RFC 5044 §7.1.1: MPA private data is at most 512 bytes (508 after the RFC 6581 §9 header). */
    public static final int MAX_PRIVATE_DATA = MpaFrameLimits.RFC_MAX_PRIVATE_DATA;
    /** Linux siw puts at most 256 bytes on the wire including the 4 enhanced bytes, and a u8 wraps at 252. */
    public static final int SIW_SAFE_PRIVATE_DATA = 251;
    /** librdmacm's u8 responder_resources / initiator_depth maximum (0xFF = device maximum). */
    public static final int RDMA_CM_MAX_DEPTH = 0xFF;
    /** The 3-bit retry count fields of rdma_conn_param. */
    public static final int MAX_RETRY_COUNT = 7;
    /**
     * RFC 6581 §9.1: the IRD offered and the ORD wanted unless set: 128, what Linux siw offers
     * (SIW_MAX_IRD_QP / SIW_MAX_ORD_QP) and the soft provider's ceiling; device providers lower it
     * to the device's {@code max_qp_rd_atom} / {@code max_qp_init_rd_atom}. Negotiation then settles
     * each side's values as always (an ORD at most the peer's IRD).
     */
    public static final int DEFAULT_IRD_ORD = 128;
    /** The builder's starting values: the setup defaults with {@link #DEFAULT_IRD_ORD}. */
    private static final SetupValues DEFAULT_VALUES = SetupValues.DEFAULTS.withIrd("ird", DEFAULT_IRD_ORD)
            .withOrd("ord", DEFAULT_IRD_ORD);

    /** IRD, ORD, private data, A, RTR types and C; M and the limits keep their defaults here. */
    private final SetupValues values;
    private final int retryCount;
    private final int rnrRetryCount;

    private ConnectionParameters(Builder b) {
        this.values = b.values;
        this.retryCount = b.retryCount;
        this.rnrRetryCount = b.rnrRetryCount;
    }

    /** {@return a builder with the defaults listed on {@link Builder}} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return a builder holding these parameters, to derive changed ones from} */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.values = values;
        b.retryCount = retryCount;
        b.rnrRetryCount = rnrRetryCount;
        return b;
    }

    /**
     * {@return the inbound RDMA Read queue depth offered (RFC 6581 §9.1 IRD)} 0..0x3FFF; the
     * number of the peer's Read Requests this side serves at once.
     */
    public int ird() {
        return values.ird();
    }

    /**
     * {@return the outbound RDMA Read queue depth wanted (RFC 6581 §9.1 ORD)} 0..0x3FFF; the number
     * of this side's Reads in flight at once.
     */
    public int ord() {
        return values.ord();
    }

    /** {@return rdma_conn_param.responder_resources: the IRD as librdmacm's u8 (0xFF for larger or 0x3FFF)} */
    public int responderResources() {
        return Math.min(values.ird(), RDMA_CM_MAX_DEPTH);
    }

    /** {@return rdma_conn_param.initiator_depth: the ORD as librdmacm's u8 (0xFF for larger or 0x3FFF)} */
    public int initiatorDepth() {
        return Math.min(values.ord(), RDMA_CM_MAX_DEPTH);
    }

    /** {@return a copy of the ULP private data (0..{@value #MAX_PRIVATE_DATA} bytes, empty when none)} */
    public byte[] privateData() {
        return values.ulpPrivateData();
    }

    /** {@return the length of the ULP private data in bytes, without copying it} */
    public int privateDataLength() {
        return values.ulpPrivateDataLength();
    }

    /** {@return rdma_conn_param.retry_count (0..7)} */
    public int retryCount() {
        return retryCount;
    }

    /** {@return rdma_conn_param.rnr_retry_count (0..7, 7 = infinite)} */
    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /** {@return the RFC 6581 §9.2 P flag: use the peer-to-peer model with an RTR indication} */
    public boolean peerToPeer() {
        return values.peerToPeer();
    }

    /** {@return the RTR types offered (initiator) or acceptable (responder), RFC 6581 §9.2; unmodifiable} */
    public Set<RtrType> rtrTypes() {
        return values.rtrTypes();
    }

    /** {@return whether MPA CRCs are asked for (RFC 5044 §7.1.1 C bit)} */
    public boolean crc() {
        return values.crc();
    }

    @Override
    public String toString() {
        return "ConnectionParameters{ird=" + ird() + ", ord=" + ord() + ", pd=" + privateDataLength() + "B, p2p="
                + peerToPeer() + ", rtr=" + RtrType.format(rtrTypes()) + ", crc=" + crc() + ", retry=" + retryCount + "/"
                + rnrRetryCount + "}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionParameters c && c.values.equals(values) && c.retryCount == retryCount
                && c.rnrRetryCount == rnrRetryCount;
    }

    @Override
    public int hashCode() {
        return values.hashCode() * 64 + retryCount * 8 + rnrRetryCount;
    }

    /**
     * Validating builder (RFC 6581 §9.1, §9.2; RFC 5044 §7.1.1); every setter rejects out-of-range
     * input with the field and the RFC section. Defaults: IRD and ORD {@value ConnectionParameters#DEFAULT_IRD_ORD}, no
     * private data, retry counts 7, peer-to-peer with Write and Read RTR (what Linux siw accepts), CRC on.
     */
    public static final class Builder {
        private SetupValues values = DEFAULT_VALUES;
        private int retryCount = MAX_RETRY_COUNT;
        private int rnrRetryCount = MAX_RETRY_COUNT;

        private Builder() {
        }

        /**
         * Sets the IRD offered (RFC 6581 §9.1).
         *
         * @param v 0..0x3FFF; {@value ConnectionParameters#NO_NEGOTIATION} turns automatic
         *          negotiation off
         * @return this builder
         * @throws IllegalArgumentException when {@code v} is outside 0..0x3FFF
         */
        public Builder ird(int v) {
            values = values.withIrd("ird", v);
            return this;
        }

        /**
         * Sets the ORD wanted (RFC 6581 §9.1).
         *
         * @param v 0..0x3FFF; {@value ConnectionParameters#NO_NEGOTIATION} turns automatic
         *          negotiation off
         * @return this builder
         * @throws IllegalArgumentException when {@code v} is outside 0..0x3FFF
         */
        public Builder ord(int v) {
            values = values.withOrd("ord", v);
            return this;
        }

        /**
         * rdma_cm name for {@link #ird(int)}.
         *
         * @param v as for {@link #ird(int)}
         * @return this builder
         */
        public Builder responderResources(int v) {
            return ird(v);
        }

        /**
         * rdma_cm name for {@link #ord(int)}.
         *
         * @param v as for {@link #ord(int)}
         * @return this builder
         */
        public Builder initiatorDepth(int v) {
            return ord(v);
        }

        /**
         * Sets the ULP private data sent in the MPA Request or Reply (a copy is kept). At most
         * {@value ConnectionParameters#MAX_PRIVATE_DATA} bytes here; the transport may allow fewer
         * (Linux siw: {@value ConnectionParameters#SIW_SAFE_PRIVATE_DATA}), checked at connect.
         *
         * @param data the bytes; null or empty for none
         * @return this builder
         * @throws IllegalArgumentException when {@code data} is longer than RFC 5044 §7.1.1 allows
         */
        public Builder privateData(byte[] data) {
            SetupValues v = values.withUlpPrivateData(data);
            // The transport's own (possibly smaller) limit applies in toInitiatorConfig/toResponderConfig.
            v.checkPrivateData("privateData", false);
            values = v;
            return this;
        }

        /**
         * Sets rdma_conn_param.retry_count (used by devices that retransmit; TCP retransmits on iWARP).
         *
         * @param v 0..{@value ConnectionParameters#MAX_RETRY_COUNT}
         * @return this builder
         * @throws IllegalArgumentException when {@code v} is outside 0..7
         */
        public Builder retryCount(int v) {
            retryCount = check3("retryCount", v);
            return this;
        }

        /**
         * Sets rdma_conn_param.rnr_retry_count (receiver-not-ready retries, RoCE/InfiniBand).
         *
         * @param v 0..{@value ConnectionParameters#MAX_RETRY_COUNT}, 7 = retry for ever
         * @return this builder
         * @throws IllegalArgumentException when {@code v} is outside 0..7
         */
        public Builder rnrRetryCount(int v) {
            rnrRetryCount = check3("rnrRetryCount", v);
            return this;
        }

        /**
         * Chooses the peer-to-peer model (RFC 6581 §9.2): the initiator sends an RTR after the
         * Reply and the responder sends nothing before it. Linux siw requires it.
         *
         * @param v true for peer-to-peer (the default), false for client-server
         * @return this builder
         */
        public Builder peerToPeer(boolean v) {
            values = values.withPeerToPeer(v);
            return this;
        }

        /**
         * Sets the RTR types offered (initiator) or accepted (responder), RFC 6581 §9.2.
         *
         * @param v the types (copied); must not be empty in the peer-to-peer model ({@link #build()} checks)
         * @return this builder
         */
        public Builder rtrTypes(Set<RtrType> v) {
            values = values.withRtrTypes(v);
            return this;
        }

        /**
         * Sets the RTR types offered (initiator) or accepted (responder), RFC 6581 §9.2.
         *
         * @param first one type
         * @param more  further types
         * @return this builder
         */
        public Builder rtrTypes(RtrType first, RtrType... more) {
            values = values.withRtrTypes(EnumSet.of(first, more));
            return this;
        }

        /**
         * Asks for MPA CRCs (RFC 5044 §7.1.1 C bit); CRCs are used when either side asks.
         *
         * @param v true to ask for CRCs (the default)
         * @return this builder
         */
        public Builder crc(boolean v) {
            values = values.withCrc(v);
            return this;
        }

        /**
         * Checks the combination (peer-to-peer needs an RTR type) and builds.
         *
         * @return the immutable parameters
         * @throws IllegalArgumentException naming the field and RFC section
         */
        public ConnectionParameters build() {
            values.checkRtrForPeerToPeer("rtrTypes");
            return new ConnectionParameters(this);
        }

        private static int check3(String field, int v) {
            if (v < 0 || v > MAX_RETRY_COUNT) {
                throw new IllegalArgumentException(field + ": " + v + " is outside 0..7 (rdma_conn_param, 3-bit field)");
            }
            return v;
        }
    }
}
