package org.jwarp.cli;

import java.util.Set;

import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Rdma;

import picocli.CommandLine.Option;

/**
 * The connection-setup options {@code jwarp client} and {@code jwarp server} share: the RFC 6581
 * model (§9: peer-to-peer with an RTR, or client-server), the RTR types (§9.2), the IRD/ORD pair
 * of the MPA request and reply (§9.1), and the provider. Mixed into both commands, so names and
 * defaults cannot drift. The descriptions here are the active side's; {@code ServerCommand.properties}
 * gives the passive side's text for {@code --p2p} and {@code --rtr} under the same keys.
 */
final class ConnectionOptions {
    @Option(names = "--p2p", descriptionKey = "p2p",
            description = "Use the RFC 6581 peer-to-peer model (the initiator sends an RTR first).")
    boolean p2p;
    @Option(names = "--rtr", split = ",", descriptionKey = "rtr",
            description = "RTR types to offer: write, read, send (default: write,read).")
    Set<String> rtr = Set.of("write", "read");
    @Option(names = "--ird", description = "Inbound RDMA Read depth offered (default: ${DEFAULT-VALUE}).")
    int ird = ConnectionParameters.DEFAULT_IRD_ORD;
    @Option(names = "--ord", description = "Outbound RDMA Read depth wanted (default: ${DEFAULT-VALUE}).")
    int ord = ConnectionParameters.DEFAULT_IRD_ORD;
    @Option(names = "--provider", description = "Provider name (default: ${DEFAULT-VALUE}).")
    String provider = Rdma.DEFAULT_PROVIDER;

    /** IRD, ORD and the model; the caller adds the RTR types (their use differs by side). */
    ConnectionParameters.Builder builder() {
        return ConnectionParameters.builder().ird(ird).ord(ord).peerToPeer(p2p);
    }
}
