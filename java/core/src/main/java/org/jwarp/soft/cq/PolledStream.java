package org.jwarp.soft.cq;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

import org.jwarp.soft.loop.Reactor;
import org.jwarp.verbs.RdmaException;

/**
 * A connection whose socket a completion queue's waiting thread may read itself (receive polling):
 * what a {@link CqPoller} and its {@link SoftCompletionQueue} need of it.
 */
public interface PolledStream {
    /** {@link #claim} and {@link #pollReceive}: the stream stays with, or went back to, its reactor. */
    int POLL_NO = 0;
    /** Its I/O lock was busy (someone else drives it just now): try again later. */
    int POLL_BUSY = 1;
    /** The poller holds the stream now. */
    int POLL_HELD = 2;

    /** The stream's socket, or null before it has one. */
    SocketChannel channel();

    /** The event loop that owns the stream when no poller holds it. */
    Reactor reactor();

    /** Takes the stream from its reactor for {@code p}: {@link #POLL_HELD}, {@link #POLL_BUSY} or {@link #POLL_NO}. */
    int claim(CqPoller p);

    /** Reads and processes what the socket holds, with {@code rx} as the read buffer. */
    int pollReceive(ByteBuffer rx, CqPoller p);

    /** Hands the stream back to its reactor. */
    void releasePoll(CqPoller p);

    /** Reactor thread: takes the stream back from a poller whose lease ran out; true if {@code p} no longer holds it. */
    boolean revokePoll(CqPoller p);

    /** Ends the connection with a local catastrophic error (RFC 5040 §4.8), on its reactor. */
    void failFatal(RdmaException cause);
}
