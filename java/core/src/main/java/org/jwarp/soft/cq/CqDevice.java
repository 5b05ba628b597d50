package org.jwarp.soft.cq;

import org.jwarp.soft.tx.DirectBufferPool;
import org.jwarp.soft.verbs.DeviceResources;

/** What a completion queue and its poller need of their device: events, release on close, poll buffers. */
public interface CqDevice extends DeviceResources {
    /** Direct buffers: a poller's read buffer is taken from and released to them. */
    DirectBufferPool buffers();
}
