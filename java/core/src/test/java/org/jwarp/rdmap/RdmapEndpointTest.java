package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.mpa.Fpdu;
import org.jwarp.mpa.FpduEncoder;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class RdmapEndpointTest {

    /** The ULPDUs (DDP segments) of a captured FPDU stream without markers. */
    static List<ByteBuffer> ulpdus(byte[] stream) {
        ByteBuffer b = ByteBuffer.wrap(stream);
        List<ByteBuffer> out = new ArrayList<>();
        int p = 0;
        while (p < stream.length) {
            int len = b.getShort(p) & 0xFFFF;
            out.add(b.slice(p + 2, len));
            p += Fpdu.fpduLength(len);
        }
        assertEquals(stream.length, p, "stream is a whole number of FPDUs");
        return out;
    }

    static ByteBuffer direct(byte[] bytes) {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes.length);
        b.put(0, bytes);
        return b;
    }

    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + seed);
        }
        return b;
    }

    static byte[] read(ByteBuffer b, int off, int n) {
        byte[] out = new byte[n];
        b.get(off, out);
        return out;
    }

    final RdmapSettings s1000 = RdmapPair.settings(1000, true, 4, 4);

    @Test
    @DisplayName("RFC 5040 §5.3: Send placed into the posted buffer; QN 0, MSN from 1, control 0x4143 on the last segment")
    void sendReceive_5040_5_3() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer rq = ByteBuffer.allocateDirect(8192);
        p.b.postReceive(11, rq, 0, 8192);
        p.b.postReceive(12, rq, 4096, 4096);
        byte[] msg = pattern(3000, 1);
        p.a.postSend(1, RdmapOpcode.SEND, direct(msg), 0, msg.length, 0, true);
        p.a.postSend(2, RdmapOpcode.SEND, direct(new byte[5]), 0, 5, 0, true);
        p.pump();
        assertEquals(2, p.evB.receives.size());
        assertArrayEquals(new long[] {11, RdmapOpcode.SEND, 3000, 0}, p.evB.receives.get(0));
        assertArrayEquals(msg, read(rq, 0, 3000));
        assertEquals(2, p.evA.sendCompletions.size());
        assertEquals(1, p.evA.sendCompletions.get(0)[0]);
        List<ByteBuffer> segs = ulpdus(p.aToB.toByteArray());
        assertEquals(5, segs.size(), "ceil(3000 / 982) + 1");
        DdpHeader h = new DdpHeader();
        for (int i = 0; i < 4; i++) {
            h.wrap(segs.get(i), 0);
            assertEquals(i == 3 ? 0x4143 : 0x0143, segs.get(i).getShort(0) & 0xFFFF);
            assertEquals(RdmapOpcode.QN_SEND, h.qn());
            assertEquals(1, h.msn(), "first message has MSN 1, shared by its segments");
            assertEquals(982 * i, h.mo());
            if (i < 3) {
                assertEquals(1000, segs.get(i).limit(), "non-last segments fill the MULPDU");
            }
        }
        assertEquals(2, h.wrap(segs.get(4), 0).msn());
        assertTrue(p.evA.localErrors.isEmpty() && p.evB.localErrors.isEmpty());
    }

    @Test
    @DisplayName("RFC 5040 §5.3/§4.3: Send with SE and Invalidate carries the STag in RsvdULP and invalidates it")
    void sendSeInvalidate_5040_5_3() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer mem = ByteBuffer.allocateDirect(64);
        StagRegion mr = p.stags.register(p.pdB, mem, 0, 64, 0, StagAccess.REMOTE_WRITE);
        p.b.postReceive(5, ByteBuffer.allocateDirect(100), 0, 100);
        p.a.postSend(1, RdmapOpcode.SEND_SE_INVALIDATE, direct(new byte[10]), 0, 10, mr.stag(), true);
        p.pump();
        assertArrayEquals(new long[] {5, RdmapOpcode.SEND_SE_INVALIDATE, 10, mr.stag()}, p.evB.receives.get(0));
        assertFalse(mr.isValid());
        ByteBuffer seg = ulpdus(p.aToB.toByteArray()).get(0);
        assertEquals(0x4146, seg.getShort(0) & 0xFFFF);
        assertEquals(mr.stag(), new DdpHeader().wrap(seg, 0).rsvdUlp32());
    }

    @Test
    @DisplayName("RFC 5040 §4.8: Send with Invalidate of another PD's STag is TERM 0/1/9 and the STag stays valid")
    void invalidateForeignStag_5040_4_8() {
        RdmapPair p = new RdmapPair(s1000);
        StagRegion mr = p.stags.register(p.pdA, ByteBuffer.allocateDirect(8), 0, 8, 0, StagAccess.REMOTE_WRITE);
        p.b.postReceive(5, ByteBuffer.allocateDirect(100), 0, 100);
        p.a.postSend(1, RdmapOpcode.SEND_INVALIDATE, direct(new byte[10]), 0, 10, mr.stag(), true);
        p.pump();
        assertTrue(mr.isValid());
        assertEquals(List.of(TermCode.RDMAP_CANNOT_INVALIDATE), p.evB.localErrors);
        assertEquals(TermCode.RDMAP_CANNOT_INVALIDATE, p.evA.peerTerms.get(0).code());
    }

    @Test
    @DisplayName("RFC 5040 §5.1: RDMA Write lands at the TO; control 0xC140 on the last segment; no completion at the sink")
    void rdmaWrite_5040_5_1() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer mem = ByteBuffer.allocateDirect(20_000);
        StagRegion mr = p.stags.register(p.pdB, mem, 0, 20_000, 0x10_0000, StagAccess.REMOTE_WRITE);
        byte[] msg = pattern(10_000, 3);
        p.a.postWrite(7, direct(msg), 0, msg.length, mr.stag(), 0x10_0000 + 500, true);
        p.pump();
        assertArrayEquals(msg, read(mem, 500, msg.length));
        assertEquals(7, p.evA.sendCompletions.get(0)[0]);
        assertTrue(p.evB.receives.isEmpty());
        List<ByteBuffer> segs = ulpdus(p.aToB.toByteArray());
        assertEquals(0xC140, segs.get(segs.size() - 1).getShort(0) & 0xFFFF);
        assertEquals(0x8140, segs.get(0).getShort(0) & 0xFFFF);
        assertEquals(0x10_0000 + 500 + 986, new DdpHeader().wrap(segs.get(1), 0).to());
    }

    @Test
    @DisplayName("RFC 5040 §5.2/§4.4: RDMA Read: 48-byte Read Request (0x4141, QN 1), Read Response (0xC142) placed at the sink")
    void rdmaRead_5040_5_2() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer src = ByteBuffer.allocateDirect(5000);
        byte[] data = pattern(5000, 9);
        src.put(0, data);
        StagRegion srcMr = p.stags.register(p.pdB, src, 0, 5000, 0x2000, StagAccess.REMOTE_READ);
        ByteBuffer sink = ByteBuffer.allocateDirect(5000);
        StagRegion sinkMr = p.stags.register(p.pdA, sink, 0, 5000, 0x9000, StagAccess.LOCAL_WRITE);
        p.a.postRead(3, sinkMr.stag(), 0x9000 + 100, 4000, srcMr.stag(), 0x2000 + 50, true);
        p.pump();
        assertArrayEquals(read(src, 50, 4000), read(sink, 100, 4000));
        assertEquals(List.of(3L), p.evA.sendCompletions.stream().map(c -> c[0]).toList());
        byte[] req = p.aToB.toByteArray();
        assertEquals(Fpdu.fpduLength(46), req.length, "one 48-byte header FPDU plus CRC");
        assertEquals(46, ByteBuffer.wrap(req).getShort(0));
        ByteBuffer rr = ulpdus(req).get(0);
        assertEquals(0x4141, rr.getShort(0) & 0xFFFF);
        DdpHeader h = new DdpHeader().wrap(rr, 0);
        assertEquals(RdmapOpcode.QN_READ_REQUEST, h.qn());
        assertEquals(1, h.msn());
        assertEquals(sinkMr.stag(), ReadRequestHeader.sinkStag(rr, 18));
        assertEquals(0x9000 + 100, ReadRequestHeader.sinkTo(rr, 18));
        assertEquals(4000, ReadRequestHeader.size(rr, 18));
        assertEquals(srcMr.stag(), ReadRequestHeader.sourceStag(rr, 18));
        assertEquals(0x2000 + 50, ReadRequestHeader.sourceTo(rr, 18));
        List<ByteBuffer> resp = ulpdus(p.bToA.toByteArray());
        assertEquals(0xC142, resp.get(resp.size() - 1).getShort(0) & 0xFFFF);
        assertEquals(0, p.a.readsOutstanding());
    }

    @Test
    @DisplayName("RFC 5040 §5.2: a Read Request beyond the IRD is TERM 0/2/7 carrying the DDP and RDMA headers")
    void readBeyondIrdTerminates_5040_5_2() {
        RdmapPair p = new RdmapPair(RdmapPair.settings(1000, true, 4, 4), RdmapPair.settings(1000, true, 1, 1), 1);
        ByteBuffer src = ByteBuffer.allocateDirect(100);
        StagRegion srcMr = p.stags.register(p.pdB, src, 0, 100, 0, StagAccess.REMOTE_READ);
        StagRegion sinkMr = p.stags.register(p.pdA, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.LOCAL_WRITE);
        p.a.postRead(1, sinkMr.stag(), 0, 10, srcMr.stag(), 0, true);
        p.a.postRead(2, sinkMr.stag(), 10, 10, srcMr.stag(), 10, true);
        p.move(p.a, p.b, p.aToB, true); // both requests reach B before it answers any
        assertEquals(List.of(TermCode.RDMAP_CATASTROPHIC_STREAM), p.evB.localErrors);
        p.pump();
        TerminateMessage t = p.evA.peerTerms.get(0);
        assertEquals(TermCode.RDMAP_CATASTROPHIC_STREAM, t.code());
        assertTrue(t.m() && t.d() && t.r());
        assertEquals(46, t.ddpSegmentLength());
        assertEquals(2, ByteBuffer.wrap(t.ddpHeader()).getInt(DdpHeader.MSN_OFFSET), "the second Read Request");
        assertEquals(10, ReadRequestHeader.sourceTo(ByteBuffer.wrap(t.rdmapHeader()), 0));
        assertEquals(RdmapEndpoint.State.ERROR, p.a.state());
    }

    @Test
    @DisplayName("RFC 5040 §5.2: no more than ORD Read Requests are outstanding; the next waits on the SQ")
    void ordBoundsOutstandingReads_5040_5_2() {
        RdmapPair p = new RdmapPair(RdmapPair.settings(1000, true, 4, 1), RdmapPair.settings(1000, true, 4, 4), 1);
        ByteBuffer src = ByteBuffer.allocateDirect(100);
        StagRegion srcMr = p.stags.register(p.pdB, src, 0, 100, 0, StagAccess.REMOTE_READ);
        StagRegion sinkMr = p.stags.register(p.pdA, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.LOCAL_WRITE);
        p.a.postRead(1, sinkMr.stag(), 0, 10, srcMr.stag(), 0, true);
        p.a.postRead(2, sinkMr.stag(), 10, 10, srcMr.stag(), 10, true);
        ByteBuffer out = ByteBuffer.allocateDirect(4096);
        p.a.transmit(out);
        assertEquals(Fpdu.fpduLength(46), out.position(), "only one Read Request while ORD = 1");
        assertEquals(1, p.a.readsOutstanding());
        assertFalse(p.a.hasPendingOutput());
        byte[] first = new byte[out.position()];
        out.get(0, first);
        p.deliver(p.b, first);
        p.pump();
        assertEquals(2, p.evA.sendCompletions.size());
        assertTrue(p.evB.localErrors.isEmpty());
    }

    @Test
    @DisplayName("Send-queue completions are reported in posting order: a Send after a Read completes after it")
    void completionsInPostingOrder() {
        RdmapPair p = new RdmapPair(s1000);
        StagRegion srcMr = p.stags.register(p.pdB, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.REMOTE_READ);
        StagRegion sinkMr = p.stags.register(p.pdA, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.LOCAL_WRITE);
        p.b.postReceive(9, ByteBuffer.allocateDirect(10), 0, 10);
        p.a.postRead(1, sinkMr.stag(), 0, 10, srcMr.stag(), 0, true);
        p.a.postSend(2, RdmapOpcode.SEND, direct(new byte[4]), 0, 4, 0, true);
        p.a.transmit(ByteBuffer.allocateDirect(4096));
        assertTrue(p.evA.sendCompletions.isEmpty(), "Send sent, but the earlier Read is not complete");
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2 via RDMAP: a Write to an unknown STag is TERM 1/1/0 with the offending DDP header")
    void writeToInvalidStag_5041_7_2() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer mem = ByteBuffer.allocateDirect(100);
        StagRegion mr = p.stags.register(p.pdB, mem, 0, 100, 0, StagAccess.REMOTE_WRITE);
        p.a.postWrite(1, direct(new byte[50]), 0, 50, mr.stag() + 0x100, 0, true);
        p.a.postWrite(2, direct(pattern(50, 1)), 0, 50, mr.stag(), 0, true);
        p.pump();
        assertEquals(List.of(TermCode.DDP_TAGGED_INVALID_STAG), p.evB.localErrors);
        TerminateMessage t = p.evA.peerTerms.get(0);
        assertEquals(TermCode.DDP_TAGGED_INVALID_STAG, t.code());
        assertTrue(t.m() && t.d() && !t.r());
        assertEquals(64, t.ddpSegmentLength());
        ByteBuffer h = ByteBuffer.wrap(t.ddpHeader());
        assertEquals(14, h.capacity());
        assertEquals(0xC140, h.getShort(0) & 0xFFFF);
        assertEquals(mr.stag() + 0x100, h.getInt(DdpHeader.STAG_OFFSET));
        assertArrayEquals(new byte[100], read(mem, 0, 100), "the later, valid Write was dropped silently");
    }

    @Test
    @DisplayName("siw TERM wire format: 0x4147, QN 2, MSN 1, MO 0, control word, DDP segment length, header")
    void terminateWireFormat_5040_4_8() {
        RdmapPair p = new RdmapPair(s1000);
        p.a.postSend(1, RdmapOpcode.SEND, direct(new byte[3]), 0, 3, 0, true); // no receive posted at B
        p.pump();
        assertEquals(List.of(TermCode.DDP_UNTAGGED_MSN_NO_BUFFER), p.evB.localErrors);
        List<ByteBuffer> term = ulpdus(p.bToA.toByteArray());
        assertEquals(1, term.size(), "exactly one more message after the error: the TERM");
        ByteBuffer t = term.get(0);
        assertEquals(18 + 4 + 2 + 18, t.limit());
        assertEquals(0x4147, t.getShort(0) & 0xFFFF);
        DdpHeader h = new DdpHeader().wrap(t, 0);
        assertEquals(2, h.qn());
        assertEquals(1, h.msn());
        assertEquals(0, h.mo());
        assertEquals(0x1202_0000 | TerminateCodec.HDRCT_M | TerminateCodec.HDRCT_D, t.getInt(18));
        assertEquals(21, t.getShort(22), "DDP segment length of the offending Send");
        assertEquals(0x4143, t.getShort(24) & 0xFFFF, "offending DDP header follows");
    }

    @Test
    @DisplayName("RFC 5044 §4.4: a corrupted FPDU is TERM 2/0/2 without headers")
    void crcErrorTerminates_5044_4_4() {
        RdmapPair p = new RdmapPair(s1000);
        p.b.postReceive(1, ByteBuffer.allocateDirect(100), 0, 100);
        p.tamperAtoB = bytes -> {
            bytes[10] ^= 1;
            return bytes;
        };
        p.a.postSend(1, RdmapOpcode.SEND, direct(new byte[30]), 0, 30, 0, true);
        p.pump();
        assertEquals(List.of(TermCode.MPA_CRC_ERROR), p.evB.localErrors);
        TerminateMessage t = p.evA.peerTerms.get(0);
        assertEquals(TermCode.MPA_CRC_ERROR, t.code());
        assertFalse(t.m() || t.d() || t.r());
        assertTrue(p.evB.receives.isEmpty());
    }

    @Test
    @DisplayName("RFC 5041 §7.1: after a local error only the TERM goes out; flush reports every outstanding request")
    void oneMoreMessageThenFlush_5041_7_1() {
        RdmapPair p = new RdmapPair(s1000);
        p.b.postReceive(40, ByteBuffer.allocateDirect(100), 0, 100);
        p.b.postSend(41, RdmapOpcode.SEND, direct(new byte[10]), 0, 10, 0, true);
        p.b.terminate(TermCode.RDMAP_CATASTROPHIC_STREAM, "test abort");
        ByteBuffer out = ByteBuffer.allocateDirect(4096);
        p.b.transmit(out);
        assertEquals(Fpdu.fpduLength(18 + 4), out.position(), "just the TERM, no header appended");
        assertEquals(0, p.b.transmit(out), "nothing after the TERM");
        assertEquals(RdmapEndpoint.State.ERROR, p.b.state());
        p.b.flush();
        assertEquals(2, p.evB.flushed.size());
        assertArrayEquals(new long[] {41, 0}, p.evB.flushed.get(0));
        assertArrayEquals(new long[] {40, 1}, p.evB.flushed.get(1));
        assertThrows(IllegalStateException.class, () -> p.b.postReceive(1, ByteBuffer.allocateDirect(1), 0, 1));
    }

    @Test
    @DisplayName("RFC 6581 §5 / siw: Write RTR is a zero-length Write to STag 1, TO 0; Read RTR a zero-length Read")
    void rtrMessages_6581_5() {
        RdmapPair p = new RdmapPair(s1000);
        p.a.postWriteRtr();
        p.pump();
        assertEquals(1, p.evB.firstFpdu);
        assertTrue(p.evB.localErrors.isEmpty());
        ByteBuffer w = ulpdus(p.aToB.toByteArray()).get(0);
        assertEquals(14, w.limit());
        assertEquals(0xC140, w.getShort(0) & 0xFFFF);
        assertEquals(1, w.getInt(2));
        assertEquals(0, w.getLong(6));
        assertTrue(p.evA.sendCompletions.isEmpty(), "RTR is unsignalled");

        RdmapPair q = new RdmapPair(s1000);
        q.a.postReadRtr();
        q.move(q.a, q.b, q.aToB, true);
        assertEquals(1, q.a.readsOutstanding(), "a Read RTR takes an ORD slot");
        q.pump();
        assertEquals(0, q.a.readsOutstanding());
        ByteBuffer r = ulpdus(q.aToB.toByteArray()).get(0);
        assertEquals(0, ReadRequestHeader.sinkStag(r, 18));
        assertEquals(1, ReadRequestHeader.sourceStag(r, 18));
        assertEquals(0, ReadRequestHeader.size(r, 18));
        ByteBuffer resp = ulpdus(q.bToA.toByteArray()).get(0);
        assertEquals(0xC142, resp.getShort(0) & 0xFFFF);
        assertEquals(14, resp.limit());
        assertTrue(q.evA.localErrors.isEmpty() && q.evB.localErrors.isEmpty());
        assertTrue(q.evA.sendCompletions.isEmpty());
    }

    /** Writes one raw DDP segment as an FPDU into B. */
    static void inject(RdmapPair p, ByteBuffer ulpdu, boolean crc) {
        FpduEncoder enc = new FpduEncoder(crc, false);
        ByteBuffer out = ByteBuffer.allocateDirect(Fpdu.maxWireLength(ulpdu.capacity(), false));
        out.put(enc.ulpduIndex(out), ulpdu, 0, ulpdu.capacity());
        enc.finish(out, ulpdu.capacity());
        out.flip();
        p.b.receive(out);
    }

    @Test
    @DisplayName("RFC 5040 §4.8: a Read Response with no Read outstanding is TERM 0/2/6 (unexpected opcode)")
    void unsolicitedReadResponse_5040_4_8() {
        RdmapPair p = new RdmapPair(s1000);
        StagRegion mr = p.stags.register(p.pdB, ByteBuffer.allocateDirect(10), 0, 10, 0, StagAccess.ALL);
        ByteBuffer seg = ByteBuffer.allocateDirect(14 + 4);
        new DdpHeader().wrap(seg, 0).putTagged(true, RdmapOpcode.control(RdmapOpcode.READ_RESPONSE), mr.stag(), 0);
        inject(p, seg, true);
        assertEquals(List.of(TermCode.RDMAP_UNEXPECTED_OPCODE), p.evB.localErrors);
    }

    @Test
    @DisplayName("RFC 5040 §4.1/§4.8: RDMAP version other than 1 is TERM 0/2/5")
    void invalidRdmapVersion_5040_4_1() {
        RdmapPair p = new RdmapPair(s1000);
        p.b.postReceive(1, ByteBuffer.allocateDirect(10), 0, 10);
        ByteBuffer seg = ByteBuffer.allocateDirect(18);
        new DdpHeader().wrap(seg, 0).putUntagged(true, 0x80 | RdmapOpcode.SEND, 0, 0, 1, 0);
        inject(p, seg, true);
        assertEquals(List.of(TermCode.RDMAP_INVALID_VERSION), p.evB.localErrors);
        assertTrue(p.evB.receives.isEmpty());
    }

    @Test
    @DisplayName("RFC 5040 §4.3: a Terminate opcode on QN 0 or a Send on QN 1 is TERM 0/2/6")
    void opcodeQueueMismatch_5040_4_3() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer seg = ByteBuffer.allocateDirect(18 + 28);
        new DdpHeader().wrap(seg, 0).putUntagged(true, RdmapOpcode.control(RdmapOpcode.SEND), 0, 1, 1, 0);
        inject(p, seg, true);
        assertEquals(List.of(TermCode.RDMAP_UNEXPECTED_OPCODE), p.evB.localErrors);
    }

    @Test
    @DisplayName("RFC 5040 §5.2: a Read Request whose source lacks remote read is TERM 0/1/2 with the RDMA header")
    void readSourceAccessViolation_5040_5_2() {
        RdmapPair p = new RdmapPair(s1000);
        StagRegion src = p.stags.register(p.pdB, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.REMOTE_WRITE);
        StagRegion sink = p.stags.register(p.pdA, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.LOCAL_WRITE);
        p.a.postRead(1, sink.stag(), 0, 10, src.stag(), 0, true);
        p.pump();
        assertEquals(List.of(TermCode.RDMAP_ACCESS_VIOLATION), p.evB.localErrors);
        TerminateMessage t = p.evA.peerTerms.get(0);
        assertTrue(t.r());
        assertEquals(src.stag(), ReadRequestHeader.sourceStag(ByteBuffer.wrap(t.rdmapHeader()), 0));
    }

    @Test
    @DisplayName("RFC 5041 §8.3: revoking a Read source after the request was accepted stops the response (TERM 0/1/0)")
    void revokeDuringReadResponse_5041_8_3() {
        RdmapPair p = new RdmapPair(s1000);
        StagRegion src = p.stags.register(p.pdB, ByteBuffer.allocateDirect(5000), 0, 5000, 0, StagAccess.REMOTE_READ);
        StagRegion sink = p.stags.register(p.pdA, ByteBuffer.allocateDirect(5000), 0, 5000, 0, StagAccess.LOCAL_WRITE);
        p.a.postRead(1, sink.stag(), 0, 5000, src.stag(), 0, true);
        p.move(p.a, p.b, p.aToB, true);
        assertEquals(1, p.b.readResponsesPending());
        p.stags.invalidate(src.stag(), p.pdB);
        p.pump();
        assertEquals(List.of(TermCode.RDMAP_INVALID_STAG), p.evB.localErrors);
        assertTrue(p.evA.sendCompletions.isEmpty());
        assertEquals(TermCode.RDMAP_INVALID_STAG, p.evA.peerTerms.get(0).code());
    }

    @Test
    @DisplayName("RFC 5041 §6.2 / RFC 5040 §4.8: after the peer's TERM nothing more is delivered or sent, and no TERM goes back")
    void abortiveTeardownOnPeerTerm_5041_6_2() {
        RdmapPair p = new RdmapPair(s1000);
        p.a.postReceive(1, ByteBuffer.allocateDirect(100), 0, 100);
        p.b.terminate(TermCode.RDMAP_CATASTROPHIC_GLOBAL, "test");
        p.pump();
        assertEquals(TermCode.RDMAP_CATASTROPHIC_GLOBAL, p.evA.peerTerms.get(0).code());
        assertEquals(RdmapEndpoint.State.ERROR, p.a.state());
        assertEquals(0, p.bToA.size() - Fpdu.fpduLength(22), "B sent only its TERM");
        assertEquals(0, p.aToB.size(), "A answers a TERM with nothing");
        // A later well-formed Send from a (misbehaving) peer is ignored.
        ByteBuffer seg = ByteBuffer.allocateDirect(18 + 4);
        new DdpHeader().wrap(seg, 0).putUntagged(true, RdmapOpcode.control(RdmapOpcode.SEND), 0, 0, 1, 0);
        FpduEncoder enc = new FpduEncoder(true, false);
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        out.put(enc.ulpduIndex(out), seg, 0, 22);
        enc.finish(out, 22);
        out.flip();
        p.a.receive(out);
        assertTrue(p.evA.receives.isEmpty());
        assertTrue(p.evA.localErrors.isEmpty());
        assertThrows(IllegalStateException.class, () -> p.a.postSend(1, RdmapOpcode.SEND, direct(new byte[1]), 0, 1,
                0, true));
        p.a.flush();
        assertArrayEquals(new long[] {1, 1}, p.evA.flushed.get(0));
    }

    @Test
    @DisplayName("RFC 5040 §5.2: a Read Response outside the window its Read Request named is rejected (1/1/1)")
    void readResponseOutsideRequestedWindow_5040_5_2() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer sinkMem = ByteBuffer.allocateDirect(1000);
        StagRegion sink = p.stags.register(p.pdB, sinkMem, 0, 1000, 0, StagAccess.LOCAL_WRITE);
        // B reads 10 bytes into [100, 110) of its sink; a forged response targets [500, 510) of the same STag.
        p.b.postRead(1, sink.stag(), 100, 10, 0x777, 0, true);
        p.b.transmit(ByteBuffer.allocateDirect(4096));
        ByteBuffer seg = ByteBuffer.allocateDirect(14 + 10);
        new DdpHeader().wrap(seg, 0).putTagged(true, RdmapOpcode.control(RdmapOpcode.READ_RESPONSE), sink.stag(), 500);
        inject(p, seg, true);
        assertEquals(List.of(TermCode.DDP_TAGGED_BASE_BOUNDS), p.evB.localErrors);
        assertArrayEquals(new byte[1000], read(sinkMem, 0, 1000));
    }

    @Test
    @DisplayName("RFC 5040 §5.2: a Read Response naming another STag than its Read Request's sink is rejected (1/1/0)")
    void readResponseNamingAnotherStag_5040_5_2() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer sinkMem = ByteBuffer.allocateDirect(100);
        ByteBuffer otherMem = ByteBuffer.allocateDirect(100);
        StagRegion sink = p.stags.register(p.pdB, sinkMem, 0, 100, 0, StagAccess.LOCAL_WRITE);
        StagRegion other = p.stags.register(p.pdB, otherMem, 0, 100, 0, StagAccess.LOCAL_WRITE);
        // B reads 10 bytes into [0, 10) of sink; a forged response targets the same range of another live STag.
        p.b.postRead(1, sink.stag(), 0, 10, 0x777, 0, true);
        p.b.transmit(ByteBuffer.allocateDirect(4096));
        ByteBuffer seg = ByteBuffer.allocateDirect(14 + 10);
        new DdpHeader().wrap(seg, 0).putTagged(true, RdmapOpcode.control(RdmapOpcode.READ_RESPONSE), other.stag(), 0);
        inject(p, seg, true);
        assertEquals(List.of(TermCode.DDP_TAGGED_INVALID_STAG), p.evB.localErrors);
        assertArrayEquals(new byte[100], read(otherMem, 0, 100));
    }

    @Test
    void postingRejectsBadArguments() {
        RdmapPair p = new RdmapPair(s1000);
        assertThrows(IllegalArgumentException.class,
                () -> p.a.postSend(1, RdmapOpcode.WRITE, direct(new byte[1]), 0, 1, 0, true));
        assertThrows(IllegalArgumentException.class,
                () -> p.a.postSend(1, RdmapOpcode.SEND, direct(new byte[1]), 0, 2, 0, true));
        assertThrows(IllegalArgumentException.class, () -> p.a.postRead(1, 0x12345, 0, 10, 1, 0, true));
        assertThrows(IllegalArgumentException.class,
                () -> new RdmapSettings(100, true, false, 1, 1, 1, 1), "MULPDU below 128");
        RdmapPair noOrd = new RdmapPair(RdmapPair.settings(1000, false, 0, 0));
        assertThrows(IllegalStateException.class, () -> noOrd.a.postRead(1, 0x12345, 0, 10, 1, 0, true),
                "ORD 0: no ULP Read");
        // The Read RTR is not a ULP Read: it keeps its one slot at ORD 0 (RFC 6581 §9.1).
        noOrd.a.postReadRtr();
        assertTrue(noOrd.a.hasPendingOutput());
    }

    @Test
    @DisplayName("RFC 5040 §5.2: a Read Response does not start between the segments of a Write already on the wire")
    void readResponseWaitsForWriteInProgress_5040_5_2() {
        RdmapPair p = new RdmapPair(s1000);
        ByteBuffer memA = ByteBuffer.allocateDirect(20_000);
        StagRegion sinkOfWrite = p.stags.register(p.pdA, memA, 0, 20_000, 0x10_0000, StagAccess.REMOTE_WRITE);
        ByteBuffer readSink = ByteBuffer.allocateDirect(5000);
        StagRegion readSinkMr = p.stags.register(p.pdA, readSink, 0, 5000, 0x9000, StagAccess.LOCAL_WRITE);
        ByteBuffer src = ByteBuffer.allocateDirect(5000);
        src.put(0, pattern(5000, 5));
        StagRegion srcMr = p.stags.register(p.pdB, src, 0, 5000, 0x2000, StagAccess.REMOTE_READ);
        byte[] msg = pattern(10_000, 3);
        p.b.postWrite(8, direct(msg), 0, msg.length, sinkOfWrite.stag(), 0x10_0000, true);
        // B puts the first two segments of its Write on the wire, then A's Read Request arrives
        ByteBuffer small = ByteBuffer.allocateDirect(2 * p.b.maxFpduWireLength());
        int n = p.b.transmit(small);
        byte[] first = new byte[n];
        small.get(0, first);
        p.bToA.writeBytes(first);
        p.deliver(p.a, first);
        p.a.postRead(3, readSinkMr.stag(), 0x9000, 4000, srcMr.stag(), 0x2000, true);
        p.pump();
        assertTrue(p.evA.localErrors.isEmpty(), "A refused B's stream: " + p.evA.localErrors);
        assertArrayEquals(msg, read(memA, 0, msg.length));
        assertArrayEquals(read(src, 0, 4000), read(readSink, 0, 4000));
        // on the wire from B: every Write segment (0x40 opcode) before the first Read Response one
        List<ByteBuffer> segs = ulpdus(p.bToA.toByteArray());
        int lastWrite = -1;
        int firstResponse = Integer.MAX_VALUE;
        for (int k = 0; k < segs.size(); k++) {
            int op = RdmapOpcode.opcode(segs.get(k).get(1) & 0xFF);
            if (op == RdmapOpcode.WRITE) {
                lastWrite = k;
            } else if (op == RdmapOpcode.READ_RESPONSE) {
                firstResponse = Math.min(firstResponse, k);
            }
        }
        assertTrue(lastWrite >= 0 && firstResponse > lastWrite, "segments interleaved: last Write segment "
                + lastWrite + ", first Read Response segment " + firstResponse);
    }
}
