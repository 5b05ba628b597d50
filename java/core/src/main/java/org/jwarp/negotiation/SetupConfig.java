package org.jwarp.negotiation;

import java.util.Set;
import org.jwarp.ground.RtrType;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.mpa.SetupValues;

/**
 * What {@link InitiatorConfig} and {@link ResponderConfig} share: their {@link SetupValues}
 * (RFC 6581 §9.1 ORD, §9.2 RTR types, RFC 5044 §7.1.1 C, M and private data) with one accessor and
 * one validating setter each. The IRD and the checks across fields stay with each side.
 */
abstract class SetupConfig {
    final SetupValues values;

    SetupConfig(SetupValues values) {
        this.values = values;
    }

    /** ORD wanted; lowered to the peer's IRD. */
    public int ord() {
        return values.ord();
    }

    /** RTR types offered (initiator, B/C/D when peer-to-peer) or accepted (responder), RFC 6581 §9.2. */
    public Set<RtrType> rtrTypes() {
        return values.rtrTypes();
    }

    /** C: prefer CRC. */
    public boolean crc() {
        return values.crc();
    }

    /** M: this side implements markers and asks the peer for them. */
    public boolean markers() {
        return values.markers();
    }

    /** {@return a copy of the ULP private data to send} */
    public byte[] ulpPrivateData() {
        return values.ulpPrivateData();
    }

    /** {@return the MPA frame limits the private data fits} */
    public MpaFrameLimits limits() {
        return values.limits();
    }

    /** The setters both sides share; each names its field as the public builder does. */
    abstract static class SetupBuilder<B extends SetupBuilder<B>> {
        SetupValues values = SetupValues.DEFAULTS;

        abstract B self();

        public B ord(int v) {
            values = values.withOrd("ord", v);
            return self();
        }

        public B rtrTypes(Set<RtrType> v) {
            values = values.withRtrTypes(v);
            return self();
        }

        public B crc(boolean v) {
            values = values.withCrc(v);
            return self();
        }

        public B markers(boolean v) {
            values = values.withMarkers(v);
            return self();
        }

        public B ulpPrivateData(byte[] v) {
            values = values.withUlpPrivateData(v);
            return self();
        }

        public B limits(MpaFrameLimits v) {
            values = values.withLimits(v);
            return self();
        }
    }
}
