package org.jwarp.soft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Arrays;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.Fpdu;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.rdmap.ReadRequestHeader;

/**
 * A hand-driven iWARP initiator over a raw socket: it performs the MPA exchange with chosen
 * fields, then writes FPDUs built with the wire engine's encoders, so tests can send exactly the
 * segments a misbehaving peer would.
 */
final class RawInitiator implements AutoCloseable {
    final EvilPeer peer;
    final MpaFrame reply;
    private final FpduEncoder enc;
    private final ByteBuffer out = ByteBuffer.allocate(1 << 20);
    private final DdpHeader hdr = new DdpHeader();
    private int sendMsn;
    private int readMsn;

    private RawInitiator(EvilPeer peer, MpaFrame reply, boolean crc) {
        this.peer = peer;
        this.reply = reply;
        this.enc = new FpduEncoder(crc, false);
    }

    /** Connects and exchanges MPA frames: P2P with the given RTR flags (B, C, D) and IRD/ORD. */
    static RawInitiator connect(InetSocketAddress a, boolean send, boolean write, boolean read, int ird, int ord)
            throws Exception {
        EvilPeer p = EvilPeer.connect(a);
        boolean p2p = send || write || read;
        p.send(MpaFrame.request().crc(true).revision(2)
                .enhancedData(new EnhancedConnectionData(p2p, send, write, read, ird, ord)).build().toBytes());
        MpaFrame rep = MpaFrame.decode(p.readFrame(), MpaFrameLimits.RFC);
        return new RawInitiator(p, rep, rep.crc());
    }

    /** Queues a zero-length RDMA Write to STag 1, TO 0 (siw's Write RTR). */
    RawInitiator writeRtr() {
        return write(1, 0, new byte[0]);
    }

    RawInitiator write(int stag, long to, byte[] payload) {
        int u = enc.ulpduIndex(out);
        hdr.wrap(out, u).putTagged(true, RdmapOpcode.control(RdmapOpcode.WRITE), stag, to);
        out.put(u + DdpHeader.TAGGED_HEADER_LENGTH, payload);
        enc.finish(out, DdpHeader.TAGGED_HEADER_LENGTH + payload.length);
        return this;
    }

    RawInitiator send(byte[] payload) {
        int u = enc.ulpduIndex(out);
        hdr.wrap(out, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.SEND), 0, RdmapOpcode.QN_SEND, ++sendMsn, 0);
        out.put(u + DdpHeader.UNTAGGED_HEADER_LENGTH, payload);
        enc.finish(out, DdpHeader.UNTAGGED_HEADER_LENGTH + payload.length);
        return this;
    }

    /** Queues a Send with Invalidate naming {@code stag} (RFC 5040 §4.4: the STag in the Invalidate STag field). */
    RawInitiator sendInvalidate(int stag, byte[] payload) {
        int u = enc.ulpduIndex(out);
        hdr.wrap(out, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.SEND_INVALIDATE), stag,
                RdmapOpcode.QN_SEND, ++sendMsn, 0);
        out.put(u + DdpHeader.UNTAGGED_HEADER_LENGTH, payload);
        enc.finish(out, DdpHeader.UNTAGGED_HEADER_LENGTH + payload.length);
        return this;
    }

    RawInitiator readRequest(int sinkStag, long sinkTo, int size, int srcStag, long srcTo) {
        int u = enc.ulpduIndex(out);
        hdr.wrap(out, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.READ_REQUEST), 0,
                RdmapOpcode.QN_READ_REQUEST, ++readMsn, 0);
        ReadRequestHeader.put(out, u + DdpHeader.UNTAGGED_HEADER_LENGTH, sinkStag, sinkTo, size, srcStag, srcTo);
        enc.finish(out, DdpHeader.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH);
        return this;
    }

    /** Flips the last queued byte (to break a CRC). */
    RawInitiator corruptLastByte() {
        out.put(out.position() - 1, (byte) (out.get(out.position() - 1) ^ 0x5A));
        return this;
    }

    /** Takes the queued bytes without sending them (to send them in chosen pieces). */
    byte[] take() {
        byte[] b = Arrays.copyOf(out.array(), out.position());
        out.clear();
        return b;
    }

    /** Writes everything queued in one TCP send. */
    RawInitiator flush() throws IOException {
        peer.send(Arrays.copyOf(out.array(), out.position()));
        out.clear();
        return this;
    }

    @Override
    public void close() throws IOException {
        peer.close();
    }

    /**
     * Reads every FPDU until the stream ends or goes quiet and returns the tagged payload bytes
     * read; fails when a tagged payload byte equals {@code guard} (memory the application
     * overwrote {@code after} the source was fenced, RFC 5041 §8.3.1 (6)).
     */
    long drainTaggedWithout(byte guard, String after) {
        long payload = 0;
        try {
            while (true) {
                byte[] fpdu = peer.readFpdu();
                int ulpdu = ((fpdu[0] & 0xFF) << 8) | (fpdu[1] & 0xFF);
                int u = Fpdu.ULPDU_OFFSET;
                if ((fpdu[u] & 0x80) == 0) {
                    continue; // untagged: the TERM
                }
                for (int i = u + 14; i < u + ulpdu; i++) {
                    if (fpdu[i] == guard) {
                        throw new AssertionError("a byte written after " + after + " reached the peer, "
                                + (payload + i - u - 14) + " payload bytes in");
                    }
                }
                payload += ulpdu - 14;
            }
        } catch (SocketTimeoutException | java.io.EOFException e) {
            // the stream ended (TERM and close) or went quiet
        } catch (IOException e) {
            // reset by the responder after its TERM
        }
        return payload;
    }
}
