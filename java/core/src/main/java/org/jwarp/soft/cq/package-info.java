/**
 * Completion queues of the soft provider (siw_cq): the ring of work completions, completion
 * channels, and receive polling — a thread waiting on an empty CQ reads the sockets of the CQ's
 * connections itself ({@link org.jwarp.soft.cq.CqPoller}) instead of waiting for the reactor to
 * deliver, and hands them back when it goes away for the lease.
 *
 * <p>Imports: {@code soft.loop}, {@code soft.tx} and {@code soft.verbs}; never the connection.
 * A connection is a {@link org.jwarp.soft.cq.PolledStream} here and the device a
 * {@link org.jwarp.soft.cq.CqDevice}; queue pairs fill a CQ through
 * {@link org.jwarp.soft.verbs.CompletionSink}. Checked by {@code LayeringTest}.
 */
package org.jwarp.soft.cq;
