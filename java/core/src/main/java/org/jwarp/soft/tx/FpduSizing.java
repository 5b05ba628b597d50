package org.jwarp.soft.tx;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The largest FPDU this side sends on a connection, from the path's MSS (RFC 5044 §8.1: the
 * MULPDU follows the EMSS, so an FPDU fits one TCP segment), as Linux siw sizes it: the TCP
 * segment length rounded down to a multiple of 8.
 *
 * <p>Java cannot read TCP_MAXSEG, so the MSS is derived from the MTU of the interface that owns
 * the connection's local address (the interface the route to the peer leaves by): MTU minus the
 * IP header (20 bytes IPv4, 40 IPv6), the TCP header (20) and the timestamp option Linux puts in
 * every segment (12). An Ethernet MTU of 1500 gives 1448, a jumbo MTU of 9000 gives 8944, loopback
 * (MTU 65536) gives 65480 (siw's FPDUs on lo are as large), unless the configured cap is lower. When the interface or its MTU cannot be read, the
 * fallback is the Ethernet value 1448, which is never larger than a real Ethernet path's MSS.
 * A connection to one of this host's own addresses ({@link #forPath}) is routed through the loopback
 * device whichever interface owns the address, so its MSS, and siw's FPDUs on it, are loopback's.
 * What this cannot see: a peer advertising a smaller MSS than our interface allows (a jumbo-MTU
 * host talking to a 1500-MTU one); its FPDUs then span two segments, which TCP and siw accept
 * (siw's receive path does not check the MULPDU) but which RFC 5044 §8.1 recommends against.
 */
public final class FpduSizing {
    private static final Logger LOG = LoggerFactory.getLogger(FpduSizing.class);
    /** IPv4 header without options, TCP header, and the TCP timestamp option (Linux default on). */
    private static final int IPV4 = 20;
    private static final int IPV6 = 40;
    private static final int TCP = 20;
    private static final int TCP_TIMESTAMPS = 12;
    /** The fallback FPDU: an Ethernet MSS with timestamps (MTU 1500), already a multiple of 8. */
    public static final int ETHERNET_FPDU = 1448;
    /** Linux's loopback MTU, for a connection to this host's own address when lo is not readable. */
    private static final int LOOPBACK_MTU = 65536;

    private FpduSizing() {
    }

    /** The FPDU size for a path with this MTU: the MSS rounded down to a multiple of 8 (siw's rule). */
    public static int forMtu(int mtu, boolean ipv6) {
        int mss = mtu - (ipv6 ? IPV6 : IPV4) - TCP - TCP_TIMESTAMPS;
        return mss & ~7;
    }

    /**
     * The FPDU size for a connection from {@code local} to {@code remote}: when the peer's address
     * is this host's own (a loopback address, or one an interface of this host holds), Linux routes
     * the connection through the loopback device and the path's MSS is loopback's, whichever
     * interface owns the address (two processes on 10.0.0.5 talk over lo, not over the 1500-MTU
     * interface that holds 10.0.0.5; siw's FPDUs there are as large); otherwise
     * {@link #forLocalAddress} of {@code local}. Capped by {@code configMax}.
     */
    public static int forPath(InetAddress local, InetAddress remote, int configMax) {
        if (isOwnAddress(remote)) {
            boolean v6 = remote instanceof Inet6Address;
            return Math.min(configMax, forMtu(loopbackMtu(v6), v6));
        }
        return forLocalAddress(local, configMax);
    }

    /** The loopback interface's MTU; Linux's 65536 when it cannot be read. */
    private static int loopbackMtu(boolean v6) {
        try {
            InetAddress lo = v6 ? InetAddress.getByName("::1") : InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
            NetworkInterface nif = NetworkInterface.getByInetAddress(lo);
            int mtu = nif == null ? -1 : nif.getMTU();
            return mtu > 0 ? mtu : LOOPBACK_MTU;
        } catch (java.io.IOException e) {
            LOG.debug("loopback MTU not readable: {}", e.toString());
            return LOOPBACK_MTU;
        }
    }

    /** Whether {@code a} is an address of this host (loopback, or held by one of its interfaces). */
    static boolean isOwnAddress(InetAddress a) {
        if (a == null) {
            return false;
        }
        if (a.isLoopbackAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(a) != null;
        } catch (SocketException e) {
            LOG.debug("interfaces not readable for {}: {}", a, e.toString());
            return false;
        }
    }

    /**
     * The FPDU size for a connection whose local address is {@code local}: {@link #forMtu} of its
     * interface's MTU, capped by {@code configMax}; the Ethernet fallback when the MTU is unknown.
     */
    public static int forLocalAddress(InetAddress local, int configMax) {
        int mtu = -1;
        try {
            NetworkInterface nif = local == null ? null : NetworkInterface.getByInetAddress(local);
            if (nif != null) {
                mtu = nif.getMTU();
            }
        } catch (SocketException e) {
            LOG.debug("MTU of the interface of {} not readable: {}", local, e.toString());
        }
        int fpdu = mtu <= 0 ? ETHERNET_FPDU : forMtu(mtu, local instanceof Inet6Address);
        if (fpdu < 64) {
            fpdu = ETHERNET_FPDU; // an MTU too small for any useful FPDU is not believed
        }
        return Math.min(configMax, fpdu);
    }
}
