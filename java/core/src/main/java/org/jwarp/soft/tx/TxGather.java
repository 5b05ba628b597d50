package org.jwarp.soft.tx;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;

import org.jwarp.mpa.FpduSink;

/**
 * Zero-copy transmit of one stream (siw_qp_tx's gathering sendmsg): FPDUs wait as bytes in the
 * staging buffer (MPA length, DDP/RDMAP header, and directly after it the pad and CRC of the same
 * FPDU, RFC 5044 §4) interleaved with references to payload slices of registered memory, and
 * leave in one gathering {@link SocketChannel#write(ByteBuffer[], int, int)}: [length + header] +
 * slice + [pad + CRC + next length + header] + slice + ... The stream bytes are those of the
 * copied FPDUs. A batch of posted WRs leaves in one write as far as the slice table and the byte
 * budget allow. Two budgets: while the socket takes everything, a write follows as soon as the
 * write budget's worth of FPDUs is staged (the peer then checks those while this side computes
 * the next CRCs); once a write leaves bytes behind, the ahead budget lets the transmitter stage
 * and CRC further FPDUs while the socket drains ({@link #roomAhead}).
 *
 * <p>Completions wait for the socket: a send WR whose last FPDU is staged is recorded with the
 * stream offset of its end ({@link #completeAt}), and completes only once the socket accepted
 * every byte up to it ({@link #write} returns those WRs' slots through {@link #acceptedSlot}),
 * so the application may reuse its buffer once it sees the completion.
 *
 * <p>The payload slices themselves are the engine's: it hands each referenced payload down into
 * the stream's {@link FpduSink} ({@link #sink}), which keeps the slice table and the payload view
 * pools; this class only lays the slices out between its staging runs and drives the socket. The
 * staging buffer, its run views and the slice table's arrays belong to a {@link TxStaging} the
 * stream borrows while it has bytes to send ({@link #bind}) and gives back once they all left
 * ({@link #unbind}); this object keeps only what outlives a write: the completions waiting for
 * the socket ({@link TxCompletions}), the accepted count and the sink.
 *
 * <p>No allocation per operation: the staging-run views and the iovec are preallocated, the
 * payload views pooled by the sink. Guarded by the stream's I/O lock.
 *
 * <p>What zero-copy means for the application, as with Linux siw's zero-copy transmit: an
 * FPDU's CRC (CRC32c, RFC 5044 §4.4) is computed over the region's bytes when the FPDU is staged,
 * but the socket reads those bytes later, when it has room. A local write into a region while a
 * Send, Write or Read Response that references it is in flight (before the WR's completion; for
 * a Read Response, before the peer's Read completes) can therefore put other bytes on the wire
 * than the CRC covers: the peer sees a CRC error and terminates the stream (TERM with an MPA CRC
 * error, RFC 5044 §8). With CRC off the peer receives a mix of old and new bytes. Deregistration
 * ({@link #revoked}) snapshots the bytes the region holds at that moment, not those it held at
 * staging.
 */
public final class TxGather {
    /** Payload slices one write may carry ({@link FpduSink#SLICES}). */
    static final int SLICES = FpduSink.SLICES;

    /** Source buffers whose view pools are kept ({@link FpduSink#POOLS}). */
    static final int POOLS = FpduSink.POOLS;

    /** The pending payload slices, which the engine references into. */
    private final FpduSink slices;
    /** The borrowed staging area (null while nothing is staged) and its buffer. */
    private TxStaging staging;
    private ByteBuffer tx;
    /** Staging index up to which the socket took the staged bytes. */
    private int sent;
    /** Stream bytes the socket accepted since the stream entered FPDU mode. */
    private long accepted;
    /** Completions waiting for the socket. */
    private final TxCompletions done;
    private ByteBuffer[] runs;
    private ByteBuffer[] iov;
    /** The staging's flags: whether iov entry i is a staging run (else a payload slice). */
    private boolean[] iovRun;
    /** The kept iovec: entries [iovFrom, iovN) not fully written yet; 0 entries when none is kept. */
    private int iovN;
    private int iovFrom;
    /** Slices popped since the iovec was built: slice j's run is {@code runs[runBase + j]}. */
    private int runBase;
    /** Staging end and slice-ring tail when the iovec was built: anything added since means a rebuild. */
    private int builtEnd;
    private int builtTail;
    private long rebuilds;
    /** Payload bytes referenced before a write while the socket takes what it is given. */
    private final int writeBudget;
    /** Payload bytes referenced ahead while the socket is full (CRCs computed while earlier bytes wait). */
    private final int aheadBudget;
    /** The last write left bytes behind: the socket is full until OP_WRITE says otherwise. */
    private boolean socketFull;
    /** Writes that left bytes behind (tests and diagnostics). */
    private long shortWrites;

    /** One budget for both: what is referenced before a write is what waits while the socket is full. */
    public TxGather(int sqDepth, int budget) {
        this(sqDepth, budget, budget);
    }

    /**
     * {@code writeBudget}: payload bytes referenced before they are written while the socket takes
     * everything; {@code aheadBudget}: payload bytes referenced ahead while it is full, so the FPDUs
     * that follow have their CRC32c computed (RFC 5044 §4.4) while the socket drains the earlier
     * ones, and leave at once when it has room again.
     */
    public TxGather(int sqDepth, int writeBudget, int aheadBudget) {
        if (writeBudget < 1 || aheadBudget < writeBudget) {
            throw new IllegalArgumentException("budgets: write " + writeBudget + " must be >= 1 and <= ahead "
                    + aheadBudget);
        }
        this.writeBudget = writeBudget;
        this.aheadBudget = aheadBudget;
        slices = new FpduSink(writeBudget);
        done = new TxCompletions(sqDepth);
    }

    /** Binds the staging area the stream borrowed (its views and slice table come with it). */
    public void bind(TxStaging st) {
        if (staging != st) {
            if (pending()) {
                throw new IllegalStateException("rebinding staging with bytes pending");
            }
            dropIov();
            staging = st;
            tx = st.buf;
            runs = st.runs;
            iov = st.iov;
            iovRun = st.iovRun;
            slices.bind(st.slices);
            sent = 0;
        }
    }

    /** Where the engine references payloads: hand it down with the staging buffer. */
    public FpduSink sink() {
        return slices;
    }

    /** The bound staging area, or null. */
    TxStaging staging() {
        return staging;
    }

    /**
     * Everything staged or referenced has left ({@link #pending} false): forgets the staging area so
     * the stream can give it back; its slice table is empty. Returns it, or null when none was bound.
     */
    public TxStaging unbind() {
        TxStaging st = staging;
        if (st == null) {
            return null;
        }
        if (pending()) {
            throw new IllegalStateException("staging still holds bytes the socket has not taken");
        }
        forgetStaging();
        return st;
    }

    /** Forgets the staging area's buffer, views and slice table: nothing of it is read after this. */
    private void forgetStaging() {
        dropIov();
        staging = null;
        tx = null;
        runs = null;
        iov = null;
        iovRun = null;
        slices.unbind();
        sent = 0;
    }

    /** Source buffers with a view pool kept (for tests: bounded by {@link #POOLS} plus those in use). */
    int pooledSources() {
        return slices.pooledSources();
    }

    /** Whether payload slices of registered memory wait for the socket. */
    public boolean referencing() {
        return slices.count() > 0;
    }

    /** Staged or referenced bytes not yet accepted by the socket. */
    public boolean pending() {
        return tx != null && (tx.position() > sent || slices.count() > 0);
    }

    /** Room for another full FPDU: staging room and a free slice. */
    public boolean room(int maxFpduWire) {
        return tx.remaining() >= maxFpduWire && slices.room();
    }

    /**
     * The socket is full and the stage-ahead budget is not used up: the transmitter may stage
     * more FPDUs (the engine checks the staging room of each one itself) instead of waiting idle
     * for OP_WRITE, so their CRCs are ready when the socket drains. False with one budget.
     */
    public boolean roomAhead() {
        return socketFull && aheadBudget > writeBudget && tx != null && slices.room();
    }

    /** Whether the last write left bytes behind. */
    public boolean socketFull() {
        return socketFull;
    }

    /** Writes so far that left bytes behind. */
    public long shortWrites() {
        return shortWrites;
    }

    /** The stream offset just past everything staged or referenced so far. */
    public long queuedEnd() {
        return accepted + (tx.position() - sent) + slices.bytes();
    }

    /** Send slot {@code slot} completes once the socket accepted the stream up to {@code end}. */
    public void completeAt(int slot, long end) {
        done.add(slot, end);
    }

    /** The next slot whose bytes the socket accepted, or -1. */
    public int acceptedSlot() {
        return done.next(accepted);
    }

    /**
     * One gathering write of everything pending; returns the bytes the socket took. After a
     * partial write the iovec is kept: while nothing new was staged or referenced, the next write
     * resumes it at its first unwritten entry instead of rebuilding it ({@link #compact} shifts its
     * staging runs along with the bytes).
     */
    public long write(SocketChannel ch) throws IOException {
        int end = tx.position();
        if (slices.count() == 0 && end == sent) {
            return 0;
        }
        if (iovN == 0 || end != builtEnd || slices.tail() != builtTail) {
            build(end);
        }
        while (iovFrom < iovN && !iov[iovFrom].hasRemaining()) {
            iovFrom++;
        }
        long offered = (end - sent) + slices.bytes();
        long w = iovFrom == iovN ? 0 : ch.write(iov, iovFrom, iovN - iovFrom);
        accepted += w;
        socketFull = w < offered;
        if (socketFull) {
            shortWrites++;
        }
        slices.budget(socketFull ? aheadBudget : writeBudget);
        consumed(end);
        if (slices.count() == 0 && sent == end) {
            dropIov(); // everything left: hold no view
        }
        return w;
    }

    /** Lays out the iovec afresh: [run] slice [run] slice ... [run]. */
    private void build(int end) {
        dropIov();
        int n = 0;
        int from = sent;
        int count = slices.count();
        for (int j = 0; j < count; j++) {
            int a = slices.at(j);
            if (a > from) {
                iovRun[n] = true;
                iov[n++] = runs[j].limit(a).position(from);
                from = a;
            }
            iovRun[n] = false;
            iov[n++] = slices.view(j);
        }
        if (end > from) {
            iovRun[n] = true;
            iov[n++] = runs[count].limit(end).position(from);
        }
        iovN = n;
        iovFrom = 0;
        runBase = 0;
        builtEnd = end;
        builtTail = slices.tail();
        rebuilds++;
    }

    private void dropIov() {
        for (int i = 0; i < iovN; i++) {
            iov[i] = null;
        }
        iovN = 0;
        iovFrom = 0;
    }

    /** Iovec layouts built so far (tests: a partial write is resumed, not rebuilt). */
    long rebuilds() {
        return rebuilds;
    }

    /** After a write: NIO advanced every view by what it wrote; drop what is done, front first. */
    private void consumed(int end) {
        int popped = 0;
        int from = sent;
        int count = slices.count();
        for (int j = 0; j < count; j++) {
            int a = slices.at(j);
            if (a > from) {
                sent = runs[runBase + j].position();
                if (sent < a) {
                    break;
                }
                from = a;
            }
            if (!slices.settle(j)) {
                break;
            }
            popped++;
        }
        if (popped == count && end > from) {
            sent = runs[runBase + count].position();
        }
        slices.pop(popped);
        runBase += popped;
    }

    /** Drops written staging bytes so the staging buffer has room again (slice positions shift). */
    public void compact() {
        if (sent == 0) {
            return;
        }
        if (slices.count() == 0 && tx.position() == sent) {
            tx.clear();
            dropIov();
        } else {
            tx.limit(tx.position()).position(sent);
            tx.compact();
            slices.shift(sent);
            while (iovFrom < iovN && !iov[iovFrom].hasRemaining()) {
                iovFrom++; // written entries lie before sent: nothing to shift
            }
            for (int i = iovFrom; i < iovN; i++) {
                if (iovRun[i]) { // the kept iovec's staging runs move with their bytes
                    ByteBuffer r = iov[i];
                    r.position(r.position() - sent).limit(r.limit() - sent);
                }
            }
            builtEnd -= sent;
        }
        sent = 0;
    }

    /**
     * Copy-on-revoke, RFC 5041 §8.3.1 (6) for the source side: bytes [{@code from}, {@code to}) of
     * {@code src} belong to a region being deregistered. Every pending slice overlapping them is
     * replaced by a snapshot of its bytes not yet written, so nothing is read from the region once
     * deregistration returns, however long the peer takes to read; the FPDUs stay intact (their
     * CRC was computed over these bytes when they were referenced). The socket reads our memory only
     * inside {@link #write}, under the same I/O lock as this method, so no write is half-way through
     * a slice here. Cold path: allocates the snapshots. Returns the bytes copied.
     */
    public long revoked(ByteBuffer src, int from, int to) {
        long copied = slices.revoked(src, from, to);
        if (copied > 0) {
            dropIov(); // the next write lays the snapshots out
        }
        return copied;
    }

    /** Run once by {@link #release} (the stream's revocation listener leaves the STag table). */
    private Runnable onRelease;

    /** Runs once when this gather is released (the stream's revocation listener unregisters). */
    public void onRelease(Runnable r) {
        onRelease = r;
    }

    /**
     * The stream closed: forget references to staging and registered memory. The staging area, if
     * one was bound, is returned with an empty slice table (for its owner to give back), else null.
     */
    public TxStaging release() {
        Runnable r = onRelease;
        onRelease = null;
        if (r != null) {
            r.run();
        }
        TxStaging st = staging;
        slices.clear();
        if (st != null) {
            Arrays.fill(st.iov, null);
            st.buf.clear();
        }
        forgetStaging();
        return st;
    }
}
