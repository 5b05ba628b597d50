package org.jwarp.disni;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp disni ...}: the DiSNI provider (RFC 5040/5041 RNICs through rdma-core, RFC 6581
 * connection setup by the kernel's MPA layer or in rdma_cm private data).
 *
 * <p>{@code jwarp disni info} prints one JSON object: {@code platform}, {@code available}, and
 * when available {@code library} (where libdisni was loaded from), {@code disniJniVersion},
 * {@code extensionVersion} and {@code devices} (name, transport and the RFC 6581 §9.1 limits
 * {@code maxQpRdAtom}/{@code maxQpInitRdAtom}); when unavailable {@code reason}. Exit code 0, or 3
 * when the provider cannot run here.
 */
@Command(name = "disni", mixinStandardHelpOptions = true, description = "DiSNI provider tools.",
        subcommands = {DisniCommand.Info.class})
public final class DisniCommand {

    @Command(name = "info", mixinStandardHelpOptions = true,
            description = "Whether the DiSNI provider loads here, its library and devices with their IRD/ORD "
                    + "limits (RFC 6581 §9.1), as JSON. Exit 3 when unavailable.")
    static final class Info implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            int rc = DisniInfo.run(spec.commandLine().getOut());
            return rc;
        }
    }
}
