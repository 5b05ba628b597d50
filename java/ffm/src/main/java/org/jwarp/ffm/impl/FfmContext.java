package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One opened RDMA device ({@code struct ibv_context}): its attributes, the hot verbs' function
 * pointers read once from its {@code ops}, and the protection domains and completion queues made
 * on it. Opening checks the struct layouts against the live library ({@link IbvLayouts}) and
 * refuses to run when they disagree.
 */
public final class FfmContext implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FfmContext.class);

    final String name;
    final MemorySegment ctx;
    /** {@code ops.poll_cq}, {@code ops.req_notify_cq}, {@code ops.post_send}, {@code ops.post_recv}. */
    final MemorySegment pollCq;
    final MemorySegment reqNotifyCq;
    final MemorySegment postSend;
    final MemorySegment postRecv;
    /** {@code ops.post_srq_recv} (NULL when the device has no shared receive queues). */
    final MemorySegment postSrqRecv;
    final long maxMrSize;
    final int maxCqe;
    final int maxQpWr;
    final int maxSge;
    final int maxSgeRd;
    final int maxQpRdAtom;
    final int maxQpInitRdAtom;
    private final List<AutoCloseable> children = new ArrayList<>();
    /** False for rdma_cm's context of a connection id: librdmacm opened it and closes it. */
    private final boolean owned;
    private boolean open = true;

    private FfmContext(String name, MemorySegment ctx, MemorySegment attr, boolean owned) {
        this.name = name;
        this.owned = owned;
        this.ctx = ctx;
        this.pollCq = ctx.get(ADDRESS, IbvLayouts.OPS_POLL_CQ);
        this.reqNotifyCq = ctx.get(ADDRESS, IbvLayouts.OPS_REQ_NOTIFY_CQ);
        this.postSend = ctx.get(ADDRESS, IbvLayouts.OPS_POST_SEND);
        this.postRecv = ctx.get(ADDRESS, IbvLayouts.OPS_POST_RECV);
        this.postSrqRecv = ctx.get(ADDRESS, IbvLayouts.OPS_POST_SRQ_RECV);
        long mrSize = attr.get(JAVA_LONG, IbvLayouts.ATTR_MAX_MR_SIZE); // uint64_t: "no limit" reads as negative
        this.maxMrSize = mrSize < 0 ? Long.MAX_VALUE : mrSize;
        this.maxCqe = attr.get(JAVA_INT, IbvLayouts.ATTR_MAX_CQE);
        this.maxQpWr = attr.get(JAVA_INT, IbvLayouts.ATTR_MAX_QP_WR);
        this.maxSge = attr.get(JAVA_INT, IbvLayouts.ATTR_MAX_SGE);
        this.maxSgeRd = attr.get(JAVA_INT, IbvLayouts.ATTR_MAX_SGE_RD);
        this.maxQpRdAtom = attr.get(JAVA_INT, IbvLayouts.ATTR_MAX_QP_RD_ATOM);
        this.maxQpInitRdAtom = attr.get(JAVA_INT, IbvLayouts.ATTR_MAX_QP_INIT_RD_ATOM);
    }

    /**
     * Opens the device rdma-core lists under {@code deviceName} (e.g. {@code siw0}).
     *
     * @throws RdmaException when libibverbs is missing, the kernel has no RDMA support, no device
     *                       has that name, or {@code ibv_open_device}/{@code ibv_query_device} fail
     * @throws IllegalStateException when the struct layouts disagree with this libibverbs
     */
    public static FfmContext open(String deviceName) throws RdmaException {
        Ibv.requireBound();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment num = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) Ibv.GET_DEVICE_LIST.invokeExact(state, num);
            if (list.equals(MemorySegment.NULL)) {
                int errno = Ibv.errno(state);
                throw new RdmaException("ibv_get_device_list failed with " + Ibv.describe(errno)
                        + (errno == 38 ? ": this kernel has no RDMA support (no /sys/class/infiniband_verbs)" : ""));
            }
            MemorySegment device = MemorySegment.NULL;
            List<String> seen = new ArrayList<>();
            try {
                int n = num.get(JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ADDRESS.byteSize() * n);
                for (int i = 0; i < n && device.equals(MemorySegment.NULL); i++) {
                    MemorySegment dev = devices.getAtIndex(ADDRESS, i);
                    String s = ((MemorySegment) Ibv.GET_DEVICE_NAME.invokeExact(dev)).reinterpret(64).getString(0);
                    seen.add(s);
                    if (s.equals(deviceName)) {
                        device = dev;
                    }
                }
                if (device.equals(MemorySegment.NULL)) {
                    throw new RdmaException("no RDMA device named '" + deviceName + "' (rdma-core lists "
                            + (seen.isEmpty() ? "none" : String.join(", ", seen)) + ")");
                }
                MemorySegment ctx = (MemorySegment) Ibv.OPEN_DEVICE.invokeExact(state, device);
                if (ctx.equals(MemorySegment.NULL)) {
                    throw new RdmaException("ibv_open_device(" + deviceName + ") failed with " + Ibv.describe(Ibv.errno(state)));
                }
                ctx = ctx.reinterpret(IbvLayouts.CONTEXT.byteSize());
                try {
                    checkContextLayout(ctx, device, deviceName);
                    MemorySegment attr = arena.allocate(IbvLayouts.DEVICE_ATTR);
                    int rc = (int) Ibv.QUERY_DEVICE.invokeExact(ctx, attr);
                    if (rc != 0) {
                        throw new RdmaException("ibv_query_device(" + deviceName + ") failed with " + Ibv.describe(rc));
                    }
                    FfmContext c = new FfmContext(deviceName, ctx, attr, true);
                    LOG.debug("opened {}: max_mr_size {}, max_cqe {}, max_qp_wr {}, max_sge {}", deviceName, c.maxMrSize,
                            c.maxCqe, c.maxQpWr, c.maxSge);
                    return c;
                } catch (RdmaException | RuntimeException e) {
                    int rc = (int) Ibv.CLOSE_DEVICE.invokeExact(ctx);
                    if (rc != 0) {
                        LOG.warn("ibv_close_device({}) after a failed open: {}", deviceName, Ibv.describe(rc));
                    }
                    throw e;
                }
            } finally {
                Ibv.FREE_DEVICE_LIST.invokeExact(list);
            }
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_open_device", t);
        }
    }

    /**
     * The context librdmacm opened for a connection id ({@code id->verbs}), with the same layout
     * self-check; closing it closes what was made on it, not the context.
     */
    static FfmContext adopt(MemorySegment verbs) throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ctx = verbs.reinterpret(IbvLayouts.CONTEXT.byteSize());
            MemorySegment device = ctx.get(ADDRESS, IbvLayouts.CONTEXT_DEVICE);
            String name = ((MemorySegment) Ibv.GET_DEVICE_NAME.invokeExact(device)).reinterpret(64).getString(0);
            checkContextLayout(ctx, device, name);
            MemorySegment attr = arena.allocate(IbvLayouts.DEVICE_ATTR);
            int rc = (int) Ibv.QUERY_DEVICE.invokeExact(ctx, attr);
            if (rc != 0) {
                throw new RdmaException("ibv_query_device(" + name + ") failed with " + Ibv.describe(rc));
            }
            return new FfmContext(name, ctx, attr, false);
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_query_device", t);
        }
    }

    /**
     * The layout self-check at open: {@code ctx->device} is the device just opened, the hot
     * verbs' pointers in {@code ops} are set, and {@code cmd_fd} (right after the 256 bytes of
     * {@code ops}) is this process's descriptor of a {@code /dev/infiniband/uverbs*} node.
     */
    static void checkContextLayout(MemorySegment ctx, MemorySegment device, String deviceName) {
        List<String> wrong = new ArrayList<>();
        MemorySegment dev = ctx.get(ADDRESS, IbvLayouts.CONTEXT_DEVICE);
        if (!dev.equals(device)) {
            wrong.add("ibv_context.device is 0x" + Long.toHexString(dev.address()) + ", not the device opened (0x"
                    + Long.toHexString(device.address()) + ")");
        }
        for (long off : new long[] {IbvLayouts.OPS_POLL_CQ, IbvLayouts.OPS_REQ_NOTIFY_CQ, IbvLayouts.OPS_POST_SEND,
                IbvLayouts.OPS_POST_RECV}) {
            if (ctx.get(ADDRESS, off).equals(MemorySegment.NULL)) {
                wrong.add("ibv_context.ops at byte " + off + " is NULL");
            }
        }
        int fd = ctx.get(JAVA_INT, IbvLayouts.CONTEXT_CMD_FD);
        String target;
        try {
            target = fd < 0 ? "(negative)" : Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
        } catch (IOException e) {
            target = "(" + e + ")";
        }
        if (!target.startsWith("/dev/infiniband/uverbs")) {
            wrong.add("ibv_context.cmd_fd is " + fd + " -> " + target + ", not a /dev/infiniband/uverbs* descriptor");
        }
        layoutCheck(deviceName, wrong);
    }

    /** Refuses to go on when a layout check found something: a wrong offset would corrupt memory. */
    static void layoutCheck(String what, List<String> wrong) {
        if (!wrong.isEmpty()) {
            throw new IllegalStateException("jwarp-ffm: the struct layouts (checked against rdma-core 44, IBVERBS_1.1) "
                    + "disagree with this libibverbs on " + what + ": " + String.join("; ", wrong)
                    + ". Refusing to run: use the disni provider on this system");
        }
    }

    /** Allocates a protection domain ({@code ibv_alloc_pd}). */
    public synchronized FfmPd allocatePd() throws RdmaException {
        checkOpen();
        FfmPd pd = FfmPd.allocate(this);
        children.add(pd);
        return pd;
    }

    /** Creates a completion queue of at least {@code entries} entries ({@code ibv_create_cq}). */
    public FfmCq createCq(int entries) throws RdmaException {
        return createCq(entries, false);
    }

    /** A completion queue as {@link #createCq(int)}, single-consumer when {@code single} (see {@link FfmCq}). */
    public synchronized FfmCq createCq(int entries, boolean single) throws RdmaException {
        checkOpen();
        if (entries < 1 || entries > maxCqe) {
            throw new IllegalArgumentException("entries: " + entries + " outside 1.." + maxCqe + " (max_cqe of " + name + ")");
        }
        FfmCq cq = FfmCq.create(this, entries, null, single);
        children.add(cq);
        return cq;
    }

    /** Creates a completion channel ({@code ibv_create_comp_channel}). */
    public synchronized FfmChannel createChannel() throws RdmaException {
        checkOpen();
        FfmChannel ch = FfmChannel.create(this);
        children.add(ch);
        return ch;
    }

    /** Creates a completion queue whose events go to {@code channel}, a channel of this device. */
    public FfmCq createCq(int entries, FfmChannel channel) throws RdmaException {
        return createCq(entries, channel, false);
    }

    /** A completion queue as {@link #createCq(int, FfmChannel)}, single-consumer when {@code single}. */
    public synchronized FfmCq createCq(int entries, FfmChannel channel, boolean single) throws RdmaException {
        checkOpen();
        if (!channel.of(this)) {
            throw new IllegalArgumentException("completion channel " + channel + " belongs to another device than " + name);
        }
        if (!channel.isOpen()) {
            throw new RdmaException("completion channel " + channel + " is closed");
        }
        if (entries < 1 || entries > maxCqe) {
            throw new IllegalArgumentException("entries: " + entries + " outside 1.." + maxCqe + " (max_cqe of " + name + ")");
        }
        FfmCq cq = FfmCq.create(this, entries, channel, single);
        children.add(cq);
        return cq;
    }

    /** The open QP at {@code address} of one of this device's CQs, or null. */
    synchronized FfmQp qpAt(long address) {
        for (AutoCloseable c : children) {
            FfmQp q = c instanceof FfmCq cq ? cq.qpAt(address) : null;
            if (q != null) {
                return q;
            }
        }
        return null;
    }

    /** This device's open CQ whose {@code struct ibv_cq} is at {@code address}, or null. */
    synchronized FfmCq cqAt(long address) {
        for (AutoCloseable c : children) {
            if (c instanceof FfmCq cq && cq.cq.address() == address) {
                return cq;
            }
        }
        return null;
    }

    /** The open shared receive queue at {@code address} (an async event's element), or null. */
    synchronized FfmSrq srqAt(long address) {
        for (AutoCloseable c : children) {
            FfmSrq s = c instanceof FfmPd pd ? pd.srqAt(address) : null;
            if (s != null) {
                return s;
            }
        }
        return null;
    }

    synchronized void forget(AutoCloseable child) {
        children.remove(child);
    }

    private void checkOpen() throws RdmaException {
        if (!open) {
            throw new RdmaException("device " + name + " is closed");
        }
    }

    /** The device's name as rdma-core lists it. */
    public String name() {
        return name;
    }

    /** {@code max_mr_size}: the longest region the device registers. */
    public long maxMrSize() {
        return maxMrSize;
    }

    /** Closes what was made on the device, then the device ({@code ibv_close_device}). */
    @Override
    public void close() {
        List<AutoCloseable> left;
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            left = new ArrayList<>(children);
            children.clear();
        }
        for (int i = left.size() - 1; i >= 0; i--) {
            try {
                left.get(i).close();
            } catch (Exception e) {
                LOG.warn("closing {} with device {}: {}", left.get(i), name, e.toString());
            }
        }
        if (!owned) {
            return;
        }
        try {
            int rc = (int) Ibv.CLOSE_DEVICE.invokeExact(ctx);
            if (rc != 0) {
                LOG.warn("ibv_close_device({}) failed with {}", name, Ibv.describe(rc));
            }
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_close_device", t);
        }
    }

    @Override
    public String toString() {
        return "FfmContext{" + name + "}";
    }

    static String hex(MemorySegment s) {
        return "0x" + Long.toHexString(s.address());
    }
}
