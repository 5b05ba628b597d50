package org.jwarp.disni.impl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Supplier;
import org.jwarp.disni.natives.JwarpNative;

/**
 * Test helper defined by the DiSNI loader: drives the device-free parts of the native await
 * (argument checks of cqAwait and cqAckEvents, the wake eventfd's life) and hands the results to
 * a test in the application loader. Named entries, in order: see {@link #get()}.
 */
public final class CqAwaitProbe implements Supplier<Object[]> {
    @Override
    public Object[] get() {
        ByteBuffer wcs = ByteBuffer.allocateDirect(256).order(ByteOrder.nativeOrder());
        long wcsAddr = com.ibm.disni.util.MemoryUtils.getAddress(wcs);
        ByteBuffer ack = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        long ackAddr = com.ibm.disni.util.MemoryUtils.getAddress(ack);
        int fd;
        try {
            fd = JwarpNative.wakeCreate();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        return new Object[] {
            JwarpNative.probe(JwarpNative.PROBE_ERRNO_EINVAL),
            JwarpNative.cqAwait(0L, 0L, fd, 1, wcsAddr, 0L, ackAddr), // no CQ, no channel
            JwarpNative.cqAwait(0L, 0L, -1, 0, 0L, -1L, 0L), // nothing valid
            JwarpNative.cqAckEvents(0L, ackAddr), // no CQ
            fd,
            JwarpNative.wakeSignal(fd),
            JwarpNative.wakeSignal(fd), // again: still 0
            JwarpNative.wakeClose(fd),
            JwarpNative.wakeClose(fd), // already closed: the errno of close (EBADF)
            JwarpNative.wakeSignal(-1),
        };
    }
}
