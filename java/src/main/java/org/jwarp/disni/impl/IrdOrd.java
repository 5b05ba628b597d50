package org.jwarp.disni.impl;

import org.jwarp.verbs.ConnectionParameters;

/**
 * IRD/ORD choices of the DiSNI provider (RFC 6581 section 9.1): what goes into
 * rdma_conn_param (responder_resources = IRD, initiator_depth = ORD), bounded by the device
 * (max_qp_rd_atom, max_qp_init_rd_atom) and by the u8 fields of rdma_conn_param, and how the
 * peer's reported values bound the local ORD. Values the kernel reports are checked here rather
 * than trusted: out-of-range values are refused and 0/0 means "peer sent no enhanced data".
 */
public final class IrdOrd {
    /** rdma_conn_param.responder_resources / initiator_depth are u8. */
    public static final int CONN_PARAM_MAX = 255;
    /** Unknown peer value (no RFC 6581 enhanced data). */
    public static final int UNKNOWN = -1;

    private IrdOrd() {
    }

    /** The local value to offer: the request, "no negotiation" meaning the device maximum. */
    public static int offer(int requested, int deviceMax) {
        int cap = Math.min(Math.max(deviceMax, 0), CONN_PARAM_MAX);
        if (requested == ConnectionParameters.NO_NEGOTIATION) {
            return cap;
        }
        return Math.min(requested, cap);
    }

    /** The ORD a side may use: never more than the peer's IRD when that is known (RFC 6581 section 9.1). */
    public static int ordWithin(int localOrd, int peerIrd) {
        return peerIrd == UNKNOWN ? localOrd : Math.min(localOrd, peerIrd);
    }

    /** The responder's IRD: raised to the initiator's ORD where the device allows it. */
    public static int responderIrd(int localIrd, int peerOrd, int deviceMax) {
        int want = peerOrd == UNKNOWN ? localIrd : Math.max(localIrd, peerOrd);
        return Math.min(want, Math.min(Math.max(deviceMax, 0), CONN_PARAM_MAX));
    }

    /**
     * The peer's (IRD, ORD) from the rdma_conn_param of a kernel iWARP CONNECT_REQUEST. Measured
     * on siw: initiator_depth carries the initiator's IRD (the bound for our ORD) and
     * responder_resources its ORD. 0/0 means an MPA revision 1 peer (no enhanced data).
     */
    public static int[] peerFromRequest(int responderResources, int initiatorDepth) {
        int ird = checkedPeer("peer IRD (initiator_depth)", initiatorDepth);
        int ord = checkedPeer("peer ORD (responder_resources)", responderResources);
        return ird == 0 && ord == 0 ? new int[] {UNKNOWN, UNKNOWN} : new int[] {ird, ord};
    }

    /**
     * The responder's (IRD, ORD) from the ESTABLISHED event at the initiator. Measured on siw:
     * responder_resources carries the responder's IRD and initiator_depth its ORD; other drivers
     * (cxgb4) report them the other way round. The reading is checked against what RFC 6581
     * section 9.1 guarantees, the responder's ORD never exceeding our IRD: if only the swapped
     * reading satisfies it, that one is used; if neither does, the values are refused.
     */
    public static int[] peerFromEstablished(int responderResources, int initiatorDepth, int localIrd) {
        int a = checkedPeer("peer IRD (responder_resources)", responderResources);
        int b = checkedPeer("peer ORD (initiator_depth)", initiatorDepth);
        if (a == 0 && b == 0) {
            return new int[] {UNKNOWN, UNKNOWN};
        }
        if (b <= localIrd) {
            return new int[] {a, b};
        }
        if (a <= localIrd) {
            return new int[] {b, a};
        }
        throw new IllegalStateException("peer ORD: neither " + b + " nor " + a + " fits within our IRD " + localIrd
                + " (RFC 6581 section 9.1: the responder's ORD must not exceed the initiator's IRD)");
    }

    /**
     * Validates a peer value reported by a CM event: 0..16383 (14 bits, RFC 6581 section 9.1).
     *
     * @throws IllegalStateException naming the field when it is out of range
     */
    public static int checkedPeer(String field, int v) {
        if (v < 0 || v > ConnectionParameters.NO_NEGOTIATION) {
            throw new IllegalStateException(field + ": peer value " + v + " outside 0..16383 (RFC 6581 section 9.1)");
        }
        return v;
    }
}
