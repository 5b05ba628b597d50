package org.jwarp.disni.impl;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import org.jwarp.provider.CmEventValues;

/**
 * One rdma_cm event with what DiSNI drops (status, private data, the IRD/ORD fields), copied
 * from the native side record before the next event arrives (RFC 6581 section 9.1 values).
 */
record CmEvent(int type, int status, int responderResources, int initiatorDepth, byte[] privateData, RdmaCmId id,
               RdmaCmId listenId) implements CmEventValues {
    static final int ADDR_RESOLVED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED.ordinal();
    static final int ADDR_ERROR = RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_ERROR.ordinal();
    static final int ROUTE_RESOLVED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED.ordinal();
    static final int ROUTE_ERROR = RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_ERROR.ordinal();
    static final int CONNECT_REQUEST = RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal();
    static final int CONNECT_RESPONSE = RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_RESPONSE.ordinal();
    static final int CONNECT_ERROR = RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR.ordinal();
    static final int UNREACHABLE = RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE.ordinal();
    static final int REJECTED = RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal();
    static final int ESTABLISHED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED.ordinal();
    static final int DISCONNECTED = RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal();
    static final int DEVICE_REMOVAL = RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL.ordinal();
    static final int TIMEWAIT_EXIT = RdmaCmEvent.EventType.RDMA_CM_EVENT_TIMEWAIT_EXIT.ordinal();

    String typeName() {
        RdmaCmEvent.EventType[] v = RdmaCmEvent.EventType.values();
        return type >= 0 && type < v.length ? v[type].name() : "event " + type;
    }

    @Override
    public String toString() {
        return typeName() + "{status=" + status + ", rr=" + responderResources + ", id=" + initiatorDepth + ", pd="
                + privateData.length + "B}";
    }
}
