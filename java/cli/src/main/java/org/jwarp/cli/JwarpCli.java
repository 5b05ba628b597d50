package org.jwarp.cli;

import org.jwarp.ground.DecodeException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of the {@code jwarp} command line. Each protocol layer contributes its own
 * subcommand class; this class only wires them together and maps exceptions to exit codes.
 *
 * <p>Exit codes: 0 success, 1 runtime failure, 2 malformed input or usage error. Errors print
 * as {@code jwarp: <what happened>} without class names; {@code -Djwarp.debug=true} adds the stack.
 */
@Command(name = "jwarp", mixinStandardHelpOptions = true, versionProvider = JwarpCli.Version.class,
        description = "RDMA for Java over iWARP: protocol tools, demo, server and client.",
        subcommands = {
                CommandLine.HelpCommand.class,
                MpaCommand.class,
                NegotiateCommand.class,
                DdpCommand.class,
                DemoCommand.class, ServerCommand.class, ClientCommand.class,
                RpingCommand.class,
                DisniCommand.class, DevicesCommand.class,
        })
public final class JwarpCli {

    /** Exit code for malformed input (a field that violates an RFC rule) and usage errors. */
    public static final int EXIT_MALFORMED = 2;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** {@code jwarp -V}: the project version as Maven has it (filtered into version.properties). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws java.io.IOException {
            java.util.Properties p = new java.util.Properties();
            try (java.io.InputStream in = JwarpCli.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            }
            return new String[] {"jwarp " + p.getProperty("version", "unknown")};
        }
    }

    /** Runs the CLI without exiting the JVM; used by tests. */
    public static int run(String... args) {
        return run(null, null, args);
    }

    /**
     * Runs the CLI without exiting the JVM, printing to {@code out} and {@code err} (null: the
     * process streams); lets tests run a server and a client side by side in one JVM.
     */
    public static int run(java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
        CommandLine cl = new CommandLine(new JwarpCli());
        if (out != null) {
            cl.setOut(out);
        }
        if (err != null) {
            cl.setErr(err);
        }
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            if (ex instanceof DecodeException || ex instanceof IllegalArgumentException) {
                cmd.getErr().println("jwarp: " + ex.getMessage());
                return EXIT_MALFORMED;
            }
            cmd.getErr().println("jwarp: " + (ex instanceof UserError ? ex.getMessage() : UserError.describe(ex)));
            if (Boolean.getBoolean("jwarp.debug")) {
                ex.printStackTrace(cmd.getErr());
            }
            return 1;
        });
        return cl.execute(args);
    }

}
