package org.jwarp.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.jwarp.memory.StagRegion;
import org.jwarp.rdmap.RdmapOpcode;

/**
 * The Java half of the C peer's "basic" script (see {@code native/interop/siw_peer.c}): Send/Recv
 * of 32-byte control messages (RFC 5040 §5.3), an RDMA Write into the kernel peer's buffer (§5.1)
 * and an RDMA Read from it (§5.2), while the kernel peer reads from and writes into ours.
 */
final class BasicExchange {
    static final int MAGIC = 0x4a574950; // "JWIP"
    static final int MSG_LEN = 32;
    static final int INFO = 1;
    static final int WROTE = 2;
    static final int CHECK = 3;
    static final int RESULT = 4;
    /** Tagged offset of our buffer's first byte, as the kernel peer addresses it. */
    static final long BASE_TO = 0x7f00_1000_0000L;

    private static final int RECV_SLOTS = 8;
    private static final int SEND_SLOTS = 4;
    private static final long WR_WRITE = 50;
    private static final long WR_READ = 51;

    final WirePeer peer;
    final int area;
    final Duration timeout;
    final StagRegion mr;
    final ByteBuffer buf;
    final ByteBuffer msgs = ByteBuffer.allocateDirect((RECV_SLOTS + SEND_SLOTS) * MSG_LEN);
    int sendSlot;
    int peerRkey;
    long peerAddr;

    BasicExchange(WirePeer peer, int area, Duration timeout) {
        this.peer = peer;
        this.area = area;
        this.timeout = timeout;
        this.mr = peer.register(4 * area, BASE_TO);
        this.buf = mr.buffer();
        fill(buf, 0, 3, area);      // our read area: the kernel peer reads pattern 3
        fill(buf, 3 * area, 2, area); // what we write into the kernel peer's write area
        for (int i = 0; i < RECV_SLOTS; i++) {
            peer.endpoint.postReceive(i, msgs, i * MSG_LEN, MSG_LEN);
        }
    }

    static byte pattern(int k, int i) {
        return (byte) (i * 31 + k * 17 + 7);
    }

    static void fill(ByteBuffer b, int off, int k, int n) {
        for (int i = 0; i < n; i++) {
            b.put(off + i, pattern(k, i));
        }
    }

    /** Index of the first byte not matching pattern {@code k}, or -1. */
    static int verify(ByteBuffer b, int off, int k, int n) {
        for (int i = 0; i < n; i++) {
            if (b.get(off + i) != pattern(k, i)) {
                return i;
            }
        }
        return -1;
    }

    /** Waits for the next Send and checks it is a control message of {@code type}; returns its offset. */
    int receive(int type) throws IOException {
        long[] r = peer.takeReceive("message type " + type, timeout);
        assertEquals(RdmapOpcode.SEND, (int) r[1], "receive opcode");
        assertEquals(MSG_LEN, (int) r[2], "Send length");
        int off = (int) r[0] * MSG_LEN;
        assertEquals(MAGIC, msgs.getInt(off), "message magic");
        assertEquals(type, msgs.getInt(off + 4), "message type");
        return off;
    }

    void send(int type, int status) throws IOException {
        assertTrue(sendSlot < SEND_SLOTS, "send slots");
        int off = (RECV_SLOTS + sendSlot++) * MSG_LEN;
        msgs.putInt(off, MAGIC).putInt(off + 4, type).putInt(off + 8, mr.stag()).putInt(off + 12, area)
                .putLong(off + 16, BASE_TO).putInt(off + 24, status).putInt(off + 28, 0);
        long wr = 100 + type;
        peer.endpoint.postSend(wr, RdmapOpcode.SEND, msgs, off, MSG_LEN, 0, true);
        peer.pumpUntil("Send " + type + " completion", () -> peer.sendCompleted(wr), timeout);
    }

    /** Waits for the kernel peer's INFO and remembers its buffer; then sends ours. */
    void exchangeInfo() throws IOException {
        int off = receive(INFO);
        peerRkey = msgs.getInt(off + 8);
        assertEquals(area, msgs.getInt(off + 12), "peer area size");
        peerAddr = msgs.getLong(off + 16);
        System.out.printf("interop: siw buffer rkey=0x%08x addr=0x%x%n", peerRkey, peerAddr);
        send(INFO, 0);
    }

    /** The whole script; returns nothing, asserts every check on this side. */
    void run() throws IOException {
        exchangeInfo();
        peer.endpoint.postWrite(WR_WRITE, buf, 3 * area, area, peerRkey, peerAddr + area, true);
        peer.endpoint.postRead(WR_READ, mr.stag(), BASE_TO + 2L * area, area, peerRkey, peerAddr, true);
        peer.pumpUntil("RDMA Read completion", () -> peer.sendCompleted(WR_READ), timeout);
        int readBad = verify(buf, 2 * area, 1, area);
        System.out.println("interop: check=rdma_read_from_siw bytes=" + area + " first_bad=" + readBad);
        send(CHECK, 0);
        receive(WROTE);
        int writeBad = verify(buf, area, 4, area);
        System.out.println("interop: check=rdma_write_from_siw bytes=" + area + " first_bad=" + writeBad);
        int off = receive(RESULT);
        int siwStatus = msgs.getInt(off + 24);
        int failures = (readBad >= 0 ? 1 : 0) + (writeBad >= 0 ? 1 : 0);
        send(RESULT, failures);
        assertEquals(-1, readBad, "RDMA Read from siw: first mismatching byte");
        assertEquals(-1, writeBad, "RDMA Write from siw: first mismatching byte");
        assertEquals(0, siwStatus, "siw peer's verification of our RDMA Write and its RDMA Read");
        assertTrue(peer.localErrors.isEmpty(), () -> "no local errors: " + peer.state());
        assertTrue(peer.peerTerms.isEmpty(), () -> "no TERM from siw: " + peer.state());
    }
}
