package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;

import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Zero-copy transmit reads registered memory until the socket took it; once a WR completed with
 * WR_FLUSH_ERR (RFC 5040 §6.2.2 abnormal termination) its buffer is the application's again, so
 * no byte written to the peer after that may come from it.
 */
class FlushedSendBufferTest {

    private static final byte OLD = (byte) 0xA5;
    private static final byte NEW = (byte) 0x5A;

    @Test
    @DisplayName("RFC 5040 §6.2.2: a flushed Send's buffer is no longer read; the peer never sees bytes written after the flush")
    void flushedSendBufferIsNotReadAfterTheFlush_5040_6_2_2() throws Exception {
        try (SoftFixture f = new SoftFixture(RawPeer.stallConfig(Duration.ofMillis(200)))) {
            try (RawPeer p = RawPeer.connect(f)) {
                RawInitiator raw = p.raw();
                Connection c = p.conn();
                raw.writeRtr().flush(); // the responder sends FPDUs only after the initiator's first (RFC 5044 §7.1.2)
                int size = 4 << 20;
                SoftMemoryRegion mr = f.region(f.pd2, size, Access.LOCAL_WRITE);
                ByteBuffer mem = mr.buffer();
                for (int i = 0; i < size; i++) {
                    mem.put(i, OLD);
                }
                int sends = 8; // 32 MiB: far more than loopback socket buffers hold while the peer does not read
                for (int i = 0; i < sends; i++) {
                    c.queuePair().postSend(new SendRequest().send(100 + i, mr, 0, size));
                }
                // a partial FPDU that never completes: the stall timer tears the stream down (local error)
                byte[] partial = new byte[12];
                partial[0] = (byte) 0xFF;
                partial[1] = (byte) 0xFF;
                raw.peer.send(partial);
                WorkCompletion wc = SoftFixture.one(f.cq2);
                while (wc.status == WcStatus.SUCCESS) { // the Sends the socket buffers took whole
                    wc = SoftFixture.one(f.cq2);
                }
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status, "the Sends flush");
                for (int i = 0; i < size; i++) {
                    mem.put(i, NEW); // the application reuses its buffer
                }
                // now the peer reads everything it is given until the close
                raw.peer.socket.setSoTimeout(5000);
                InputStream in = raw.peer.socket.getInputStream();
                byte[] b = new byte[1 << 16];
                long total = 0;
                int run = 0;
                int longestNewRun = 0;
                try {
                    for (int n; (n = in.read(b)) >= 0; ) {
                        for (int i = 0; i < n; i++) {
                            run = b[i] == NEW ? run + 1 : 0;
                            longestNewRun = Math.max(longestNewRun, run);
                        }
                        total += n;
                    }
                } catch (SocketTimeoutException e) {
                    throw new AssertionError("the stream did not close after the flush (" + total + " bytes read)");
                } catch (IOException e) {
                    // reset: what came before it was checked
                }
                assertTrue(total > 0, "the peer got the bytes queued before the teardown");
                assertTrue(longestNewRun < 16, "the peer received " + longestNewRun
                        + " bytes of the buffer as rewritten after its WR flushed (" + total + " bytes read)");
            }
        }
    }
}
