package org.jwarp.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The data path allocates nothing per operation: Send into a posted receive (RFC 5040 §5.3), RDMA
 * Write (§5.1) and RDMA Read (§5.2) round trips over one warmed connection, counted with
 * {@link com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes()}. One thread posts and
 * polls both ends (so its counter covers every post, poll, spin and re-post of both queue pairs),
 * waiting for completions by {@link CompletionQueue#spin} and by a {@link CompletionQueue#poll}
 * loop on alternate operations, or (event mode) by {@link CompletionQueue#await}, which on DiSNI
 * blocks on the CQ's completion channel when the completion is not there yet. The guest runs it with C1 only ({@code -XX:TieredStopAtLevel=1}),
 * so no escape analysis hides a short-lived object: the bound is exactly 0 bytes.
 *
 * <p>Every post re-posts the shape of the one before it in the same queue (the same reused request,
 * region and offset; a Send's length alternates between {@link #SIZE} and half of it), so the
 * re-post path is the one measured. A subclass may ask for single-consumer CQs and QPs
 * ({@link Device#createCompletionQueue(int, CompletionChannel, boolean)},
 * {@link QueuePairConfig#withSingleConsumer}): the one thread that posts and polls keeps their
 * contract, and on DiSNI no monitor is taken.
 *
 * <p>A subclass names the {@link DeviceUnderTest}; a missing device fails the suite.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
public abstract class ZeroAllocationTest extends DeviceSuite {
    /** Round trips of each kind before counting: the loops get compiled, every lazy structure exists. */
    static final int WARM_UP = 2_000;
    /** Round trips of each kind counted. */
    static final int MEASURED = 1_000;
    static final int SIZE = 64;
    static final int REGION = 64 << 10;
    static final long SPIN_POLLS = 1 << 16;
    /** An operation gives up after this long (no completion: a lost WR, not an allocation). */
    static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Device cdev;
    private Device sdev;
    private ProtectionDomain cpd;
    private ProtectionDomain spd;
    private CompletionQueue ccq;
    private CompletionQueue scq;
    private MemoryRegion cmr;
    private MemoryRegion smr;
    private Connection cc;
    private Connection sc;
    private QueuePair cqp;
    private QueuePair sqp;
    private final SendRequest wr = new SendRequest();
    private final WorkCompletion[] wcs = new WorkCompletion[8];
    private long seq;
    private boolean bySpin;
    /** Wait by {@link CompletionQueue#await} instead (event mode). */
    private boolean byAwait;
    private boolean receivesPosted;
    /** Target of the instrument's self-check allocation. */
    static volatile Object sink;

    /** CQs and QPs made single-consumer. */
    private final boolean singleConsumer;

    protected ZeroAllocationTest(DeviceUnderTest device) {
        this(device, false);
    }

    protected ZeroAllocationTest(DeviceUnderTest device, boolean singleConsumer) {
        super(device);
        this.singleConsumer = singleConsumer;
    }

    @BeforeAll
    void connect() throws Exception {
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        EnumSet<Access> all = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        sdev = provider.open(bindAddress());
        spd = sdev.allocateProtectionDomain();
        scq = sdev.createCompletionQueue(64, null, singleConsumer);
        smr = spd.register(ByteBuffer.allocateDirect(REGION), all);
        cdev = provider.open(bindAddress());
        cpd = cdev.allocateProtectionDomain();
        ccq = cdev.createCompletionQueue(64, null, singleConsumer);
        cmr = cpd.register(ByteBuffer.allocateDirect(REGION), all);
        InetSocketAddress at = new InetSocketAddress(bindAddress(), nextPort());
        Duration setup = Duration.ofSeconds(30);
        try (Listener l = sdev.connectionManager().listen(at, 4)) {
            CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                try {
                    return l.next(setup).accept(QueuePairConfig.of(spd, scq, 16).withSingleConsumer(singleConsumer),
                            ConnectionParameters.builder().build());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            cc = cdev.connectionManager().connect(l.localAddress(), QueuePairConfig.of(cpd, ccq, 16)
                    .withSingleConsumer(singleConsumer),
                    ConnectionParameters.builder().build(), setup);
            sc = acc.get(60, TimeUnit.SECONDS);
        }
        cqp = cc.queuePair();
        sqp = sc.queuePair();
        System.out.println(getClass().getSimpleName() + ": " + cc.info());
        if (singleConsumer) { // the DiSNI and ffm providers exploit the mode (soft would keep its thread-safe queues)
            assertTrue(ccq.singleConsumer() && scq.singleConsumer() && cqp.singleConsumer() && sqp.singleConsumer(),
                    "single-consumer CQs and QPs");
        }
    }

    @AfterAll
    void disconnect() {
        for (AutoCloseable c : new AutoCloseable[] {cc, sc, cmr, smr, ccq, scq, cpd, spd, cdev, sdev}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    System.out.println("close: " + e);
                }
            }
        }
    }

    /** Waits for one completion of {@code op} on {@code cq} (spin or poll loop, alternating), checks it. */
    private void expect(CompletionQueue cq, WcOpcode op) {
        long start = 0;
        while (true) {
            int n;
            if (byAwait) {
                try {
                    n = cq.await(wcs, 1, STALL_NANOS, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while awaiting " + op, e);
                }
            } else {
                n = bySpin ? cq.spin(wcs, 1, SPIN_POLLS, 0) : cq.poll(wcs, 1);
            }
            if (n == 1) {
                WorkCompletion wc = wcs[0];
                if (!wc.isSuccess() || wc.opcode != op) {
                    fail("expected a successful " + op + ", got " + wc);
                }
                return;
            }
            if (start == 0) {
                start = System.nanoTime();
            } else if (System.nanoTime() - start > STALL_NANOS) {
                fail("no " + op + " completion within 30 s");
            }
        }
    }

    /** One Send into a posted receive, both completions reaped, the receive re-posted. */
    private void sendRoundTrip() throws WorkRequestException {
        cqp.postSend(wr.send(++seq, cmr, 0, (seq & 1) == 0 ? SIZE : SIZE / 2)); // a re-post with another length
        expect(ccq, WcOpcode.SEND);
        expect(scq, WcOpcode.RECV);
        sqp.postRecv(seq, smr, 0, SIZE);
        bySpin = !bySpin;
    }

    private void writeRoundTrip() throws WorkRequestException {
        wr.write(++seq, cmr, 0, SIZE, smr.address() + 4096, smr.rkey());
        wr.signaled = true;
        cqp.postSend(wr);
        expect(ccq, WcOpcode.RDMA_WRITE);
        bySpin = !bySpin;
    }

    private void readRoundTrip() throws WorkRequestException {
        cqp.postSend(wr.read(++seq, cmr, 8192, SIZE, smr.address() + 8192, smr.rkey()));
        expect(ccq, WcOpcode.RDMA_READ);
        bySpin = !bySpin;
    }

    private interface Op {
        void run() throws WorkRequestException;
    }

    /** Bytes this thread allocated over {@code MEASURED} round trips of {@code op}, after {@code WARM_UP}. */
    private long allocatedBy(Op op) throws WorkRequestException {
        for (int i = 0; i < WARM_UP; i++) {
            op.run();
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < MEASURED; i++) {
            op.run();
        }
        return threads.getCurrentThreadAllocatedBytes() - before;
    }

    /** The instrument reads 0 with nothing in between, and sees a 1 KiB array: a 0 below means something. */
    @BeforeAll
    void instrumentWorks() {
        assertTrue(threads.isThreadAllocatedMemorySupported(), "the JVM counts allocated bytes per thread");
        threads.setThreadAllocatedMemoryEnabled(true);
        long idle = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long a = threads.getCurrentThreadAllocatedBytes();
            idle = Math.min(idle, threads.getCurrentThreadAllocatedBytes() - a);
        }
        assertEquals(0, idle, "two reads of the counter in a row");
        long a = threads.getCurrentThreadAllocatedBytes();
        sink = new byte[1024];
        long seen = threads.getCurrentThreadAllocatedBytes() - a;
        assertTrue(seen >= 1024, "a 1 KiB array counted as " + seen + " bytes");
    }

    @Test
    @DisplayName("Send round trips allocate nothing once warm (RFC 5040 §5.3)")
    void sendRoundTripsAllocateNothing_5040_5_3() throws Exception {
        postReceives();
        long bytes = allocatedBy(this::sendRoundTrip);
        assertEquals(0, bytes, "bytes allocated by " + MEASURED + " Send round trips (post, spin/poll, re-post)");
    }

    /** Eight receives for the Send cases, once (each round trip re-posts the one it consumed). */
    private void postReceives() throws WorkRequestException {
        if (!receivesPosted) {
            for (int i = 0; i < 8; i++) {
                sqp.postRecv(1_000_000 + i, smr, 0, SIZE);
            }
            receivesPosted = true;
        }
    }

    @Test
    @DisplayName("Send round trips waited for by await (event mode) allocate nothing once warm (RFC 5040 §5.3)")
    void sendRoundTripsByAwaitAllocateNothing_5040_5_3() throws Exception {
        postReceives();
        byAwait = true;
        try {
            long bytes = allocatedBy(this::sendRoundTrip);
            assertEquals(0, bytes, "bytes allocated by " + MEASURED + " Send round trips (post, await, re-post)");
        } finally {
            byAwait = false;
        }
    }

    @Test
    @DisplayName("RDMA Write round trips allocate nothing once warm (RFC 5040 §5.1)")
    void writeRoundTripsAllocateNothing_5040_5_1() throws Exception {
        long bytes = allocatedBy(this::writeRoundTrip);
        assertEquals(0, bytes, "bytes allocated by " + MEASURED + " RDMA Write round trips (post, spin/poll)");
    }

    @Test
    @DisplayName("RDMA Read round trips allocate nothing once warm (RFC 5040 §5.2)")
    void readRoundTripsAllocateNothing_5040_5_2() throws Exception {
        long bytes = allocatedBy(this::readRoundTrip);
        assertEquals(0, bytes, "bytes allocated by " + MEASURED + " RDMA Read round trips (post, spin/poll)");
    }
}
