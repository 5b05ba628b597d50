package org.jwarp.soft;

/**
 * Test hook: injects a fault where a stream's data path begins its work ({@link SoftStream#faults},
 * null in production: each site costs one null check under the stream's I/O lock).
 */
interface FaultHook {
    /** Where the data path calls the hook. */
    enum Site {
        /** The reactor read bytes and is about to hand them to the engine. */
        REACTOR_RECEIVE,
        /** The reactor is about to stage engine output. */
        REACTOR_TRANSMIT,
        /** A thread in poll/await/progress read bytes and is about to hand them to the engine. */
        POLL_RECEIVE,
        /** A posting or polling application thread is about to stage engine output. */
        INLINE_TRANSMIT
    }

    /** Called at {@code site} on the thread doing the work, I/O lock held; may throw. */
    void at(Site site);
}
