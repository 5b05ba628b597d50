package org.jwarp.soft;

import org.jwarp.soft.cm.ConnectionHost;
import org.jwarp.soft.tx.DirectBufferPool;

/**
 * The device as a stream sees it: setup's {@link ConnectionHost}, with the whole provider
 * configuration in place of setup's settings and the transmit staging pool.
 */
interface StreamHost extends ConnectionHost {
    @Override
    SoftConfig settings();

    DirectBufferPool buffers();
}
