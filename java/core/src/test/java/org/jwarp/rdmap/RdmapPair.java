package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;

/** Two endpoints joined by an in-memory byte pipe cut into random chunks, with recording listeners. */
final class RdmapPair {

    static final class Events implements RdmapListener {
        final List<long[]> sendCompletions = new ArrayList<>(); // wrId, opcode, length
        final List<long[]> receives = new ArrayList<>(); // wrId, opcode, length, invalidated
        final List<TermCode> localErrors = new ArrayList<>();
        final List<TerminateMessage> peerTerms = new ArrayList<>();
        final List<long[]> flushed = new ArrayList<>();
        final List<Long> revokedReceives = new ArrayList<>();

        @Override
        public void onReceiveRevoked(long wrId) {
            revokedReceives.add(wrId);
        }
        int firstFpdu;

        @Override
        public void onSendCompletion(long wrId, int opcode, int byteLength) {
            sendCompletions.add(new long[] {wrId, opcode, byteLength});
        }

        @Override
        public void onReceiveCompletion(long wrId, int opcode, int byteLength, int invalidatedStag) {
            receives.add(new long[] {wrId, opcode, byteLength, invalidatedStag});
        }

        @Override
        public void onLocalError(TermCode code, String detail) {
            localErrors.add(code);
        }

        @Override
        public void onPeerTerminate(TerminateMessage term) {
            peerTerms.add(term);
        }

        @Override
        public void onFirstFpdu() {
            firstFpdu++;
        }

        @Override
        public void onFlushed(long wrId, boolean receiveQueue) {
            flushed.add(new long[] {wrId, receiveQueue ? 1 : 0});
        }
    }

    final StagTable stags = new StagTable(64);
    final StagDomain pdA = new StagDomain();
    final StagDomain pdB = new StagDomain();
    final Events evA = new Events();
    final Events evB = new Events();
    final RdmapEndpoint a;
    final RdmapEndpoint b;
    final Random random;
    final ByteBuffer wire = ByteBuffer.allocateDirect(1 << 20);
    /** Every byte A sent / B sent, for wire-format assertions. */
    final java.io.ByteArrayOutputStream aToB = new java.io.ByteArrayOutputStream();
    final java.io.ByteArrayOutputStream bToA = new java.io.ByteArrayOutputStream();
    /** Optional tamper hook on A's outgoing bytes. */
    UnaryOperator<byte[]> tamperAtoB = UnaryOperator.identity();

    RdmapPair(RdmapSettings sa, RdmapSettings sb, long seed) {
        a = new RdmapEndpoint(sa, pdA, stags, evA);
        b = new RdmapEndpoint(sb, pdB, stags, evB);
        random = new Random(seed);
    }

    RdmapPair(RdmapSettings s) {
        this(s, s, 1);
    }

    /** Moves bytes both ways until neither side has anything to send. */
    void pump() {
        for (int round = 0; round < 10_000; round++) {
            boolean moved = move(a, b, aToB, true) | move(b, a, bToA, false);
            if (!moved) {
                return;
            }
        }
        throw new AssertionError("pump did not quiesce");
    }

    /** One transmit of {@code from} delivered to {@code to}; returns whether bytes moved. */
    boolean move(RdmapEndpoint from, RdmapEndpoint to, java.io.ByteArrayOutputStream log, boolean aSide) {
        wire.clear();
        int n = from.transmit(wire);
        if (n == 0) {
            return false;
        }
        byte[] bytes = new byte[n];
        wire.get(0, bytes);
        if (aSide) {
            bytes = tamperAtoB.apply(bytes);
        }
        log.writeBytes(bytes);
        deliver(to, bytes);
        return true;
    }

    void deliver(RdmapEndpoint to, byte[] bytes) {
        int off = 0;
        while (off < bytes.length) {
            int c = Math.min(bytes.length - off, 1 + random.nextInt(3000));
            ByteBuffer chunk = ByteBuffer.allocateDirect(c);
            chunk.put(0, bytes, off, c);
            to.receive(chunk);
            off += c;
        }
    }

    static RdmapSettings settings(int mulpdu, boolean crc, int ird, int ord) {
        return new RdmapSettings(mulpdu, crc, false, ird, ord, 64, 64);
    }
}
