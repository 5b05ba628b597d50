package org.jwarp.verbs;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a consumer asks for when it connects or accepts: the rdma_cm {@code rdma_conn_param}
 * mapping of RFC 6581 §9.1 (responder_resources = local IRD, initiator_depth = local ORD), the
 * ULP private data, retry counts, and the peer-to-peer model with its RTR types (§9.2).
 *
 * <p>Immutable. IRD and ORD are 14-bit quantities on the wire; {@value #NO_NEGOTIATION} (0x3FFF)
 * means "no automatic negotiation" (RFC 6581 §9.1). Private data is the ULP's only: the 4-byte
 * enhanced data is added by the provider, never by the consumer.
 */
public final class ConnectionParameters {
    /** RFC 6581 §9.1: the IRD/ORD value that disables automatic IRD/ORD negotiation. */
    public static final int NO_NEGOTIATION = 0x3FFF;
    /** RFC 5044 §7.1: MPA private data is at most 512 bytes. */
    public static final int MAX_PRIVATE_DATA = 512;
    /** Linux siw puts at most 256 bytes on the wire including the 4 enhanced bytes, and a u8 wraps at 252. */
    public static final int SIW_SAFE_PRIVATE_DATA = 251;

    private final int ird;
    private final int ord;
    private final byte[] privateData;
    private final int retryCount;
    private final int rnrRetryCount;
    private final boolean peerToPeer;
    private final Set<RtrType> rtrTypes;
    private final boolean crc;

    private ConnectionParameters(Builder b) {
        this.ird = b.ird;
        this.ord = b.ord;
        this.privateData = b.privateData.clone();
        this.retryCount = b.retryCount;
        this.rnrRetryCount = b.rnrRetryCount;
        this.peerToPeer = b.peerToPeer;
        this.rtrTypes = b.rtrTypes.isEmpty() ? Set.of() : Set.copyOf(b.rtrTypes);
        this.crc = b.crc;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.ird = ird;
        b.ord = ord;
        b.privateData = privateData.clone();
        b.retryCount = retryCount;
        b.rnrRetryCount = rnrRetryCount;
        b.peerToPeer = peerToPeer;
        b.rtrTypes = rtrTypes.isEmpty() ? EnumSet.noneOf(RtrType.class) : EnumSet.copyOf(rtrTypes);
        b.crc = crc;
        return b;
    }

    /** Inbound RDMA Read queue depth offered (rdma_conn_param.responder_resources). */
    public int ird() {
        return ird;
    }

    /** Outbound RDMA Read queue depth wanted (rdma_conn_param.initiator_depth). */
    public int ord() {
        return ord;
    }

    /** The ULP private data (a copy). */
    public byte[] privateData() {
        return privateData.clone();
    }

    public int privateDataLength() {
        return privateData.length;
    }

    public int retryCount() {
        return retryCount;
    }

    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /** RFC 6581 §9.2 A flag: use the peer-to-peer model with an RTR indication. */
    public boolean peerToPeer() {
        return peerToPeer;
    }

    /** RTR types offered (initiator) or acceptable (responder). */
    public Set<RtrType> rtrTypes() {
        return rtrTypes;
    }

    /** Ask for MPA CRC (RFC 5044 §7.1 C bit). */
    public boolean crc() {
        return crc;
    }

    @Override
    public String toString() {
        return "ConnectionParameters{ird=" + ird + ", ord=" + ord + ", pd=" + privateData.length + "B, p2p=" + peerToPeer
                + ", rtr=" + rtrTypes + ", crc=" + crc + ", retry=" + retryCount + "/" + rnrRetryCount + "}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionParameters c && c.ird == ird && c.ord == ord
                && Arrays.equals(c.privateData, privateData) && c.retryCount == retryCount
                && c.rnrRetryCount == rnrRetryCount && c.peerToPeer == peerToPeer && c.rtrTypes.equals(rtrTypes)
                && c.crc == crc;
    }

    @Override
    public int hashCode() {
        return ((ird * 31 + ord) * 31 + Arrays.hashCode(privateData)) * 31 + rtrTypes.hashCode() + (peerToPeer ? 1 : 0);
    }

    /** Validating builder; every setter rejects out-of-range input with the field and the RFC section. */
    public static final class Builder {
        private int ird = 16;
        private int ord = 16;
        private byte[] privateData = new byte[0];
        private int retryCount = 7;
        private int rnrRetryCount = 7;
        private boolean peerToPeer = true;
        private Set<RtrType> rtrTypes = EnumSet.of(RtrType.WRITE, RtrType.READ);
        private boolean crc = true;

        private Builder() {
        }

        public Builder ird(int v) {
            ird = check14("ird", v);
            return this;
        }

        public Builder ord(int v) {
            ord = check14("ord", v);
            return this;
        }

        public Builder privateData(byte[] data) {
            if (data == null) {
                data = new byte[0];
            }
            if (data.length > MAX_PRIVATE_DATA) {
                throw new IllegalArgumentException("privateData: " + data.length
                        + " bytes exceeds the 512-byte limit (RFC 5044 §7.1, RFC 6581 §9)");
            }
            privateData = data.clone();
            return this;
        }

        public Builder retryCount(int v) {
            retryCount = check3("retryCount", v);
            return this;
        }

        public Builder rnrRetryCount(int v) {
            rnrRetryCount = check3("rnrRetryCount", v);
            return this;
        }

        public Builder peerToPeer(boolean v) {
            peerToPeer = v;
            return this;
        }

        public Builder rtrTypes(Set<RtrType> v) {
            rtrTypes = v.isEmpty() ? EnumSet.noneOf(RtrType.class) : EnumSet.copyOf(v);
            return this;
        }

        public Builder rtrTypes(RtrType first, RtrType... more) {
            rtrTypes = EnumSet.of(first, more);
            return this;
        }

        public Builder crc(boolean v) {
            crc = v;
            return this;
        }

        public ConnectionParameters build() {
            if (peerToPeer && rtrTypes.isEmpty()) {
                throw new IllegalArgumentException("rtrTypes: peer-to-peer mode needs at least one RTR type (RFC 6581 §9.2)");
            }
            return new ConnectionParameters(this);
        }

        private static int check14(String field, int v) {
            if (v < 0 || v > NO_NEGOTIATION) {
                throw new IllegalArgumentException(field + ": " + v + " is outside the 14-bit range 0..16383 (RFC 6581 §9.1)");
            }
            return v;
        }

        private static int check3(String field, int v) {
            if (v < 0 || v > 7) {
                throw new IllegalArgumentException(field + ": " + v + " is outside 0..7 (rdma_conn_param, 3-bit field)");
            }
            return v;
        }
    }
}
