package org.jwarp.soft.cm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;

import org.jwarp.negotiation.ResponderConfig;

/**
 * A listener's accepted connections as the layer above setup keeps them: the stream each accepted
 * channel becomes, and what watches them once established (the listener's idle timeout, which
 * reads data-path progress). One per listener, driven by the listener's reactor.
 */
public interface AcceptedStreams {
    /** Reactor thread: a responder stream over {@code ch}, registered with the reactor, awaiting its MPA Request. */
    SetupStream open(SoftListener listener, SocketChannel ch, ResponderConfig base) throws IOException;

    /** Reactor thread, once the listener is bound to {@code local}: the watch begins. */
    void start(InetSocketAddress local);

    /**
     * The listener closes (any thread, and again on its reactor): the established connections are
     * no longer watched; they stay open.
     */
    void close();

    /** Accepted connections ended by the idle timeout so far (any thread). */
    long idleClosed();
}
