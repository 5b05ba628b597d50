package org.jwarp.mpa;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * An MPA Request or Reply frame as a value, RFC 5044 §7.1.1 with the enhanced connection
 * establishment of RFC 6581 §6 and §9: key, M/C/R/S, Rev, and the private data split into the
 * optional 4-byte {@link EnhancedConnectionData} and the ULP's private data.
 *
 * <p>Frames are built for sending with {@link #request()} / {@link #reply()}, whose
 * {@link Builder#build()} enforces the sending rules (R is zero in a Request, Res is zero, S only
 * with Rev 2, B/C/D zero when A is zero, private-data limits), and are parsed with
 * {@link #decode(ByteBuffer, int, int, MpaFrameLimits)} or an {@link MpaFrameReader}, which check
 * the receiving rules and throw {@link MpaDecodeException} for anything else. Connection setup is
 * a cold path; this value type allocates, the {@link MpaRequestReplyFlyweight} does not.
 */
public final class MpaFrame {

    /** Which key the frame carries, RFC 5044 §7.1.1. */
    public enum Kind {
        /** "MPA ID Req Frame", sent by the initiator. */
        REQUEST,
        /** "MPA ID Rep Frame", sent by the responder. */
        REPLY;

        /** "request" or "reply", as the CLI prints it. */
        public String jsonName() {
            return this == REQUEST ? "request" : "reply";
        }
    }

    static final String SEC_FRAME = "RFC 5044 §7.1.1";
    static final String SEC_STARTUP = "RFC 5044 §7.1.2";
    static final String SEC_ENHANCED = "RFC 6581 §9";

    private final Kind kind;
    private final boolean marker;
    private final boolean crc;
    private final boolean reject;
    private final int revision;
    private final EnhancedConnectionData enhancedData;
    private final byte[] ulpPrivateData;

    private MpaFrame(Kind kind, boolean marker, boolean crc, boolean reject, int revision,
                     EnhancedConnectionData enhancedData, byte[] ulpPrivateData) {
        this.kind = kind;
        this.marker = marker;
        this.crc = crc;
        this.reject = reject;
        this.revision = revision;
        this.enhancedData = enhancedData;
        this.ulpPrivateData = ulpPrivateData;
    }

    /** A builder for an MPA Request (initiator to responder). */
    public static Builder request() {
        return new Builder(Kind.REQUEST);
    }

    /** A builder for an MPA Reply (responder to initiator). */
    public static Builder reply() {
        return new Builder(Kind.REPLY);
    }

    public Kind kind() {
        return kind;
    }

    public boolean isRequest() {
        return kind == Kind.REQUEST;
    }

    public boolean isReply() {
        return kind == Kind.REPLY;
    }

    /** M: the sender requires markers in the FPDUs sent to it. */
    public boolean marker() {
        return marker;
    }

    /** C: the sender prefers CRC; CRC is used when either frame sets it (RFC 5044 §7.1.1). */
    public boolean crc() {
        return crc;
    }

    /** R: in a Reply, the connection is rejected. Always false for a received Request (ignored). */
    public boolean reject() {
        return reject;
    }

    /** Rev, 0..255 as carried. */
    public int revision() {
        return revision;
    }

    /** S=1 with Rev 2: {@link #enhancedData()} is present. */
    public boolean enhanced() {
        return enhancedData != null;
    }

    /** The RFC 6581 §9 data, or null when the frame is not enhanced. */
    public EnhancedConnectionData enhancedData() {
        return enhancedData;
    }

    /** The ULP's private data (a copy), after any enhanced data. */
    public byte[] ulpPrivateData() {
        return ulpPrivateData.clone();
    }

    public int ulpPrivateDataLength() {
        return ulpPrivateData.length;
    }

    /** PD_Length on the wire: enhanced data plus ULP private data. */
    public int privateDataLength() {
        return (enhancedData != null ? EnhancedConnectionData.LENGTH : 0) + ulpPrivateData.length;
    }

    /** Bytes on the wire. */
    public int encodedLength() {
        return MpaRequestReplyFlyweight.HEADER_LENGTH + privateDataLength();
    }

    /**
     * Writes the frame at absolute {@code offset} of {@code dst} (position untouched).
     *
     * @throws IndexOutOfBoundsException if it does not fit
     */
    public void encodeTo(ByteBuffer dst, int offset) {
        Objects.checkFromIndexSize(offset, encodedLength(), dst.limit());
        MpaRequestReplyFlyweight fw = new MpaRequestReplyFlyweight().wrap(dst, offset);
        fw.putKey(kind == Kind.REPLY)
                .putFlags(marker, crc, reject, enhancedData != null)
                .putRevision(revision)
                .putPrivateDataLength(privateDataLength());
        int p = fw.privateDataOffset();
        if (enhancedData != null) {
            enhancedData.put(dst, p);
            p += EnhancedConnectionData.LENGTH;
        }
        for (byte b : ulpPrivateData) {
            dst.put(p++, b);
        }
    }

    /** A new direct buffer holding the frame, position 0, limit = length. */
    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocateDirect(encodedLength());
        encodeTo(b, 0);
        return b;
    }

    /** The frame's bytes. */
    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(encodedLength());
        encodeTo(b, 0);
        return b.array();
    }

    /** Decodes a complete frame of exactly {@code bytes.length} bytes. */
    public static MpaFrame decode(byte[] bytes, MpaFrameLimits limits) throws MpaDecodeException {
        return decode(ByteBuffer.wrap(bytes), 0, bytes.length, limits);
    }

    /**
     * Decodes one complete frame occupying exactly {@code length} bytes at absolute {@code offset}.
     * Fewer bytes is a truncated frame, more is data after the frame (RFC 5044 §7.1.2); both are
     * errors here. Use {@link MpaFrameReader} for a byte stream.
     */
    public static MpaFrame decode(ByteBuffer buf, int offset, int length, MpaFrameLimits limits)
            throws MpaDecodeException {
        Objects.requireNonNull(limits, "limits");
        if (offset < 0 || length < 0 || offset > buf.limit() - length) {
            throw new IndexOutOfBoundsException("offset " + offset + " length " + length + " limit " + buf.limit());
        }
        if (length < MpaRequestReplyFlyweight.HEADER_LENGTH) {
            throw new MpaDecodeException("MPA frame", "truncated: " + length + " bytes, the header needs "
                    + MpaRequestReplyFlyweight.HEADER_LENGTH, SEC_FRAME);
        }
        MpaRequestReplyFlyweight fw = new MpaRequestReplyFlyweight().wrap(buf, offset);
        Kind kind = checkKey(fw, null);
        int pdLength = checkPrivateDataLength(fw, limits);
        int total = MpaRequestReplyFlyweight.HEADER_LENGTH + pdLength;
        if (length < total) {
            throw new MpaDecodeException("MPA Private Data", "truncated: " + (length - MpaRequestReplyFlyweight.HEADER_LENGTH)
                    + " of PD_Length " + pdLength + " bytes present", SEC_FRAME);
        }
        if (length > total) {
            throw new MpaDecodeException("MPA frame", (length - total)
                    + " bytes follow the frame; nothing may be sent before the peer's frame is answered", SEC_STARTUP);
        }
        return fromHeader(fw, kind);
    }

    /**
     * Checks the key of the frame at the flyweight against the expected kind (null: either).
     *
     * @return the kind the key names
     */
    static Kind checkKey(MpaRequestReplyFlyweight fw, Kind expected) throws MpaDecodeException {
        Kind kind;
        if (fw.hasRequestKey()) {
            kind = Kind.REQUEST;
        } else if (fw.hasReplyKey()) {
            kind = Kind.REPLY;
        } else {
            throw new MpaDecodeException("MPA Key", "not \"MPA ID Req Frame\" or \"MPA ID Rep Frame\"", SEC_FRAME);
        }
        if (expected != null && kind != expected) {
            throw new MpaDecodeException("MPA Key", "expected an MPA " + expected.jsonName() + " frame, got a "
                    + kind.jsonName(), SEC_FRAME);
        }
        return kind;
    }

    /** Checks PD_Length (and, with S in Rev 2, room for the enhanced data); returns it. */
    static int checkPrivateDataLength(MpaRequestReplyFlyweight fw, MpaFrameLimits limits) throws MpaDecodeException {
        int pdLength = fw.privateDataLength();
        if (pdLength > MpaRequestReplyFlyweight.MAX_PRIVATE_DATA_LENGTH) {
            throw new MpaDecodeException("MPA PD_Length", pdLength + " exceeds 512", SEC_FRAME);
        }
        if (pdLength > limits.maxPrivateDataLength()) {
            throw new MpaDecodeException("MPA PD_Length", pdLength + " exceeds the local limit of "
                    + limits.maxPrivateDataLength(), SEC_FRAME);
        }
        if (fw.enhanced() && pdLength < EnhancedConnectionData.LENGTH) {
            throw new MpaDecodeException("MPA PD_Length", pdLength
                    + " is too short for the 4 bytes of enhanced data that S=1 announces", SEC_ENHANCED);
        }
        return pdLength;
    }

    /** Builds the value from a validated, complete frame; Res is ignored, R in a Request too. */
    static MpaFrame fromHeader(MpaRequestReplyFlyweight fw, Kind kind) {
        ByteBuffer buf = fw.buffer();
        int p = fw.privateDataOffset();
        int pdLength = fw.privateDataLength();
        EnhancedConnectionData ed = null;
        if (fw.enhanced()) {
            ed = EnhancedConnectionData.get(buf, p);
            p += EnhancedConnectionData.LENGTH;
            pdLength -= EnhancedConnectionData.LENGTH;
        }
        byte[] ulp = new byte[pdLength];
        for (int i = 0; i < pdLength; i++) {
            ulp[i] = buf.get(p + i);
        }
        // RFC 5044 §7.1.1: R is "set to zero, and not checked on receipt, in the MPA Request Frame".
        boolean reject = kind == Kind.REPLY && fw.reject();
        return new MpaFrame(kind, fw.marker(), fw.crc(), reject, fw.revision(), ed, ulp);
    }

    /** A builder with the same fields, for deriving a frame. */
    public Builder toBuilder() {
        Builder b = new Builder(kind);
        b.marker = marker;
        b.crc = crc;
        b.reject = reject;
        b.revision = revision;
        b.enhancedData = enhancedData;
        b.ulpPrivateData = ulpPrivateData.clone();
        return b;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MpaFrame f && f.kind == kind && f.marker == marker && f.crc == crc && f.reject == reject
                && f.revision == revision && Objects.equals(f.enhancedData, enhancedData)
                && Arrays.equals(f.ulpPrivateData, ulpPrivateData);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, marker, crc, reject, revision, enhancedData) * 31 + Arrays.hashCode(ulpPrivateData);
    }

    @Override
    public String toString() {
        return "MpaFrame{" + kind.jsonName() + ", M=" + (marker ? 1 : 0) + ", C=" + (crc ? 1 : 0) + ", R=" + (reject ? 1 : 0)
                + ", Rev=" + revision + ", " + (enhancedData != null ? enhancedData : "unenhanced")
                + ", ulp=" + HexFormat.of().formatHex(ulpPrivateData) + "}";
    }

    /**
     * Builds a frame for sending; {@link #build()} enforces the sending rules of RFC 5044 §7.1.1,
     * RFC 6581 §6 and §9.2.
     */
    public static final class Builder {
        private final Kind kind;
        private boolean marker;
        private boolean crc;
        private boolean reject;
        private int revision = MpaRequestReplyFlyweight.REVISION_2;
        private EnhancedConnectionData enhancedData;
        private byte[] ulpPrivateData = new byte[0];
        private MpaFrameLimits limits = MpaFrameLimits.RFC;

        private Builder(Kind kind) {
            this.kind = kind;
        }

        public Builder marker(boolean v) {
            marker = v;
            return this;
        }

        public Builder crc(boolean v) {
            crc = v;
            return this;
        }

        /** R; only a Reply may set it. */
        public Builder reject(boolean v) {
            reject = v;
            return this;
        }

        /** Rev, 0..255; default 2. */
        public Builder revision(int v) {
            revision = v;
            return this;
        }

        /** The RFC 6581 §9 data (sets S), or null for none. */
        public Builder enhancedData(EnhancedConnectionData v) {
            enhancedData = v;
            return this;
        }

        public Builder ulpPrivateData(byte[] v) {
            ulpPrivateData = FieldChecks.privateDataCopy(v);
            return this;
        }

        /** Limits checked by {@link #build()}; default {@link MpaFrameLimits#RFC}. */
        public Builder limits(MpaFrameLimits v) {
            limits = Objects.requireNonNull(v, "limits");
            return this;
        }

        /**
         * @throws IllegalArgumentException naming the field and RFC section when a sending rule is
         *                                  violated
         */
        public MpaFrame build() {
            if (revision < 0 || revision > 0xFF) {
                throw new IllegalArgumentException("MPA Rev: " + revision + " is outside 0..255 (" + SEC_FRAME + ")");
            }
            if (reject && kind == Kind.REQUEST) {
                throw new IllegalArgumentException("MPA R: must be zero in an MPA Request (" + SEC_FRAME + ")");
            }
            if (enhancedData != null) {
                if (revision < MpaRequestReplyFlyweight.REVISION_2) {
                    throw new IllegalArgumentException("MPA S: enhanced data requires Rev 2 or higher, not " + revision
                            + " (RFC 6581 §6)");
                }
                if (!enhancedData.peerToPeer()
                        && (enhancedData.sendRtr() || enhancedData.writeRtr() || enhancedData.readRtr())) {
                    throw new IllegalArgumentException("Enhanced data B/C/D: must be zero when A is zero (RFC 6581 §9.2)");
                }
            }
            FieldChecks.ulpPrivateData("MPA Private Data", ulpPrivateData.length, limits, enhancedData != null);
            return new MpaFrame(kind, marker, crc, reject, revision, enhancedData, ulpPrivateData.clone());
        }
    }
}
