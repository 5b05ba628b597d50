package org.jwarp.verbs;

/**
 * Ready-to-Receive indication types of the RFC 6581 §9.2 peer-to-peer model: a zero-length Send
 * (B flag), RDMA Write (C flag) or RDMA Read (D flag).
 */
public enum RtrType {
    SEND, WRITE, READ
}
