package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import java.nio.ByteBuffer;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.ddp.DdpReceiveHandler;
import org.jwarp.ddp.DdpReceiver;
import org.jwarp.ddp.DdpSegmenter;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.mpa.FpduDecoder;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.mpa.FpduHandler;
import org.jwarp.mpa.FpduSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RDMAP stream over MPA/TCP, RFC 5040 (RDMAP) on RFC 5041 (DDP) on RFC 5044 (MPA FPDUs),
 * as a sans-I/O engine: the transport feeds received TCP bytes to {@link #receive(ByteBuffer)}
 * and drains outgoing FPDU bytes with {@link #transmit(ByteBuffer)}; completions and errors
 * arrive through an {@link RdmapListener}. Created after MPA negotiation, when the first byte of
 * the FPDU stream is next in both directions.
 *
 * <p>Wire behaviour follows Linux siw: Send on QN 0, Read Request on QN 1, Terminate on QN 2 with
 * MSN 1 and MO 0; transmit MSNs start at 1 and are shared by all segments of a message; a non-last
 * FPDU fills the MULPDU exactly (RFC 5041 §5.2); control words 0xC140 (Write), 0x4143 (Send),
 * 0x4141 (Read Request), 0xC142 (Read Response), 0x4147 (Terminate) on the last segment.
 *
 * <p>Inbound RDMA Read Requests beyond the IRD are answered with TERM 0/2/7 (what siw does);
 * outbound Read Requests beyond the ORD wait on the send queue until a Read Response completes.
 * After the first error (local or peer) inbound data is dropped; a local error queues exactly one
 * more outgoing message, the Terminate (RFC 5041 §7.1). Send-queue completions are reported in
 * posting order.
 *
 * <p>Hot paths allocate nothing. Not thread-safe: one thread (the provider's I/O loop) calls every
 * method; STag revocation from other threads goes through {@link StagTable} and takes effect for
 * every later segment.
 */
public final class RdmapEndpoint {
    private static final Logger LOG = LoggerFactory.getLogger(RdmapEndpoint.class);

    /** Stream state, after RFC 5040 §6 / the verbs QP states. */
    public enum State {
        /** Data transfer. */
        RTS,
        /** A local error was found; the Terminate message is still to be transmitted. */
        TERMINATE,
        /** Dead: Terminate sent or received. Only {@link #flush()} remains useful. */
        ERROR
    }

    private static final int KIND_SEND = 0;
    private static final int KIND_WRITE = 1;
    private static final int KIND_READ = 2;
    private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);
    /** wrId of the internal zero-length RTR work requests (never reported). */
    public static final long RTR_WR_ID = Long.MIN_VALUE;

    private final RdmapSettings settings;
    private final StagDomain pd;
    private final StagTable stags;
    private final RdmapListener listener;
    private final FpduDecoder decoder;
    private final FpduEncoder encoder;
    private final DdpReceiver ddp;
    private final DdpHeader txHdr = new DdpHeader();
    private final DdpHeader rxHdr = new DdpHeader();
    private final int maxTagged;
    private final int maxUntagged;
    private final Inbound inbound = new Inbound();

    // Send queue: a ring of preallocated entries, struct-of-arrays.
    private final int sqDepth;
    private final int sqMask;
    private final int[] sqKind;
    private final int[] sqOpcode;
    private final long[] sqWrId;
    /** Gather lists: entry s's pieces at {@code s * maxSge}, {@code sqSgCount[s]} of them. */
    private final int maxSge;
    private final ByteBuffer[] sgBuf;
    private final int[] sgOff;
    private final int[] sgLen;
    private final int[] sqSgCount;
    private final int[] sqLen;
    private final int[] sqStag;
    private final long[] sqTo;
    private final int[] sqLocalStag;
    private final long[] sqLocalTo;
    private final boolean[] sqSignaled;
    private final boolean[] sqDone;
    private final int[] sqProgress;
    private final int[] sqMsn;
    private int sqHead;
    private int sqNext;
    private int sqTail;

    // Outbound reads awaiting their Read Response (SQ sequence numbers), at most ORD.
    private final int[] orq;
    private int orqHead;
    private int orqCount;

    // Inbound Read Requests being answered, at most IRD.
    private final int irqDepth;
    private final int[] irqSinkStag;
    private final long[] irqSinkTo;
    private final int[] irqSize;
    private final StagRegion[] irqSource;
    private final long[] irqSourceTo;
    private final int[] irqProgress;
    private int irqHead;
    private int irqCount;

    private int txSendMsn;
    private int txReadMsn;

    private final ByteBuffer readReqBufs;
    private final ByteBuffer termRxBuf;

    private State state = State.RTS;
    private boolean firstFpdu = true;
    private final ByteBuffer termHeaders = ByteBuffer.allocateDirect(TerminateCodec.MAX_PAYLOAD_LENGTH);
    private TermCode termCode;
    private int termSegLen;
    private int termDdpLen;
    private int termRdmaLen;
    private boolean termSegLenValid;

    /** Payload bytes from which a segment is referenced rather than copied by a gathering transmit. */
    public static final int GATHER_MIN = 1024;
    private FpduSink txSink;

    private ByteBuffer curSeg;
    private int curIdx;
    private int curLen;

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
     * {@code maxSge} pieces each.
     */
    public RdmapEndpoint(RdmapSettings settings, StagDomain pd, StagTable stags, RdmapListener listener, int maxSge) {
        if (maxSge < 1) {
            throw new IllegalArgumentException("maxSge " + maxSge + " < 1");
        }
        this.maxSge = maxSge;
        this.settings = settings;
        this.pd = pd;
        this.stags = stags;
        this.listener = listener;
        this.decoder = new FpduDecoder(settings.crc(), settings.markers(), inbound);
        this.encoder = new FpduEncoder(settings.crc(), settings.markers());
        this.maxTagged = DdpSegmenter.maxPayload(true, settings.mulpdu());
        this.maxUntagged = DdpSegmenter.maxPayload(false, settings.mulpdu());
        int readSlots = Math.max(1, settings.ird());
        this.ddp = new DdpReceiver(pd, stags, new int[] {settings.rqDepth(), readSlots, 1}, inbound,
                DdpReceiver.DEFAULT_OUT_OF_ORDER_RANGES, maxSge);
        this.readReqBufs = ByteBuffer.allocateDirect(readSlots * ReadRequestHeader.LENGTH);
        for (int i = 0; i < readSlots; i++) {
            ddp.postUntagged(RdmapOpcode.QN_READ_REQUEST, readReqBufs, i * ReadRequestHeader.LENGTH,
                    ReadRequestHeader.LENGTH, i);
        }
        this.termRxBuf = ByteBuffer.allocateDirect(TerminateCodec.MAX_PAYLOAD_LENGTH);
        ddp.postUntagged(RdmapOpcode.QN_TERMINATE, termRxBuf, 0, termRxBuf.capacity(), 0);

        sqDepth = settings.sqDepth();
        int cap = Integer.highestOneBit(Math.max(1, sqDepth - 1)) << 1;
        sqMask = cap - 1;
        sqKind = new int[cap];
        sqOpcode = new int[cap];
        sqWrId = new long[cap];
        sgBuf = new ByteBuffer[Math.multiplyExact(cap, maxSge)];
        sgOff = new int[sgBuf.length];
        sgLen = new int[sgBuf.length];
        sqSgCount = new int[cap];
        sqLen = new int[cap];
        sqStag = new int[cap];
        sqTo = new long[cap];
        sqLocalStag = new int[cap];
        sqLocalTo = new long[cap];
        sqSignaled = new boolean[cap];
        sqDone = new boolean[cap];
        sqProgress = new int[cap];
        sqMsn = new int[cap];
        orq = new int[Math.max(1, settings.ord())];
        irqDepth = Math.max(1, settings.ird());
        irqSinkStag = new int[irqDepth];
        irqSinkTo = new long[irqDepth];
        irqSize = new int[irqDepth];
        irqSource = new StagRegion[irqDepth];
        irqSourceTo = new long[irqDepth];
        irqProgress = new int[irqDepth];
    }

    public RdmapSettings settings() {
        return settings;
    }

    public State state() {
        return state;
    }

    /** The error this side reported, or null. */
    public TermCode localError() {
        return termCode;
    }

    /** Bytes an FPDU of a full MULPDU takes on the wire: the smallest useful {@code transmit} buffer. */
    public int maxFpduWireLength() {
        return encoder.wireLength(settings.mulpdu());
    }

    /** Send-queue work requests posted and not yet completed. */
    public int sqOutstanding() {
        return sqTail - sqHead;
    }

    /** Receive buffers posted and not yet consumed. */
    public int rqPosted() {
        return ddp.postedCount(RdmapOpcode.QN_SEND);
    }

    /** Outbound RDMA Read Requests awaiting their response (≤ ORD). */
    public int readsOutstanding() {
        return orqCount;
    }

    /** Inbound RDMA Read Requests not yet fully answered (≤ IRD). */
    public int readResponsesPending() {
        return irqCount;
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
        if (state == State.TERMINATE) {
            return true;
        }
        if (state != State.RTS) {
            return false;
        }
        if (irqCount > 0 && !sqMessageBegun()) {
            return true;
        }
        if (sqNext == sqTail) {
            return false;
        }
        int s = sqNext & sqMask;
        return sqKind[s] != KIND_READ || orqCount < readLimit(s);
    }

    /**
     * Read Requests that may be outstanding when entry {@code s} goes out: the ORD, except that the
     * Read RTR always has one slot, since a responder raises its IRD to 1 for it even when the
     * initiator's ORD is 0 (RFC 6581 §9.1).
     */
    private int readLimit(int s) {
        return sqWrId[s] == RTR_WR_ID ? Math.max(1, settings.ord()) : settings.ord();
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
        requireUsable();
        if (ddp.freeSlots(RdmapOpcode.QN_SEND) == 0) {
            throw new IllegalStateException("receive queue full (" + settings.rqDepth() + ")");
        }
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
        requireUsable();
        if (ddp.freeSlots(RdmapOpcode.QN_SEND) == 0) {
            throw new IllegalStateException("receive queue full (" + settings.rqDepth() + ")");
        }
        ddp.postUntagged(RdmapOpcode.QN_SEND, regions, buffers, offsets, lengths, n, wrId);
    }

    /**
     * Posts a Send message gathered from {@code n} pieces {@code buffers[i][offsets[i], +lengths[i])}
     * (at most the constructor's {@code maxSge}); the arrays are copied, the bytes are read when
     * {@link #transmit} segments them.
     */
    public void postSend(long wrId, int opcode, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n,
            int invalidateStag, boolean signaled) {
        if (!RdmapOpcode.isSend(opcode)) {
            throw new IllegalArgumentException("not a Send opcode: " + opcode + " (RFC 5040 §4.3)");
        }
        int len = checkGather(buffers, offsets, lengths, n);
        int s = reserve();
        fill(s, KIND_SEND, opcode, wrId, null, 0, len, RdmapOpcode.isInvalidate(opcode) ? invalidateStag : 0,
                0, 0, 0, signaled);
        gather(s, buffers, offsets, lengths, n);
    }

    /** Posts an RDMA Write gathered from {@code n} pieces, as {@link #postSend(long, int, ByteBuffer[], int[], int[], int, int, boolean)}. */
    public void postWrite(long wrId, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n, int remoteStag,
            long remoteTo, boolean signaled) {
        int len = checkGather(buffers, offsets, lengths, n);
        int s = reserve();
        fill(s, KIND_WRITE, RdmapOpcode.WRITE, wrId, null, 0, len, remoteStag, remoteTo, 0, 0, signaled);
        gather(s, buffers, offsets, lengths, n);
    }

    private int checkGather(ByteBuffer[] buffers, int[] offsets, int[] lengths, int n) {
        if (n < 0 || n > maxSge) {
            throw new IllegalArgumentException("gather list of " + n + " pieces outside 0.." + maxSge);
        }
        long total = 0;
        for (int i = 0; i < n; i++) {
            checkRange(buffers[i], offsets[i], lengths[i]);
            total += lengths[i];
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("message of " + total + " bytes exceeds 2^31-1");
        }
        return (int) total;
    }

    private void gather(int s, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n) {
        int base = s * maxSge;
        for (int i = 0; i < n; i++) {
            sgBuf[base + i] = buffers[i];
            sgOff[base + i] = offsets[i];
            sgLen[base + i] = lengths[i];
        }
        sqSgCount[s] = n;
    }

    /** Set by {@link #pieceHolding}: the buffer index at which the found piece holds the range. */
    private int pieceIndex;

    /**
     * The gather-list entry (absolute index into {@link #sgBuf}) holding message bytes
     * [{@code from}, +{@code n}) of entry s entirely, or -1 when they span pieces; sets {@link #pieceIndex}.
     */
    private int pieceHolding(int s, int from, int n) {
        int base = s * maxSge;
        int pos = 0;
        for (int i = 0; i < sqSgCount[s]; i++) {
            int len = sgLen[base + i];
            if (from < pos + len) {
                if (from + n > pos + len) {
                    return -1;
                }
                pieceIndex = sgOff[base + i] + from - pos;
                return base + i;
            }
            pos += len;
        }
        return -1;
    }

    /** Copies {@code n} message bytes of entry s from message offset {@code from} into {@code dst} at {@code at}. */
    private void copyOut(int s, int from, ByteBuffer dst, int at, int n) {
        int base = s * maxSge;
        int c = sqSgCount[s];
        if (c == 1) {
            dst.put(at, sgBuf[base], sgOff[base] + from, n);
            return;
        }
        int pos = 0;
        for (int i = 0; i < c && n > 0; i++) {
            int len = sgLen[base + i];
            if (from < pos + len) {
                int skip = from - pos;
                int k = Math.min(n, len - skip);
                dst.put(at, sgBuf[base + i], sgOff[base + i] + skip, k);
                at += k;
                from += k;
                n -= k;
            }
            pos += len;
        }
    }

    /**
     * Posts a Send message of {@code length} bytes from {@code src[offset..]} (RFC 5040 §5.3).
     * {@code opcode} is {@link RdmapOpcode#SEND}, {@code SEND_SE}, {@code SEND_INVALIDATE} or
     * {@code SEND_SE_INVALIDATE}; {@code invalidateStag} is carried for the invalidate variants.
     * The bytes are read when {@link #transmit} segments them; keep them stable until completion.
     */
    public void postSend(long wrId, int opcode, ByteBuffer src, int offset, int length, int invalidateStag,
            boolean signaled) {
        if (!RdmapOpcode.isSend(opcode)) {
            throw new IllegalArgumentException("not a Send opcode: " + opcode + " (RFC 5040 §4.3)");
        }
        checkRange(src, offset, length);
        int s = reserve();
        fill(s, KIND_SEND, opcode, wrId, src, offset, length, RdmapOpcode.isInvalidate(opcode) ? invalidateStag : 0,
                0, 0, 0, signaled);
    }

    /** Posts an RDMA Write of {@code length} bytes to the peer's {@code remoteStag} at {@code remoteTo} (RFC 5040 §5.1). */
    public void postWrite(long wrId, ByteBuffer src, int offset, int length, int remoteStag, long remoteTo,
            boolean signaled) {
        checkRange(src, offset, length);
        int s = reserve();
        fill(s, KIND_WRITE, RdmapOpcode.WRITE, wrId, src, offset, length, remoteStag, remoteTo, 0, 0, signaled);
    }

    /**
     * Posts an RDMA Read (RFC 5040 §5.2): {@code length} bytes from the peer's {@code remoteStag} at
     * {@code remoteTo} into the local region {@code localStag} at {@code localTo}, which must be
     * registered in this PD with {@link StagAccess#LOCAL_WRITE}. Waits on the SQ while ORD reads are out.
     */
    public void postRead(long wrId, int localStag, long localTo, int length, int remoteStag, long remoteTo,
            boolean signaled) {
        if (length < 0) {
            throw new IllegalArgumentException("RDMA Read length must not be negative: " + length);
        }
        if (settings.ord() == 0) {
            throw new IllegalStateException("ORD is 0: no RDMA Read may be issued (RFC 5040 §5.2)");
        }
        if (length > 0) {
            int r = stags.check(localStag, pd, localTo, length, StagAccess.LOCAL_WRITE);
            if (r != StagTable.OK) {
                throw new IllegalArgumentException("RDMA Read sink STag 0x" + Integer.toHexString(localStag)
                        + " not usable for " + length + " bytes at TO 0x" + Long.toHexString(localTo) + " (check "
                        + r + ", RFC 5040 §5.2)");
            }
        }
        int s = reserve();
        fill(s, KIND_READ, RdmapOpcode.READ_REQUEST, wrId, EMPTY, 0, length, remoteStag, remoteTo, localStag, localTo,
                signaled);
    }

    /** Queues siw's Write RTR (RFC 6581 §5): a zero-length RDMA Write to sink STag 1, TO 0, unsignalled. */
    public void postWriteRtr() {
        int s = reserve();
        fill(s, KIND_WRITE, RdmapOpcode.WRITE, RTR_WR_ID, EMPTY, 0, 0, 1, 0, 0, 0, false);
    }

    /**
     * Queues siw's Read RTR (RFC 6581 §5): a zero-length Read Request with sink STag 0, source STag 1,
     * size 0, unsignalled; it takes one Read slot until its empty Read Response arrives, even when the
     * negotiated ORD is 0 (the responder then raised its IRD to 1 for it, RFC 6581 §9.1).
     */
    public void postReadRtr() {
        int s = reserve();
        fill(s, KIND_READ, RdmapOpcode.READ_REQUEST, RTR_WR_ID, EMPTY, 0, 0, 1, 0, 0, 0, false);
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
        raise(code, reason, false);
    }

    /**
     * After the stream died: reports every uncompleted send-queue work request and every unconsumed
     * receive buffer through {@link RdmapListener#onFlushed} (RTR requests excepted) and empties the
     * queues.
     */
    public void flush() {
        if (state == State.RTS) {
            throw new IllegalStateException("flush() only after the stream terminated");
        }
        for (int q = sqHead; q != sqTail; q++) {
            int s = q & sqMask;
            if (sqWrId[s] != RTR_WR_ID) {
                listener.onFlushed(sqWrId[s], false);
            }
            clearGather(s);
        }
        sqHead = sqNext = sqTail;
        orqCount = 0;
        irqCount = 0;
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

    private static void checkRange(ByteBuffer src, int offset, int length) {
        if (offset < 0 || length < 0 || offset > src.capacity() - length) {
            throw new IllegalArgumentException("source range [" + offset + ", +" + length + ") outside buffer of "
                    + src.capacity());
        }
    }

    private int reserve() {
        requireUsable();
        if (sqTail - sqHead == sqDepth) {
            throw new IllegalStateException("send queue full (" + sqDepth + ")");
        }
        return sqTail++ & sqMask;
    }

    private void fill(int s, int kind, int opcode, long wrId, ByteBuffer buf, int off, int len, int stag, long to,
            int localStag, long localTo, boolean signaled) {
        sqKind[s] = kind;
        sqOpcode[s] = opcode;
        sqWrId[s] = wrId;
        int base = s * maxSge;
        sgBuf[base] = buf;
        sgOff[base] = off;
        sgLen[base] = len;
        sqSgCount[s] = 1;
        sqLen[s] = len;
        sqStag[s] = stag;
        sqTo[s] = to;
        sqLocalStag[s] = localStag;
        sqLocalTo[s] = localTo;
        sqSignaled[s] = signaled;
        sqDone[s] = false;
        sqProgress[s] = 0;
        sqMsn[s] = 0;
    }

    // ---------------------------------------------------------------- receive

    /**
     * Reading straight into registered memory: when the next stream bytes are payload of a large
     * segment whose header was validated (RFC 5041 §7.1), a view of where they go (see
     * {@link FpduDecoder#directTarget}); read into it, then call {@link #directRead} at once.
     * Null: read the stream as usual and hand it to {@link #receive}.
     */
    public ByteBuffer directTarget() {
        return state == State.RTS ? decoder.directTarget() : null;
    }

    /** {@code n} bytes were read into the view {@link #directTarget} returned (see {@link FpduDecoder#directRead}). */
    public void directRead(int n) {
        decoder.directRead(n);
    }

    /** Pad and CRC bytes that follow the payload now being placed (0 outside one). */
    public int directTailDue() {
        return decoder.directTailDue();
    }

    /** Consumes all remaining bytes of {@code src} (TCP payload in stream order). */
    public void receive(ByteBuffer src) {
        if (state != State.RTS) {
            src.position(src.limit());
            return;
        }
        decoder.feed(src);
    }

    // ---------------------------------------------------------------- transmit

    /**
     * Writes whole FPDUs into {@code dst} from its position while they fit and work is pending;
     * returns the bytes written. Give it at least {@link #maxFpduWireLength()} bytes of room.
     */
    public int transmit(ByteBuffer dst) {
        return transmit(dst, null);
    }

    /**
     * As {@link #transmit(ByteBuffer)}, but a Send or Write segment of at least
     * {@link #GATHER_MIN} payload bytes lying in one gather piece is not copied: its header, pad
     * and CRC go into {@code dst} and its payload is referenced through {@code sink} (zero-copy
     * transmit; the stream bytes are the same). The referenced memory must stay unchanged until
     * the sink has written it, so a WR's completion (reported here as soon as its last segment is
     * staged) is the caller's to hold back until then. A null sink, or markers on, copies as before.
     */
    public int transmit(ByteBuffer dst, FpduSink sink) {
        txSink = encoder.markersEnabled() ? null : sink;
        int start = dst.position();
        while (true) {
            if (state == State.TERMINATE) {
                if (emitTerminate(dst)) {
                    state = State.ERROR;
                }
                break;
            }
            if (state != State.RTS) {
                break;
            }
            // One tagged message at a time on the wire: a Read Response does not start between the
            // segments of a Send or Write already begun (the peer's DDP counts a tagged message's
            // bytes until its Last flag, RFC 5041 §5.2; siw keeps one tagged receive context).
            if (irqCount > 0 && !sqMessageBegun()) {
                if (!emitReadResponse(dst)) {
                    break;
                }
                continue;
            }
            if (sqNext != sqTail) {
                if (!emitSq(dst)) {
                    break;
                }
                continue;
            }
            break;
        }
        return dst.position() - start;
    }

    /** The SQ head entry has segments on the wire and more to go. */
    private boolean sqMessageBegun() {
        return sqNext != sqTail && sqProgress[sqNext & sqMask] > 0;
    }

    private boolean emitSq(ByteBuffer dst) {
        int s = sqNext & sqMask;
        switch (sqKind[s]) {
            case KIND_READ: {
                if (orqCount >= readLimit(s)) {
                    return false;
                }
                int ulpdu = DdpHeader.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH;
                if (dst.remaining() < encoder.wireLength(ulpdu)) {
                    return false;
                }
                int u = encoder.ulpduIndex(dst);
                txHdr.wrap(dst, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.READ_REQUEST), 0,
                        RdmapOpcode.QN_READ_REQUEST, ++txReadMsn, 0);
                ReadRequestHeader.put(dst, u + DdpHeader.UNTAGGED_HEADER_LENGTH, sqLocalStag[s], sqLocalTo[s],
                        sqLen[s], sqStag[s], sqTo[s]);
                encoder.finish(dst, ulpdu);
                orq[(orqHead + orqCount) % orq.length] = sqNext;
                orqCount++;
                sqNext++;
                return true;
            }
            case KIND_SEND:
            case KIND_WRITE: {
                boolean tagged = sqKind[s] == KIND_WRITE;
                int max = tagged ? maxTagged : maxUntagged;
                int progress = sqProgress[s];
                int n = DdpSegmenter.segmentLength(sqLen[s], progress, max);
                boolean last = DdpSegmenter.isLast(sqLen[s], progress, max);
                int hl = tagged ? DdpHeader.TAGGED_HEADER_LENGTH : DdpHeader.UNTAGGED_HEADER_LENGTH;
                int piece = txSink != null && n >= GATHER_MIN ? pieceHolding(s, progress, n) : -1;
                if (piece >= 0 ? dst.remaining() < encoder.gatheredStagingLength(hl, n) || !txSink.canReference(n)
                        : dst.remaining() < encoder.wireLength(hl + n)) {
                    return false;
                }
                int u = encoder.ulpduIndex(dst);
                int control = RdmapOpcode.control(sqOpcode[s]);
                if (tagged) {
                    txHdr.wrap(dst, u).putTagged(last, control, sqStag[s], sqTo[s] + progress);
                } else {
                    if (progress == 0) {
                        sqMsn[s] = ++txSendMsn;
                    }
                    txHdr.wrap(dst, u).putUntagged(last, control, sqStag[s], RdmapOpcode.QN_SEND, sqMsn[s], progress);
                }
                if (piece >= 0) {
                    // staged first, referenced after: a failed staging leaves no slice behind
                    encoder.finishGathered(dst, hl, sgBuf[piece], pieceIndex, n);
                    txSink.reference(u + hl, sgBuf[piece], pieceIndex, n);
                } else {
                    if (n > 0) {
                        copyOut(s, progress, dst, u + hl, n);
                    }
                    encoder.finish(dst, hl + n);
                }
                sqProgress[s] = progress + n;
                if (last) {
                    sqDone[s] = true;
                    sqNext++;
                    drainCompletions();
                }
                return true;
            }
            default:
                throw new IllegalStateException("corrupt send queue entry kind " + sqKind[s]);
        }
    }

    private boolean emitReadResponse(ByteBuffer dst) {
        int h = irqHead;
        int size = irqSize[h];
        int progress = irqProgress[h];
        int n = DdpSegmenter.segmentLength(size, progress, maxTagged);
        boolean last = DdpSegmenter.isLast(size, progress, maxTagged);
        if (dst.remaining() < encoder.wireLength(DdpHeader.TAGGED_HEADER_LENGTH + n)) {
            return false;
        }
        StagRegion src = irqSource[h];
        if (n > 0 && !src.isValid()) {
            // The source STag was revoked after the Read Request was accepted (RFC 5041 §8.3).
            raise(TermCode.RDMAP_INVALID_STAG, "Read source STag 0x" + Integer.toHexString(src.stag())
                    + " revoked while answering", false);
            return true;
        }
        int u = encoder.ulpduIndex(dst);
        txHdr.wrap(dst, u).putTagged(last, RdmapOpcode.control(RdmapOpcode.READ_RESPONSE), irqSinkStag[h],
                irqSinkTo[h] + progress);
        if (n > 0) {
            dst.put(u + DdpHeader.TAGGED_HEADER_LENGTH, src.buffer(), src.indexOf(irqSourceTo[h] + progress), n);
        }
        encoder.finish(dst, DdpHeader.TAGGED_HEADER_LENGTH + n);
        irqProgress[h] = progress + n;
        if (last) {
            irqSource[h] = null;
            irqHead = (irqHead + 1) % irqDepth;
            irqCount--;
        }
        return true;
    }

    private boolean emitTerminate(ByteBuffer dst) {
        int payloadMax = TerminateCodec.MAX_PAYLOAD_LENGTH;
        if (dst.remaining() < encoder.wireLength(DdpHeader.UNTAGGED_HEADER_LENGTH + payloadMax)) {
            return false;
        }
        int u = encoder.ulpduIndex(dst);
        txHdr.wrap(dst, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.TERMINATE), 0,
                RdmapOpcode.QN_TERMINATE, 1, 0);
        int p = TerminateCodec.encode(dst, u + DdpHeader.UNTAGGED_HEADER_LENGTH, termCode, termSegLen, termHeaders, 0,
                termDdpLen, termRdmaLen, termSegLenValid);
        encoder.finish(dst, DdpHeader.UNTAGGED_HEADER_LENGTH + p);
        return true;
    }

    private void clearGather(int s) {
        int base = s * maxSge;
        for (int i = 0; i < sqSgCount[s]; i++) {
            sgBuf[base + i] = null;
        }
        sqSgCount[s] = 0;
    }

    private void drainCompletions() {
        while (sqHead != sqTail && sqDone[sqHead & sqMask]) {
            int s = sqHead & sqMask;
            clearGather(s);
            sqHead++;
            if (sqSignaled[s]) {
                listener.onSendCompletion(sqWrId[s], sqOpcode[s], sqLen[s]);
            }
        }
    }

    // ---------------------------------------------------------------- errors

    private void raise(TermCode code, String detail, boolean withSegment) {
        if (state != State.RTS) {
            return;
        }
        state = State.TERMINATE;
        ddp.fail();
        termCode = code;
        termSegLen = 0;
        termDdpLen = 0;
        termRdmaLen = 0;
        termSegLenValid = false;
        if (withSegment && curSeg != null && curLen > 0) {
            termSegLen = curLen;
            termSegLenValid = true;
            rxHdr.wrap(curSeg, curIdx);
            int hl = rxHdr.headerLength();
            if (curLen >= hl) {
                termHeaders.put(0, curSeg, curIdx, hl);
                termDdpLen = hl;
                boolean readRequest = !rxHdr.tagged() && rxHdr.qn() == RdmapOpcode.QN_READ_REQUEST
                        && RdmapOpcode.opcode(rxHdr.rsvdUlp()) == RdmapOpcode.READ_REQUEST;
                if (code.layer() == TermCode.LAYER_RDMAP && readRequest
                        && curLen >= hl + ReadRequestHeader.LENGTH) {
                    termHeaders.put(hl, curSeg, curIdx + hl, ReadRequestHeader.LENGTH);
                    termRdmaLen = ReadRequestHeader.LENGTH;
                }
            }
        }
        LOG.warn("RDMAP stream error {}: {}", code, detail);
        listener.onLocalError(code, detail);
    }

    private TermCode versionCheck(int control) {
        return RdmapOpcode.version(control) != RdmapOpcode.RDMAP_VERSION ? TermCode.RDMAP_INVALID_VERSION : null;
    }

    private static TermCode readSourceCode(int r) {
        switch (r) {
            case StagTable.INVALID_STAG:
                return TermCode.RDMAP_INVALID_STAG;
            case StagTable.NOT_ASSOCIATED:
                return TermCode.RDMAP_STAG_NOT_ASSOCIATED;
            case StagTable.ACCESS_VIOLATION:
                return TermCode.RDMAP_ACCESS_VIOLATION;
            case StagTable.TO_WRAP:
                return TermCode.RDMAP_TO_WRAP;
            default:
                return TermCode.RDMAP_BASE_BOUNDS;
        }
    }

    /** The MPA and DDP upcalls, kept off the public surface. */
    private final class Inbound implements FpduHandler, DdpReceiveHandler {

        @Override
        public void onUlpdu(ByteBuffer buffer, int index, int length) {
            if (state != State.RTS) {
                return;
            }
            if (firstFpdu) {
                firstFpdu = false;
                listener.onFirstFpdu();
            }
            curSeg = buffer;
            curIdx = index;
            curLen = length;
            try {
                ddp.receive(buffer, index, length);
            } finally {
                curSeg = null;
            }
        }

        @Override
        public void onFpduError(TermCode code, String detail) {
            curSeg = null;
            raise(code, detail, false);
        }

        @Override
        public int directHeaderLength(int firstByte) {
            return DdpReceiver.headerLength(firstByte);
        }

        /**
         * A large segment split across reads: its DDP header is validated now (RFC 5041 §7.1) and its
         * payload placed as it arrives; on a CRC mismatch at its end the stream terminates (2/0/2)
         * with the bytes placed (see {@link FpduDecoder}). A header that fails a check is not taken:
         * the segment is gathered and reported as usual once its CRC is verified.
         */
        @Override
        public boolean beginDirect(ByteBuffer buffer, int index, int headerLength, int length) {
            if (state != State.RTS) {
                return false;
            }
            if (!ddp.beginDirect(buffer, index, length)) {
                return false;
            }
            if (firstFpdu) {
                firstFpdu = false;
                listener.onFirstFpdu();
            }
            curSeg = buffer; // the header, for a TERM raised while the payload is placed
            curIdx = index;
            curLen = length;
            return true;
        }

        @Override
        public boolean placeDirect(ByteBuffer buffer, int index, int n) {
            if (state != State.RTS || !ddp.placeDirect(buffer, index, n)) {
                curSeg = null;
                return false;
            }
            return true;
        }

        @Override
        public ByteBuffer directTarget(int max) {
            ByteBuffer t = state == State.RTS ? ddp.directTarget(max) : null;
            if (t == null && state != State.RTS) {
                curSeg = null;
            }
            return t;
        }

        @Override
        public void directFilled(int n) {
            ddp.directFilled(n);
        }

        @Override
        public void onUntaggedBufferRevoked(int qn, long cookie) {
            if (qn == RdmapOpcode.QN_SEND) {
                listener.onReceiveRevoked(cookie);
            }
        }

        @Override
        public void endDirect() {
            try {
                if (state == State.RTS) {
                    ddp.endDirect();
                }
            } finally {
                curSeg = null;
            }
        }

        @Override
        public TermCode checkTagged(int rsvdUlp, int stag, long to, int payloadLength) {
            TermCode v = versionCheck(rsvdUlp);
            if (v != null) {
                return v;
            }
            switch (RdmapOpcode.opcode(rsvdUlp)) {
                case RdmapOpcode.WRITE:
                    return null;
                case RdmapOpcode.READ_RESPONSE:
                    if (orqCount == 0) {
                        return TermCode.RDMAP_UNEXPECTED_OPCODE;
                    }
                    if (payloadLength == 0) {
                        // RFC 5041 §5.2: the STag and TO of a zero-length tagged message are not checked
                        // (the empty answer to a zero-length Read, e.g. the Read RTR, may carry any).
                        return null;
                    }
                    int s = orq[orqHead] & sqMask;
                    if (stag != sqLocalStag[s]) {
                        return TermCode.DDP_TAGGED_INVALID_STAG;
                    }
                    // The response may only fill the window its Read Request named (RFC 5040 §5.2).
                    long rel = to - sqLocalTo[s];
                    if (Long.compareUnsigned(rel, sqLen[s]) > 0 || rel + payloadLength > sqLen[s]) {
                        return TermCode.DDP_TAGGED_BASE_BOUNDS;
                    }
                    return null;
                default:
                    return TermCode.RDMAP_UNEXPECTED_OPCODE;
            }
        }

        @Override
        public int taggedAccess(int rsvdUlp) {
            return RdmapOpcode.opcode(rsvdUlp) == RdmapOpcode.READ_RESPONSE ? StagAccess.LOCAL_WRITE : StagAccess.REMOTE_WRITE;
        }

        @Override
        public TermCode checkUntagged(int qn, int rsvdUlp, int msn, int payloadLength) {
            TermCode v = versionCheck(rsvdUlp);
            if (v != null) {
                return v;
            }
            int op = RdmapOpcode.opcode(rsvdUlp);
            switch (qn) {
                case RdmapOpcode.QN_SEND:
                    if (!RdmapOpcode.isSend(op)) {
                        return TermCode.RDMAP_UNEXPECTED_OPCODE;
                    }
                    if (ddp.postedCount(RdmapOpcode.QN_SEND) == 0) {
                        listener.onReceiveNeeded(); // a shared receive queue supplies the buffer now
                    }
                    return null;
                case RdmapOpcode.QN_READ_REQUEST:
                    if (op != RdmapOpcode.READ_REQUEST) {
                        return TermCode.RDMAP_UNEXPECTED_OPCODE;
                    }
                    return irqCount >= settings.ird() ? TermCode.RDMAP_CATASTROPHIC_STREAM : null;
                default:
                    return op == RdmapOpcode.TERMINATE ? null : TermCode.RDMAP_UNEXPECTED_OPCODE;
            }
        }

        @Override
        public void onTaggedMessage(int rsvdUlp, int stag, int length) {
            if (RdmapOpcode.opcode(rsvdUlp) != RdmapOpcode.READ_RESPONSE) {
                return; // RDMA Write: placement is the whole effect (RFC 5040 §5.1)
            }
            int q = orq[orqHead];
            int s = q & sqMask;
            orqHead = (orqHead + 1) % orq.length;
            orqCount--;
            if (length != sqLen[s]) {
                raise(TermCode.RDMAP_CATASTROPHIC_STREAM, "Read Response of " + length + " bytes for a Read of "
                        + sqLen[s] + " (RFC 5040 §5.2)", true);
                return;
            }
            sqDone[s] = true;
            drainCompletions();
        }

        @Override
        public void onUntaggedMessage(int qn, int msn, int rsvdUlp, int rsvdUlp32, long cookie, ByteBuffer buffer,
                int offset, int length) {
            switch (qn) {
                case RdmapOpcode.QN_SEND:
                    deliverSend(RdmapOpcode.opcode(rsvdUlp), rsvdUlp32, cookie, length);
                    break;
                case RdmapOpcode.QN_READ_REQUEST:
                    acceptReadRequest(buffer, offset, length, (int) cookie);
                    break;
                default:
                    acceptTerminate(buffer, offset, length);
                    break;
            }
        }

        private void deliverSend(int op, int invalidateStag, long wrId, int length) {
            int invalidated = 0;
            if (RdmapOpcode.isInvalidate(op)) {
                if (!stags.invalidate(invalidateStag, pd)) {
                    listener.onReceiveCompletion(wrId, op, length, 0);
                    raise(TermCode.RDMAP_CANNOT_INVALIDATE, "Send with Invalidate names STag 0x"
                            + Integer.toHexString(invalidateStag) + " that cannot be invalidated (RFC 5040 §5.3)",
                            true);
                    return;
                }
                invalidated = invalidateStag;
            }
            listener.onReceiveCompletion(wrId, op, length, invalidated);
        }

        private void acceptReadRequest(ByteBuffer b, int off, int length, int slot) {
            // The slot's bytes are copied out first, then it is posted again for the next Read Request.
            int sinkStag = ReadRequestHeader.sinkStag(b, off);
            long sinkTo = ReadRequestHeader.sinkTo(b, off);
            int size = ReadRequestHeader.size(b, off);
            int srcStag = ReadRequestHeader.sourceStag(b, off);
            long srcTo = ReadRequestHeader.sourceTo(b, off);
            ddp.postUntagged(RdmapOpcode.QN_READ_REQUEST, readReqBufs, slot * ReadRequestHeader.LENGTH,
                    ReadRequestHeader.LENGTH, slot);
            if (length != ReadRequestHeader.LENGTH) {
                raise(TermCode.RDMAP_CATASTROPHIC_STREAM, "Read Request of " + length + " bytes, expected 28 "
                        + "(RFC 5040 §4.4)", true);
                return;
            }
            if (size < 0) {
                raise(TermCode.RDMAP_BASE_BOUNDS, "Read Request size " + Integer.toUnsignedString(size)
                        + " exceeds this implementation's 2^31-1 (RFC 5040 §4.4)", true);
                return;
            }
            StagRegion mr = null;
            if (size > 0) {
                mr = stags.lookup(srcStag);
                int r = StagTable.checkRemote(mr, pd, ddp.streamKey(), srcTo, size, StagAccess.REMOTE_READ);
                if (r != StagTable.OK) {
                    raise(readSourceCode(r), "Read Request source STag 0x" + Integer.toHexString(srcStag) + " TO 0x"
                            + Long.toHexString(srcTo) + " size " + size + " rejected (RFC 5040 §5.2)", true);
                    return;
                }
            }
            int t = (irqHead + irqCount) % irqDepth;
            irqSinkStag[t] = sinkStag;
            irqSinkTo[t] = sinkTo;
            irqSize[t] = size;
            irqSource[t] = mr;
            irqSourceTo[t] = srcTo;
            irqProgress[t] = 0;
            irqCount++;
        }

        private void acceptTerminate(ByteBuffer b, int off, int length) {
            TerminateMessage term;
            try {
                term = TerminateCodec.decode(b, off, length);
            } catch (RdmapFormatException e) {
                TermCode code = length >= TerminateCodec.CONTROL_LENGTH ? TermCode.fromControlWord(b.getInt(off))
                        : TermCode.RDMAP_CATASTROPHIC_STREAM;
                term = new TerminateMessage(code, false, false, false, 0, new byte[0], new byte[0]);
                LOG.debug("malformed Terminate from peer: {}", e.getMessage());
            }
            state = State.ERROR;
            ddp.fail();
            LOG.info("peer terminated the RDMAP stream: {}", term);
            listener.onPeerTerminate(term);
        }

        @Override
        public void onError(TermCode code, ByteBuffer segment, int index, int length) {
            raise(code, "DDP segment rejected: " + code, true);
        }
    }
}
