package org.jwarp.disni.impl;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.impl.NatObject;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rdma_cm event channel and the thread that reads it: every event is routed to the queue of
 * its cm id, together with the status, private data and IRD/ORD fields (RFC 6581 section 9.1)
 * read from the native side record. DiSNI's channel bookkeeping is not thread-safe, so every
 * DiSNI CM call on this channel goes through {@link #lock}.
 */
final class CmDispatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CmDispatcher.class);
    private static final int POLL_MS = 20;

    final RdmaCm cm;
    final RdmaEventChannel channel;
    final ReentrantLock lock = new ReentrantLock(true);
    private final ConcurrentHashMap<Long, BlockingQueue<CmEvent>> queues = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Runnable> disconnectHandlers = new ConcurrentHashMap<>();
    private final ByteBuffer info = ByteBuffer.allocateDirect(JwarpNative.EV_SIZE).order(ByteOrder.nativeOrder());
    private final Thread thread;
    private volatile boolean running = true;

    CmDispatcher(RdmaCm cm, String name) throws IOException {
        this.cm = cm;
        this.channel = cm.createEventChannel();
        if (channel == null) {
            throw new IOException("rdma_create_event_channel failed");
        }
        thread = new Thread(this::run, "jwarp-disni-cm-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    static long ptr(Object natObject) {
        return ((NatObject) natObject).getObjId();
    }

    /** Creates an id on this channel with its event queue. */
    RdmaCmId createId() throws IOException {
        lock.lock();
        try {
            RdmaCmId id = cm.createId(channel, RdmaCm.RDMA_PS_TCP);
            if (id == null) {
                throw new IOException("rdma_create_id failed");
            }
            queues.put(ptr(id), new LinkedBlockingQueue<>());
            return id;
        } finally {
            lock.unlock();
        }
    }

    /** Destroys the id (QP first if it has one) and forgets its queue. */
    void destroy(RdmaCmId id, boolean hasQp) {
        lock.lock();
        try {
            if (hasQp) {
                try {
                    cm.destroyQP(id);
                } catch (IOException e) {
                    LOG.warn("rdma_destroy_qp: {}", e.toString());
                }
            }
            int rc = cm.destroyCmId(id);
            if (rc != 0) {
                LOG.warn("rdma_destroy_id returned {}", rc);
            }
        } catch (IOException e) {
            LOG.warn("rdma_destroy_id: {}", e.toString());
        } finally {
            queues.remove(ptr(id));
            disconnectHandlers.remove(ptr(id));
            lock.unlock();
        }
    }

    /**
     * Runs {@code handler} once, on this dispatcher's thread, when DISCONNECTED or DEVICE_REMOVAL
     * arrives for {@code id} (the event is still queued for {@link #await}).
     */
    void onDisconnect(RdmaCmId id, Runnable handler) {
        disconnectHandlers.put(ptr(id), handler);
    }

    /** Runs a DiSNI CM call under the channel lock. */
    <T> T locked(IoCall<T> call) throws IOException {
        lock.lock();
        try {
            return call.run();
        } finally {
            lock.unlock();
        }
    }

    interface IoCall<T> {
        T run() throws IOException;
    }

    /**
     * Waits for the next event of {@code id} until {@code deadlineNanos}.
     *
     * @throws RdmaTimeoutException naming {@code what} when nothing arrives in time
     */
    CmEvent await(RdmaCmId id, long deadlineNanos, String what) throws RdmaException {
        BlockingQueue<CmEvent> q = queues.get(ptr(id));
        if (q == null) {
            throw new RdmaException(what + ": cm id is closed");
        }
        long left = deadlineNanos - System.nanoTime();
        CmEvent ev;
        try {
            ev = left > 0 ? q.poll(left, TimeUnit.NANOSECONDS) : q.poll();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RdmaException(what + ": interrupted");
        }
        if (ev == null) {
            throw new RdmaTimeoutException(what + ": no rdma_cm event within the timeout");
        }
        return ev;
    }

    /** Whether {@code id} is still alive on this channel (not destroyed); call under {@link #lock}. */
    boolean live(RdmaCmId id) {
        return queues.containsKey(ptr(id));
    }

    /** Next event of {@code id} if one is queued, else null. */
    CmEvent pollEvent(RdmaCmId id) {
        BlockingQueue<CmEvent> q = queues.get(ptr(id));
        return q == null ? null : q.poll();
    }

    /** Waits up to {@code timeout} for an event of the listen id (null on timeout). */
    CmEvent awaitListen(RdmaCmId id, Duration timeout) throws InterruptedException, RdmaException {
        BlockingQueue<CmEvent> q = queues.get(ptr(id));
        if (q == null) {
            throw new RdmaException("listener is closed");
        }
        return q.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void run() {
        while (running) {
            RdmaCmEvent ev;
            CmEvent out = null;
            lock.lock();
            try {
                if (!running) {
                    break;
                }
                ev = cm.getCmEvent(channel, POLL_MS);
                if (ev != null) {
                    out = snapshot(ev);
                }
            } catch (IOException | RuntimeException e) {
                if (running) {
                    LOG.warn("rdma_get_cm_event: {}", e.toString());
                }
                out = null;
            } finally {
                lock.unlock();
            }
            if (out != null) {
                route(out);
            } else {
                Thread.yield();
            }
        }
    }

    private CmEvent snapshot(RdmaCmEvent ev) {
        RdmaCmId id = ev.getConnIdPriv();
        RdmaCmId lid = ev.getListenIdPriv();
        int status = 0;
        int rr = 0;
        int idepth = 0;
        byte[] pd = new byte[0];
        if (id != null) {
            info.clear();
            int n = JwarpNative.cmEventInfo(ptr(id), info);
            if (n >= JwarpNative.EV_PRIVATE_DATA && info.getInt(JwarpNative.EV_EVENT) == ev.getEvent()) {
                status = info.getInt(JwarpNative.EV_STATUS);
                rr = info.getInt(JwarpNative.EV_RESPONDER_RESOURCES);
                idepth = info.getInt(JwarpNative.EV_INITIATOR_DEPTH);
                int len = info.getInt(JwarpNative.EV_PRIVATE_DATA_LEN);
                pd = new byte[len];
                info.get(JwarpNative.EV_PRIVATE_DATA, pd);
            }
            if (ev.getEvent() == CmEvent.CONNECT_REQUEST) {
                queues.putIfAbsent(ptr(id), new LinkedBlockingQueue<>());
            }
        }
        return new CmEvent(ev.getEvent(), status, rr, idepth, pd, id, lid);
    }

    private void route(CmEvent ev) {
        LOG.debug("cm event {}", ev);
        RdmaCmId target = ev.type() == CmEvent.CONNECT_REQUEST ? ev.listenId() : ev.id();
        BlockingQueue<CmEvent> q = target == null ? null : queues.get(ptr(target));
        if (q != null) {
            q.add(ev);
        } else {
            LOG.debug("cm event {} for an unknown id dropped", ev);
        }
        if ((ev.type() == CmEvent.DISCONNECTED || ev.type() == CmEvent.DEVICE_REMOVAL) && ev.id() != null) {
            Runnable h = disconnectHandlers.remove(ptr(ev.id()));
            if (h != null) {
                try {
                    h.run();
                } catch (RuntimeException e) {
                    LOG.warn("disconnect handling for {}: {}", ev, e.toString());
                }
            }
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lock.lock();
        try {
            int rc = cm.destroyEventChannel(channel);
            if (rc != 0) {
                LOG.warn("rdma_destroy_event_channel returned {}", rc);
            }
        } catch (IOException e) {
            LOG.warn("rdma_destroy_event_channel: {}", e.toString());
        } finally {
            lock.unlock();
        }
    }
}
