package org.jwarp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.junit.jupiter.api.Test;

/** A connection request is answered once; a second answer is an error naming the initiator, or saying it is unknown. */
class NegotiatedRequestTest {

    /** A request whose accept and reject only mark it answered. */
    private static final class Request extends NegotiatedRequest {
        Request(InetSocketAddress remote) throws Exception {
            super(CmNegotiationTest.SIW.responder(CmNegotiationTest.ev(CmNegotiationTest.CONNECT_REQUEST, 2, 4, new byte[0])),
                    remote);
        }

        @Override
        public Connection accept(QueuePairConfig qp, ConnectionParameters params) throws RdmaException {
            decide();
            return null;
        }

        @Override
        public void reject(byte[] privateData) throws RdmaException {
            decide();
        }
    }

    @Test
    void aSecondAnswerNamesTheInitiator() throws Exception {
        Request r = new Request(new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 0, 2}), 7000));
        r.reject(null);
        RdmaException e = assertThrows(RdmaException.class, () -> r.reject(null));
        assertEquals("connection request from /10.0.0.2:7000 was already accepted or rejected", e.getMessage());
    }

    @Test
    void aSecondAnswerToARequestFromAnUnknownAddressSaysSo() throws Exception {
        Request r = new Request(null);
        r.accept(null, null);
        RdmaException e = assertThrows(RdmaException.class, () -> r.reject(null));
        assertEquals("connection request from an unknown address was already accepted or rejected", e.getMessage());
    }
}
