package org.jwarp.mpa;

import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jwarp.ground.RtrType;

/**
 * The connection-setup values that {@code negotiation.InitiatorConfig},
 * {@code negotiation.ResponderConfig} and {@code verbs.ConnectionParameters} share, with their
 * rules in one place ({@link FieldChecks}): IRD and ORD (RFC 6581 §9.1), the peer-to-peer model
 * and its RTR types (§9.2), C and M, and the ULP private data with the limits it must fit
 * (RFC 5044 §7.1.1). Internal to those builders: each keeps its own public setters and names the
 * field in its errors. Immutable; every {@code with} method returns a changed copy.
 *
 * @param ird            IRD offered (the responder's cap on the IRD it grants)
 * @param ord            ORD wanted
 * @param peerToPeer     A: the peer-to-peer model
 * @param rtrTypes       RTR types offered or accepted
 * @param crc            C: CRC preferred
 * @param markers        M: markers implemented and asked for
 * @param ulpPrivateData the ULP's private data (copied in and out)
 * @param limits         the MPA frame limits the private data must fit
 */
public record SetupValues(int ird, int ord, boolean peerToPeer, Set<RtrType> rtrTypes, boolean crc,
        boolean markers, byte[] ulpPrivateData, MpaFrameLimits limits) {

    /**
     * IRD 16, ORD 16, peer-to-peer with Write and Read RTR, CRC, no markers, no private data, RFC
     * limits: the negotiation engine's configuration defaults. A connection asks for more
     * ({@code verbs.ConnectionParameters.DEFAULT_IRD_ORD}, Linux siw's 128).
     */
    public static final SetupValues DEFAULTS = new SetupValues(16, 16, true, EnumSet.of(RtrType.WRITE, RtrType.READ),
            true, false, new byte[0], MpaFrameLimits.RFC);

    /**
     * Copies the set and the bytes; null private data is empty.
     *
     * @throws IllegalArgumentException when the IRD or ORD is outside 0..16383 (RFC 6581 §9.1)
     */
    public SetupValues {
        FieldChecks.irdOrd("ird", ird);
        FieldChecks.irdOrd("ord", ord);
        rtrTypes = Collections.unmodifiableSet(RtrType.mutableCopy(rtrTypes));
        ulpPrivateData = FieldChecks.privateDataCopy(ulpPrivateData);
        Objects.requireNonNull(limits, "limits");
    }

    /** {@return a copy of the ULP private data} */
    @Override
    public byte[] ulpPrivateData() {
        return ulpPrivateData.clone();
    }

    /** {@return the length of the ULP private data} */
    public int ulpPrivateDataLength() {
        return ulpPrivateData.length;
    }

    /** {@return these values with the IRD {@code v}} @throws IllegalArgumentException naming {@code field} (RFC 6581 §9.1) */
    public SetupValues withIrd(String field, int v) {
        return new SetupValues(FieldChecks.irdOrd(field, v), ord, peerToPeer, rtrTypes, crc, markers, ulpPrivateData,
                limits);
    }

    /** {@return these values with the ORD {@code v}} @throws IllegalArgumentException naming {@code field} (RFC 6581 §9.1) */
    public SetupValues withOrd(String field, int v) {
        return new SetupValues(ird, FieldChecks.irdOrd(field, v), peerToPeer, rtrTypes, crc, markers, ulpPrivateData,
                limits);
    }

    /** {@return these values with A = {@code v}} */
    public SetupValues withPeerToPeer(boolean v) {
        return new SetupValues(ird, ord, v, rtrTypes, crc, markers, ulpPrivateData, limits);
    }

    /** {@return these values with the RTR types {@code v}} (checked by {@link #checkRtrForPeerToPeer}) */
    public SetupValues withRtrTypes(Set<RtrType> v) {
        return new SetupValues(ird, ord, peerToPeer, v, crc, markers, ulpPrivateData, limits);
    }

    /** {@return these values with C = {@code v}} */
    public SetupValues withCrc(boolean v) {
        return new SetupValues(ird, ord, peerToPeer, rtrTypes, v, markers, ulpPrivateData, limits);
    }

    /** {@return these values with M = {@code v}} */
    public SetupValues withMarkers(boolean v) {
        return new SetupValues(ird, ord, peerToPeer, rtrTypes, crc, v, ulpPrivateData, limits);
    }

    /** {@return these values with the private data {@code v}} (null: none; checked by {@link #checkPrivateData}) */
    public SetupValues withUlpPrivateData(byte[] v) {
        return new SetupValues(ird, ord, peerToPeer, rtrTypes, crc, markers, v, limits);
    }

    /** {@return these values with the limits {@code v}} */
    public SetupValues withLimits(MpaFrameLimits v) {
        return new SetupValues(ird, ord, peerToPeer, rtrTypes, crc, markers, ulpPrivateData,
                Objects.requireNonNull(v, "limits"));
    }

    /**
     * RFC 5044 §7.1.1: the private data fits the limits, after the RFC 6581 §9 enhanced data when
     * {@code enhanced}.
     *
     * @throws IllegalArgumentException naming {@code field} and the limit
     */
    public void checkPrivateData(String field, boolean enhanced) {
        FieldChecks.ulpPrivateData(field, ulpPrivateData.length, limits, enhanced);
    }

    /**
     * RFC 6581 §9.2: the peer-to-peer model offers at least one RTR type.
     *
     * @throws IllegalArgumentException naming {@code field}
     */
    public void checkRtrForPeerToPeer(String field) {
        FieldChecks.rtrTypeForPeerToPeer(field, peerToPeer, rtrTypes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SetupValues v && v.ird == ird && v.ord == ord && v.peerToPeer == peerToPeer
                && v.rtrTypes.equals(rtrTypes) && v.crc == crc && v.markers == markers
                && Arrays.equals(v.ulpPrivateData, ulpPrivateData) && v.limits.equals(limits);
    }

    @Override
    public int hashCode() {
        return Objects.hash(ird, ord, peerToPeer, rtrTypes, crc, markers, limits) * 31 + Arrays.hashCode(ulpPrivateData);
    }

    @Override
    public String toString() {
        return "SetupValues{ird=" + ird + ", ord=" + ord + ", p2p=" + peerToPeer + ", rtr=" + RtrType.format(rtrTypes)
                + ", crc=" + crc + ", markers=" + markers + ", pd=" + ulpPrivateData.length + "B, limits=" + limits + "}";
    }
}
