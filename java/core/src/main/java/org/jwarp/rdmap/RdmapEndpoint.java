package org.jwarp.rdmap;

import java.nio.ByteBuffer;

import org.jwarp.ddp.DdpReceiver;
import org.jwarp.ddp.DdpSegmenter;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;
import org.jwarp.mpa.FpduDecoder;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.mpa.FpduSink;
import org.jwarp.mpa.PlacementHandle;

/**
 * One RDMAP stream over MPA/TCP, RFC 5040 (RDMAP) on RFC 5041 (DDP) on RFC 5044 (MPA FPDUs),
 * as a sans-I/O engine: the transport feeds received TCP bytes to {@link #receive(ByteBuffer)}
 * and drains outgoing FPDU bytes with {@link #transmit(ByteBuffer)}; completions and errors
 * arrive through an {@link RdmapListener}. Created after MPA negotiation, when the first byte of
 * the FPDU stream is next in both directions.
 *
 * <p>Split by concern: this class holds the stream state and the public surface; outbound
 * messages from the send ring ({@link SendTransmitter}, RFC 5040 §5.1–§5.3), Read Responses
 * ({@link ReadResponder}, §5.2), the receive side ({@link InboundDispatch}, RFC 5041 §7.1) and
 * the Terminate ({@link StreamTerminator}, RFC 5040 §7) and the order they take on the wire
 * ({@link TransmitOrder}, RFC 5041 §5.2) live in their own classes. Send work
 * requests live in one ring, a {@link SendRing}: the queue pair's own (the soft provider's send
 * queue), or, for the constructors without one, an internal ring fed by {@link #postSend},
 * {@link #postWrite} and {@link #postRead}.
 *
 * <p>Wire behaviour follows Linux siw: Send on QN 0, Read Request on QN 1, Terminate on QN 2 with
 * MSN 1 and MO 0; transmit MSNs start at 1 and are shared by all segments of a message; a non-last
 * FPDU fills the MULPDU exactly (RFC 5041 §5.2); control words 0xC140 (Write), 0x4143 (Send),
 * 0x4141 (Read Request), 0xC142 (Read Response), 0x4147 (Terminate) on the last segment.
 *
 * <p>Inbound RDMA Read Requests beyond the IRD are answered with TERM 0/2/7 (what siw does);
 * outbound Read Requests beyond the ORD wait in the send ring until a Read Response completes.
 * After the first error (local or peer) inbound data is dropped; a local error queues exactly one
 * more outgoing message, the Terminate (RFC 5041 §7.1). Send-queue completions are reported in
 * posting order.
 *
 * <p>Hot paths allocate nothing. Not thread-safe: one thread (the provider's I/O loop) calls every
 * method; STag revocation from other threads goes through {@link StagTable} and takes effect for
 * every later segment.
 */
public final class RdmapEndpoint {

    /** Stream state, after RFC 5040 §6 / the verbs QP states. */
    public enum State {
        /** Data transfer. */
        RTS,
        /** A local error was found; the Terminate message is still to be transmitted. */
        TERMINATE,
        /** Dead: Terminate sent or received. Only {@link #flush()} remains useful. */
        ERROR
    }

    /** Payload bytes from which a segment is referenced rather than copied by a gathering transmit. */
    public static final int GATHER_MIN = 1024;

    final RdmapSettings settings;
    final StagDomain pd;
    final StagTable stags;
    final RdmapListener listener;
    final DdpReceiver ddp;
    private final FpduDecoder decoder;
    private final FpduEncoder encoder;
    /** The internal ring, or null when the queue pair's ring is used. */
    private final ArraySendRing own;
    private final SendRing ring;
    final SendTransmitter out;
    final ReadResponder irq;
    final StreamTerminator term;

    private State state = State.RTS;
    boolean firstFpdu = true;
    /** The segment being received, quoted by a Terminate (null outside a receive upcall). */
    ByteBuffer curSeg;
    int curIdx;
    int curLen;

    /**
     * @param settings negotiated MULPDU, CRC, markers, IRD, ORD and queue depths
     * @param pd       the protection domain of this stream's QP (RFC 5041 §8.2)
     * @param stags    the STag table of the device; STags of other PDs are rejected
     * @param listener completions and errors
     */
    public RdmapEndpoint(RdmapSettings settings, StagDomain pd, StagTable stags, RdmapListener listener) {
        this(settings, pd, stags, listener, 1);
    }

    /**
     * As above, with Sends and Writes gathered from, and receive buffers scattered into, up to
     * {@code maxSge} pieces each, posted through this endpoint's own send ring.
     */
    public RdmapEndpoint(RdmapSettings settings, StagDomain pd, StagTable stags, RdmapListener listener, int maxSge) {
        this(settings, pd, stags, listener, maxSge, null);
    }

    /**
     * As above, transmitting the work requests of {@code ring} (the queue pair's send queue, the one
     * owner of its WRs and of the ORD count), or of an internal ring when {@code ring} is null.
     */
    public RdmapEndpoint(RdmapSettings settings, StagDomain pd, StagTable stags, RdmapListener listener, int maxSge,
            SendRing ring) {
        if (maxSge < 1) {
            throw new IllegalArgumentException("maxSge " + maxSge + " < 1");
        }
        this.settings = settings;
        this.pd = pd;
        this.stags = stags;
        this.listener = listener;
        this.own = ring == null ? new ArraySendRing(listener, settings.sqDepth(), maxSge, settings.ord()) : null;
        this.ring = ring == null ? own : ring;
        InboundDispatch inbound = new InboundDispatch(this);
        this.decoder = new FpduDecoder(settings.crc(), settings.markers(), inbound);
        this.encoder = new FpduEncoder(settings.crc(), settings.markers());
        int maxTagged = DdpSegmenter.maxPayload(true, settings.mulpdu());
        this.out = new SendTransmitter(this, this.ring, encoder, maxTagged, DdpSegmenter.maxPayload(false,
                settings.mulpdu()), settings.ord(), maxSge);
        this.irq = new ReadResponder(this, encoder, maxTagged, settings.ird());
        this.term = new StreamTerminator(this, encoder);
        int readSlots = Math.max(1, settings.ird());
        // scatter lists only on the Send queue: a Read Request slot (one per IRD) or the TERM slot is one piece
        this.ddp = new DdpReceiver(pd, stags, new int[] {settings.rqDepth(), readSlots, 1}, inbound,
                DdpReceiver.DEFAULT_OUT_OF_ORDER_RANGES, new int[] {maxSge, 1, 1});
        irq.postRequestSlots();
        ByteBuffer termRx = ByteBuffer.allocateDirect(TerminateCodec.MAX_PAYLOAD_LENGTH);
        ddp.postUntagged(RdmapOpcode.QN_TERMINATE, termRx, 0, termRx.capacity(), 0); // the peer's Terminate, QN 2
    }

    public RdmapSettings settings() {
        return settings;
    }

    public State state() {
        return state;
    }

    /** Moves to {@code next} (the terminator and the inbound side do; the state is read through {@link #state()}). */
    void enter(State next) {
        state = next;
    }

    /** The error this side reported, or null. */
    public TermCode localError() {
        return term.code;
    }

    /** Bytes an FPDU of a full MULPDU takes on the wire: the smallest useful {@code transmit} buffer. */
    public int maxFpduWireLength() {
        return encoder.wireLength(settings.mulpdu());
    }

    /** Send-queue work requests taken or posted and not yet completed (diagnostics). */
    public int sqOutstanding() {
        return ring.outstanding();
    }

    /** Receive buffers posted and not yet consumed. */
    public int rqPosted() {
        return ddp.postedCount(RdmapOpcode.QN_SEND);
    }

    /** Outbound RDMA Read Requests on the wire awaiting their response (≤ ORD, the Read RTR included). */
    public int readsOutstanding() {
        return out.readsOutstanding();
    }

    /** Inbound RDMA Read Requests not yet fully answered (≤ IRD). */
    public int readResponsesPending() {
        return irq.pending();
    }

    /** True when part of an inbound FPDU is buffered, waiting for the rest (RFC 5044 §4: FPDU framing). */
    public boolean hasPartialInput() {
        return decoder.hasPartial();
    }

    /** Bytes of FPDU reassembly memory the receive side holds (see {@link FpduDecoder}). */
    public int reassemblyBytes() {
        return decoder.reassemblyBytes();
    }

    /** Whole inbound FPDUs decoded so far (progress measure for stall detection). */
    public long fpdusReceived() {
        return decoder.fpduCount();
    }

    /** True when {@link #transmit} has something to write. */
    public boolean hasPendingOutput() {
        return TransmitOrder.pending(this);
    }

    // ---------------------------------------------------------------- posting (RFC 5040 §5)

    /** Posts a receive buffer for one inbound Send message (RFC 5040 §5.3, DDP untagged QN 0). */
    public void postReceive(long wrId, ByteBuffer buffer, int offset, int capacity) {
        postReceive(wrId, null, buffer, offset, capacity);
    }

    /**
     * As {@link #postReceive(long, ByteBuffer, int, int)}, the buffer lying in the registered
     * {@code region} (null: unfenced): once the region is revoked nothing lands in the buffer
     * (RFC 5041 §8.3.1 (6)); a Send arriving for it completes it through
     * {@link RdmapListener#onReceiveRevoked} and terminates the stream (DDP 0/0).
     */
    public void postReceive(long wrId, StagRegion region, ByteBuffer buffer, int offset, int capacity) {
        requireReceiveSlot();
        ddp.postUntagged(RdmapOpcode.QN_SEND, region, buffer, offset, capacity, wrId);
    }

    /**
     * Posts a receive buffer made of {@code n} pieces {@code buffers[i][offsets[i], +lengths[i])},
     * filled in order (a scatter list of at most the constructor's {@code maxSge} pieces); the
     * arrays are copied.
     */
    public void postReceive(long wrId, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n) {
        postReceive(wrId, null, buffers, offsets, lengths, n);
    }

    /** As above, piece i lying in the registered {@code regions[i]} (a null array or entry: unfenced). */
    public void postReceive(long wrId, StagRegion[] regions, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n) {
        requireReceiveSlot();
        ddp.postUntagged(RdmapOpcode.QN_SEND, regions, buffers, offsets, lengths, n, wrId);
    }

    /**
     * Posts a Send message gathered from {@code n} pieces {@code buffers[i][offsets[i], +lengths[i])}
     * (at most the constructor's {@code maxSge}) into the internal ring; the arrays are copied, the
     * bytes are read when {@link #transmit} segments them.
     */
    public void postSend(long wrId, int opcode, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n,
            int invalidateStag, boolean signaled) {
        ownRing().postSend(wrId, opcode, buffers, offsets, lengths, n, invalidateStag, signaled);
    }

    /** Posts an RDMA Write gathered from {@code n} pieces, as {@link #postSend(long, int, ByteBuffer[], int[], int[], int, int, boolean)}. */
    public void postWrite(long wrId, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n, int remoteStag,
            long remoteTo, boolean signaled) {
        ownRing().postWrite(wrId, buffers, offsets, lengths, n, remoteStag, remoteTo, signaled);
    }

    /**
     * Posts a Send message of {@code length} bytes from {@code src[offset..]} (RFC 5040 §5.3).
     * {@code opcode} is {@link RdmapOpcode#SEND}, {@code SEND_SE}, {@code SEND_INVALIDATE} or
     * {@code SEND_SE_INVALIDATE}; {@code invalidateStag} is carried for the invalidate variants.
     * The bytes are read when {@link #transmit} segments them; keep them stable until completion.
     */
    public void postSend(long wrId, int opcode, ByteBuffer src, int offset, int length, int invalidateStag,
            boolean signaled) {
        ownRing().postSend(wrId, opcode, src, offset, length, invalidateStag, signaled);
    }

    /** Posts an RDMA Write of {@code length} bytes to the peer's {@code remoteStag} at {@code remoteTo} (RFC 5040 §5.1). */
    public void postWrite(long wrId, ByteBuffer src, int offset, int length, int remoteStag, long remoteTo,
            boolean signaled) {
        ownRing().postWrite(wrId, src, offset, length, remoteStag, remoteTo, signaled);
    }

    /**
     * Posts an RDMA Read (RFC 5040 §5.2): {@code length} bytes from the peer's {@code remoteStag} at
     * {@code remoteTo} into the local region {@code localStag} at {@code localTo}, which must be
     * registered in this PD with {@link StagAccess#LOCAL_WRITE}. Waits in the ring while ORD Reads are out.
     */
    public void postRead(long wrId, int localStag, long localTo, int length, int remoteStag, long remoteTo,
            boolean signaled) {
        ArraySendRing r = ownRing();
        r.checkRead(localStag, localTo, length, settings.ord(), stags, pd);
        r.postRead(wrId, localStag, localTo, length, remoteStag, remoteTo, signaled);
    }

    /** Queues siw's Write RTR (RFC 6581 §5): a zero-length RDMA Write to sink STag 1, TO 0, completing nothing. */
    public void postWriteRtr() {
        requireUsable();
        out.postRtr(SendRing.WRITE);
    }

    /**
     * Queues siw's Read RTR (RFC 6581 §5): a zero-length Read Request with sink STag 0, source STag 1,
     * size 0; it takes the one Read slot until its empty Read Response arrives (ring Reads wait
     * meanwhile), even when the negotiated ORD is 0 (the responder then raised its IRD to 1 for it,
     * RFC 6581 §9.1).
     */
    public void postReadRtr() {
        requireUsable();
        out.postRtr(SendRing.READ);
    }

    /** Queues the Send RTR (RFC 6581 §5): a zero-length Send with the next MSN, completing nothing. */
    public void postSendRtr() {
        requireUsable();
        out.postRtr(SendRing.SEND);
    }

    /**
     * Names this stream for RFC 5041 §8.2 DDP Stream association: regions bound to {@code key}
     * ({@link StagRegion#bindStream}) accept remote Writes and Reads on this stream only; a region
     * bound to another key is "not associated" (DDP 1/2 for a Write, RDMAP 0/2 for a Read source).
     */
    public void streamKey(Object key) {
        ddp.streamKey(key);
    }

    /** Aborts the stream with {@code code}: a Terminate is queued as the last outgoing message. */
    public void terminate(TermCode code, String reason) {
        term.raise(code, reason, false);
    }

    /**
     * After the stream died: abandons the send ring (the internal ring reports every uncompleted
     * WR through {@link RdmapListener#onFlushed}; a queue pair's ring flushes itself), reports every
     * unconsumed receive buffer the same way and empties the queues.
     */
    public void flush() {
        if (state == State.RTS) {
            throw new IllegalStateException("flush() only after the stream terminated");
        }
        ring.abandon();
        out.reset();
        irq.reset();
        int n = ddp.postedCount(RdmapOpcode.QN_SEND);
        long[] cookies = new long[n];
        ddp.pendingCookies(RdmapOpcode.QN_SEND, cookies);
        for (long c : cookies) {
            listener.onFlushed(c, true);
        }
    }

    private void requireUsable() {
        if (state != State.RTS) {
            throw new IllegalStateException("RDMAP stream is in state " + state + "; post after flush is refused");
        }
    }

    private void requireReceiveSlot() {
        requireUsable();
        if (ddp.freeSlots(RdmapOpcode.QN_SEND) == 0) {
            throw new IllegalStateException("receive queue full (" + settings.rqDepth() + ")");
        }
    }

    private ArraySendRing ownRing() {
        requireUsable();
        if (own == null) {
            throw new IllegalStateException("this endpoint transmits its queue pair's send ring: post there");
        }
        return own;
    }

    // ---------------------------------------------------------------- receive and transmit

    /**
     * The stream reader's handle on direct placement: when the next stream bytes are payload of a
     * large segment whose header was validated (RFC 5041 §7.1), it lends a view of where they go in
     * registered memory (see {@link PlacementHandle}); nothing once the stream left RTS (the
     * inbound side and DDP lend no view then). The same handle for the endpoint's life.
     */
    public PlacementHandle placement() {
        return decoder;
    }

    /** Consumes all remaining bytes of {@code src} (TCP payload in stream order). */
    public void receive(ByteBuffer src) {
        if (state != State.RTS) {
            src.position(src.limit());
            return;
        }
        decoder.feed(src);
    }

    /**
     * Writes whole FPDUs into {@code dst} from its position while they fit and work is pending;
     * returns the bytes written. Give it at least {@link #maxFpduWireLength()} bytes of room.
     */
    public int transmit(ByteBuffer dst) {
        return transmit(dst, null);
    }

    /**
     * As {@link #transmit(ByteBuffer)}, but a Send, Write or Read Response segment of at least
     * {@link #GATHER_MIN} payload bytes lying in one gather piece is not copied: its header, pad
     * and CRC go into {@code dst} and its payload is referenced through {@code sink} (zero-copy
     * transmit; the stream bytes are the same). The referenced memory must stay unchanged until
     * the sink has written it, so a WR's completion (reported to the ring as soon as its last
     * segment is staged) is the caller's to hold back until then. A null sink, or markers on,
     * copies as before.
     */
    public int transmit(ByteBuffer dst, FpduSink sink) {
        return TransmitOrder.transmit(this, dst, encoder.markersEnabled() ? null : sink);
    }
}
