/**
 * The soft provider's event loop: a {@link org.jwarp.soft.loop.Reactor} is one NIO selector
 * thread that drives many connections and listeners (no thread per QP), runs scheduled work and
 * deadlines, and takes back streams from a completion queue's poller whose lease ran out
 * ({@link org.jwarp.soft.loop.Reactor.Polled}); and the {@link org.jwarp.soft.loop.IoLock} that a
 * connection's reactor, posting and polling threads take in turn.
 *
 * <p>Imports: nothing else of {@code soft}; it knows its clients only as
 * {@link org.jwarp.soft.loop.Reactor.Handler}, {@link org.jwarp.soft.loop.Reactor.Scheduled},
 * {@link org.jwarp.soft.loop.Reactor.Timed} and {@code Polled}. Checked by {@code LayeringTest}.
 */
package org.jwarp.soft.loop;
