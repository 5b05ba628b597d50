package org.jwarp.provider;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.mpa.MpaRequestReplyFlyweight;
import org.jwarp.negotiation.CmPrivateData;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.negotiation.PeerRequest;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.negotiation.ResponderNegotiator;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.RdmaException;

/**
 * Drives the project's RFC 6581 §9 engines ({@link InitiatorNegotiator}, {@link ResponderNegotiator})
 * over rdma_cm, so the device providers (DiSNI, ffm) decide and validate IRD/ORD exactly like the
 * soft provider and put the same values and private data into {@code rdma_conn_param}.
 *
 * <p><b>iWARP (kernel MPA).</b> The provider's MPA layer sends the enhanced data itself from
 * {@code rdma_conn_param} ({@code responder_resources} = IRD, {@code initiator_depth} = ORD,
 * RFC 6581 §9.1) and strips it from received private data. The values a CM event reports are
 * turned back into the MPA frame they stand for and fed to the engine, which validates them: the
 * request's values at CONNECT_REQUEST (peer IRD in {@code initiator_depth}, peer ORD in
 * {@code responder_resources}; 0/0 is a Rev 1 peer without enhanced data, RFC 6581 §10), the
 * responder's at ESTABLISHED. Providers fill these differently, so the event is read per
 * {@link EventReading}: siw reports the values it adopted from the Reply, cxgb4 swaps them, irdma
 * leaves the request's ORD 0. A reading that a conforming responder cannot have produced (its ORD
 * above our IRD, §9.1) is tried swapped and otherwise refused by the engine with TERM code 6. The
 * peer-to-peer model and RTR type are provider policy that rdma_cm can neither set nor report, so
 * the engines run client-server here and {@link ConnectionInfo#peerToPeer()} is false; MPA CRC
 * (RFC 5044 §7.1.1 C) is provider policy too and unobservable, so {@link ConnectionInfo#crc()} is
 * false although Linux siw uses CRC when the peer's Reply sets C.
 *
 * <p><b>RoCE / InfiniBand (IB CM).</b> No MPA exists; the engine's frame travels as
 * {@link CmPrivateData} (4 bytes of enhanced data, the ULP length byte, then the ULP's). The IB
 * CM pads private data to fixed sizes (REQ {@value #IB_REQ_PRIVATE_DATA}, REP
 * {@value #IB_REP_PRIVATE_DATA}, REJ {@value #IB_REJ_PRIVATE_DATA} bytes for RDMA_PS_TCP) and
 * reports the padded length; CmPrivateData's explicit length keeps that padding out of the ULP's
 * data. The A flag and RTR types are negotiated as offered;
 * no RTR message is sent, the IB CM's RTU (ESTABLISHED at the responder) plays its role.
 *
 * <p>Local values never exceed the device ({@code max_qp_rd_atom} for IRD,
 * {@code max_qp_init_rd_atom} for ORD) nor the u8 of {@code rdma_conn_param}; 0x3FFF ("no
 * automatic negotiation") becomes the device maximum, as rdma_cm cannot carry it.
 */
public final class CmNegotiation {
    /** rdma_conn_param.responder_resources / initiator_depth / private_data_len are u8. */
    public static final int CONN_PARAM_MAX = 255;
    /** rdma_cm over the IB CM, RDMA_PS_TCP: REQ private data after the 36-byte cma header. */
    public static final int IB_REQ_PRIVATE_DATA = 56;
    /** IB CM REP private data. */
    public static final int IB_REP_PRIVATE_DATA = 196;
    /** IB CM REJ private data. */
    public static final int IB_REJ_PRIVATE_DATA = 148;
    /** IB CM reject reason of a consumer's rdma_reject (IBA 12.6.7.2, reason 28). */
    public static final int IB_REJ_CONSUMER_DEFINED = 28;
    /** iWARP REJECTED status of an MPA Reply with R set (siw reports -ECONNRESET; -ECONNREFUSED is a TCP refusal). */
    public static final int IW_MPA_REJECT = -104;
    /** Private-data limits of the engines on RoCE: the u8 length of rdma_conn_param. */
    public static final MpaFrameLimits ROCE_LIMITS = new MpaFrameLimits(CONN_PARAM_MAX, CONN_PARAM_MAX);
    /** Kernel iWARP: Linux siw's 256 bytes on the wire, at most 251 of them the ULP's. */
    public static final MpaFrameLimits IWARP_LIMITS = MpaFrameLimits.SIW;

    /** How a kernel iWARP provider fills the IRD/ORD fields of rdma_cm events (shared notes §3). */
    public enum EventReading {
        /** siw: CONNECT_REQUEST carries the peer's IRD/ORD, ESTABLISHED the values adopted from the Reply. */
        STANDARD,
        /** cxgb4: ESTABLISHED reports IRD and ORD the other way round. */
        SWAPPED_AT_ESTABLISHED,
        /** irdma/i40iw: CONNECT_REQUEST carries only the IRD, the ORD is left 0 (unknown, not 0). */
        NO_ORD_AT_REQUEST;

        public static EventReading of(String deviceName) {
            String n = deviceName == null ? "" : deviceName.toLowerCase(Locale.ROOT);
            if (n.startsWith("cxgb4") || n.startsWith("iw_cxgb4")) {
                return SWAPPED_AT_ESTABLISHED;
            }
            if (n.startsWith("irdma") || n.startsWith("i40iw")) {
                return NO_ORD_AT_REQUEST;
            }
            return STANDARD;
        }
    }

    private final boolean roce;
    private final EventReading reading;
    private final int maxIrd;
    private final int maxOrd;

    public CmNegotiation(DeviceInfo device) {
        this(device.transport() != DeviceInfo.Transport.IWARP, EventReading.of(device.name()), device.maxQpRdAtom(),
                device.maxQpInitRdAtom());
    }

    public CmNegotiation(boolean roce, EventReading reading, int deviceMaxIrd, int deviceMaxOrd) {
        this.roce = roce;
        this.reading = reading;
        this.maxIrd = cap(deviceMaxIrd);
        this.maxOrd = cap(deviceMaxOrd);
    }

    public boolean roce() {
        return roce;
    }

    public MpaFrameLimits limits() {
        return roce ? ROCE_LIMITS : IWARP_LIMITS;
    }

    private static int cap(int deviceMax) {
        return Math.min(Math.max(deviceMax, 0), CONN_PARAM_MAX);
    }

    /** A local IRD/ORD as rdma_cm can carry it: the request bounded by the device, 0x3FFF = the device maximum. */
    public static int offer(int requested, int deviceCap) {
        return requested == ConnectionParameters.NO_NEGOTIATION ? deviceCap : Math.min(requested, deviceCap);
    }

    // ---- initiator --------------------------------------------------------------------------

    /** One connection attempt of the initiator (RFC 6581 §9.1 request, then the reply). */
    public Initiator initiator(ConnectionParameters p) {
        checkUlp(p.privateData(), IB_REQ_PRIVATE_DATA, "connect request");
        int ird = offer(p.ird(), maxIrd);
        int ord = offer(p.ord(), maxOrd);
        InitiatorConfig base = SetupConfigs.initiator(p, maxIrd, limits());
        InitiatorConfig cfg = base.toBuilder().ird(ird).ord(ord).maxIrd(Math.max(ird, maxIrd))
                .peerToPeer(roce && p.peerToPeer()).fallbackToUnenhanced(false)
                .ulpPrivateData(p.privateData()).build();
        return new Initiator(new InitiatorNegotiator(cfg));
    }

    public final class Initiator {
        public final InitiatorNegotiator engine;
        public final MpaFrame request;

        private Initiator(InitiatorNegotiator engine) {
            this.engine = engine;
            this.request = engine.createRequest();
        }

        /** rdma_conn_param.responder_resources: the IRD offered (RFC 6581 §9.1). */
        public int responderResources() {
            return request.enhancedData().ird();
        }

        /** rdma_conn_param.initiator_depth: the ORD wanted. */
        public int initiatorDepth() {
            return request.enhancedData().ord();
        }

        /** rdma_conn_param.private_data of rdma_connect. */
        public byte[] privateData() {
            return roce ? CmPrivateData.toPrivateData(request) : request.ulpPrivateData();
        }

        /**
         * The engine's decision on the responder's answer, an ESTABLISHED or a consumer REJECTED event.
         *
         * @throws MpaDecodeException when RoCE private data cannot be the RFC 6581 §9 data of a jwarp peer
         */
        public NegotiationDecision onReply(CmEventValues ev, boolean rejected) throws MpaDecodeException {
            MpaFrame reply;
            if (roce) {
                reply = CmPrivateData.toFrame(MpaFrame.Kind.REPLY, rejected, ev.privateData(), ROCE_LIMITS);
            } else {
                reply = iwarpReply(ev, rejected, engine.config().ird());
            }
            return engine.onReply(reply);
        }

        /** The peer's ULP private data from an outcome (RoCE: as CmPrivateData's length delimits it). */
        public byte[] peerPrivateData(NegotiationOutcome o) {
            return o.peerPrivateData();
        }

        /**
         * What a REJECTED event with {@code status} means for the connect to {@code remote}. The
         * responder's ULP refused (an MPA Reply with R set, RFC 5044 §7.1.1, which siw reports as
         * {@value #IW_MPA_REJECT}; on RoCE a consumer-defined IB CM reject): a
         * {@link ConnectionRejectedException} with its private data and IRD/ORD (RFC 6581 §9.1), or
         * with the raw private data when that is not RFC 6581 §9 data. Any other status (no
         * listener, not reachable) is a plain {@link RdmaException}.
         */
        public RdmaException rejected(CmEventValues ev, int status, InetSocketAddress remote) {
            boolean ulp = roce ? status == IB_REJ_CONSUMER_DEFINED : status == IW_MPA_REJECT;
            if (!ulp) {
                return new RdmaException("connect to " + remote + " refused: no listener or not reachable ("
                        + (roce ? "IB CM reject reason " : "status ") + status + ")");
            }
            try {
                NegotiationOutcome o = onReply(ev, true).outcome();
                return new ConnectionRejectedException("connection to " + remote + " rejected by the peer (status "
                        + status + "): " + o.reason(), peerPrivateData(o), o.peerValuesKnown() ? o.peerIrd() : -1,
                        o.peerValuesKnown() ? o.peerOrd() : -1);
            } catch (MpaDecodeException | IllegalArgumentException bad) {
                return new ConnectionRejectedException("connection to " + remote + " rejected by the peer (status "
                        + status + "), private data not RFC 6581 section 9 data: " + bad.getMessage(), ev.privateData());
            }
        }
    }

    /**
     * The MPA Reply an iWARP ESTABLISHED/REJECTED event stands for. The reading that a conforming
     * responder can have produced (its ORD at most our IRD, RFC 6581 §9.1) is chosen; when neither
     * is, the standard reading goes to the engine, which terminates (TERM code 6).
     */
    public MpaFrame iwarpReply(CmEventValues ev, boolean rejected, int localIrd) {
        int rr = checkedPeer("responder_resources", ev.responderResources());
        int id = checkedPeer("initiator_depth", ev.initiatorDepth());
        MpaFrame.Builder b = MpaFrame.reply().reject(rejected).limits(MpaFrameLimits.RFC)
                .ulpPrivateData(ev.privateData());
        if (rr == 0 && id == 0) {
            return b.revision(MpaRequestReplyFlyweight.REVISION_1).build(); // §10: no enhanced data
        }
        int peerIrd = rr;
        int peerOrd = id;
        if (reading == EventReading.SWAPPED_AT_ESTABLISHED || (peerOrd > localIrd && peerIrd <= localIrd)) {
            peerIrd = id;
            peerOrd = rr;
        }
        return b.revision(MpaRequestReplyFlyweight.REVISION_2)
                .enhancedData(new EnhancedConnectionData(false, false, false, false, peerIrd, peerOrd)).build();
    }

    // ---- responder --------------------------------------------------------------------------

    /** One incoming request at the responder. */
    public Responder responder(CmEventValues ev) throws MpaDecodeException {
        MpaFrame req;
        boolean ordUnknown = false;
        if (roce) {
            req = CmPrivateData.toFrame(MpaFrame.Kind.REQUEST, false, ev.privateData(), ROCE_LIMITS);
            req = withIbCmValues(req, ev);
        } else {
            int peerIrd = checkedPeer("initiator_depth", ev.initiatorDepth());
            int peerOrd = checkedPeer("responder_resources", ev.responderResources());
            MpaFrame.Builder b = MpaFrame.request().limits(MpaFrameLimits.RFC).ulpPrivateData(ev.privateData());
            if (peerIrd == 0 && peerOrd == 0) {
                req = b.revision(MpaRequestReplyFlyweight.REVISION_1).build(); // §10: a Rev 1 initiator
            } else {
                if (reading == EventReading.NO_ORD_AT_REQUEST && peerOrd == 0) {
                    peerOrd = EnhancedConnectionData.NO_NEGOTIATION; // not reported: grant what this side can
                    ordUnknown = true;
                }
                req = b.revision(MpaRequestReplyFlyweight.REVISION_2)
                        .enhancedData(new EnhancedConnectionData(false, false, false, false, peerIrd, peerOrd)).build();
            }
        }
        return new Responder(req, ordUnknown);
    }

    /**
     * A RoCE request from a plain rdma_cm consumer (rdma-core's rping, perftest): its private data
     * is the IB CM's zero padding, so the enhanced data reads IRD 0 / ORD 0, while the REQ itself
     * carries the peer's values ({@code initiator_depth} = its IRD, {@code responder_resources} =
     * its ORD at the listener). A jwarp initiator puts the same values in both places, so the
     * REQ's values are taken only when the private data has none (RFC 6581 §9.1).
     */
    private static MpaFrame withIbCmValues(MpaFrame req, CmEventValues ev) {
        EnhancedConnectionData ed = req.enhancedData();
        int peerIrd = checkedPeer("initiator_depth", ev.initiatorDepth());
        int peerOrd = checkedPeer("responder_resources", ev.responderResources());
        if (ed == null || ed.ird() != 0 || ed.ord() != 0 || ed.peerToPeer() || (peerIrd == 0 && peerOrd == 0)) {
            return req;
        }
        return MpaFrame.request().limits(ROCE_LIMITS).ulpPrivateData(req.ulpPrivateData())
                .revision(MpaRequestReplyFlyweight.REVISION_2)
                .enhancedData(new EnhancedConnectionData(false, false, false, false, peerIrd, peerOrd)).build();
    }

    public final class Responder {
        /** Settles the RFC 6581 §9.1 values; only the ULP's accept parameters differ per connection. */
        private ResponderNegotiator engine;
        private final MpaFrame request;
        private final boolean ordUnknown;
        private final NegotiationDecision first;
        private final PeerRequest peer;

        private Responder(MpaFrame request, boolean ordUnknown) throws MpaDecodeException {
            this.request = request;
            this.ordUnknown = ordUnknown;
            this.engine = new ResponderNegotiator(ResponderConfig.builder().maxIrd(maxIrd).ord(maxOrd)
                    .limits(limits()).build());
            this.first = engine.onRequest(request);
            this.peer = engine.peerRequest();
            if (first.action() != NegotiationAction.AWAIT_ACCEPT) {
                throw new MpaDecodeException("connection request", first.outcome().reason(), "RFC 6581 §9");
            }
        }

        /** The request as the ULP sees it. */
        public PeerRequest peer() {
            return peer;
        }

        public int peerIrd() {
            return peer.enhanced() ? peer.ird() : -1;
        }

        public int peerOrd() {
            return peer.enhanced() && !ordUnknown ? peer.ord() : -1;
        }

        public byte[] peerPrivateData() {
            return peer.ulpPrivateData();
        }

        /** The engine's acceptance with the ULP's parameters: IRD/ORD to put into rdma_accept. */
        public NegotiationDecision accept(ConnectionParameters p) {
            checkUlp(p.privateData(), IB_REP_PRIVATE_DATA, "connect reply");
            ResponderConfig cfg = SetupConfigs.responder(p, 0, limits()).toBuilder().maxIrd(offer(p.ird(), maxIrd))
                    .ord(offer(p.ord(), maxOrd)).ulpPrivateData(p.privateData()).build();
            return engine.accept(cfg);
        }

        /** The engine's rejection carrying {@code ulp} (RFC 5044 §7.1.1 R=1). */
        public NegotiationDecision reject(byte[] ulp) {
            byte[] d = ulp == null ? new byte[0] : ulp;
            checkUlp(d, IB_REJ_PRIVATE_DATA, "reject");
            return engine.reject(d);
        }

        /** rdma_conn_param.private_data for the decision's frame (accept or reject). */
        public byte[] privateData(NegotiationDecision d) {
            return roce ? CmPrivateData.toPrivateData(d.frame()) : d.frame().ulpPrivateData();
        }
    }

    // ---- shared -----------------------------------------------------------------------------

    /** Connection info from an established outcome. */
    public static ConnectionInfo info(java.net.InetSocketAddress local, java.net.InetSocketAddress remote, NegotiationOutcome o,
            int peerIrd, int peerOrd, byte[] peerPd, boolean roce) {
        return new ConnectionInfo(local, remote, o.ird(), o.ord(), peerIrd, peerOrd, o.peerToPeer(), o.rtr(),
                false, roce ? 0 : 2, peerPd, null, null);
    }

    /** The IRD/ORD value of a CM event, u8 in rdma_cm; anything else is refused (RFC 6581 §9.1). */
    public static int checkedPeer(String field, int v) {
        if (v < 0 || v > CONN_PARAM_MAX) {
            throw new IllegalArgumentException(field + ": CM event value " + v + " is outside 0..255 (rdma_conn_param "
                    + "u8, RFC 6581 §9.1)");
        }
        return v;
    }

    /** Checks ULP private data against what the transport carries for {@code message}. */
    public void checkUlp(byte[] ulp, int ibSize, String message) {
        int cap = roce ? ibSize - CmPrivateData.OVERHEAD : ConnectionParameters.SIW_SAFE_PRIVATE_DATA;
        if (ulp.length > cap) {
            throw new IllegalArgumentException("privateData: " + ulp.length + " bytes exceed the " + cap + " bytes a "
                    + (roce ? "RoCE " + message + " carries after the RFC 6581 §9 enhanced data and the length byte"
                    : "kernel iWARP " + message + " carries next to the RFC 6581 §9 enhanced data"));
        }
    }

    /** Enhanced data at the start of RoCE private data (for tests and logs). */
    public static EnhancedConnectionData enhancedOf(byte[] privateData) {
        return EnhancedConnectionData.get(ByteBuffer.wrap(privateData), 0);
    }
}
