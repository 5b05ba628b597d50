package org.jwarp.soft.cm;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;

import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.RdmaException;

/**
 * The LLP stream as connection setup sees it: its phase, socket, deadline and I/O lock, the
 * staging buffer an MPA frame or setup TERM goes into, how it fails or closes, the listener a
 * responder's request is offered to, and FPDU mode, which setup only switches on
 * ({@link #establish}). The stream implements it; setup never sees transmit,
 * receive or the wire engine.
 */
public interface SetupStream {
    /** Where a connection is; setup moves it up to {@code ESTABLISHED}, close to the last two. */
    enum Phase { CONNECTING, AWAIT_REPLY, AWAIT_REQUEST, AWAIT_DECISION, ESTABLISHED, CLOSING, CLOSED }

    boolean initiator();

    /** This stream's setup. */
    StreamSetup setup();

    /** Initiator: completes with the connection once FPDU mode began, or exceptionally when setup failed. */
    CompletableFuture<? extends Connection> established();

    /** Initiator, on the reactor: the caller of connect gave up (timeout, interrupt); the stream ends with {@code e}. */
    void abandon(RdmaException e);

    InetSocketAddress remoteAddress();

    Phase phase();

    void enter(Phase p);

    /** Takes the stream's I/O lock (reactor side); {@link #unlockIo()} gives it back. */
    void lockIo();

    void unlockIo();

    Reactor reactor();

    /** Where initiated connections leave from, or null for the kernel's route. */
    InetAddress sourceAddress();

    /** The initiator's socket for one connect attempt. */
    void open(SocketChannel c);

    SocketChannel channel();

    /** Registers the socket with the stream's reactor for {@code ops}. */
    void register(int ops) throws IOException;

    void setDeadline(long fromNowNanos);

    void clearDeadline();

    /** The staging buffer for an MPA frame or setup TERM, or null when none can be had. */
    ByteBuffer staging();

    /** Drops what is staged and not sent (a Rev 1 retry sends nothing of the first attempt). */
    void clearStaged();

    void interest(int ops);

    void flush() throws IOException;

    /** Reads what the socket holds now and feeds it back by phase. */
    void readAll() throws IOException;

    void onIoError(IOException e);

    /** Ends the stream with {@code e} (what {@link #failure()} says), after flushing what is staged. */
    void fail(RdmaException e);

    /** Closes the socket of a failed attempt (a Rev 1 retry opens a new one). */
    void closeChannel();

    void closeByUser();

    RdmaException failure();

    /** Responder: hands the request to the listener; false when it cannot take it. */
    boolean offer(SoftConnectionRequest request);

    /** Responder: the QP the ULP accepted with. */
    void bind(SoftQueuePair q);

    /** The established connection, or null. */
    Connection connection();

    /**
     * Builds FPDU mode for what setup decided (RFC 6581 §9.1 IRD/ORD, §9.2 RTR, CRC); throws, with
     * nothing changed, when it cannot. Setup then enters {@code ESTABLISHED} and calls
     * {@link #startFpduMode()}.
     */
    void establish(NegotiationOutcome outcome);

    /** FPDU mode begins: the connection is made, attached and started (RTR, staged Reply flushed). */
    void startFpduMode();
}
