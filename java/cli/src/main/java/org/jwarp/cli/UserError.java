package org.jwarp.cli;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;

/**
 * A failure the user can act on, with its message written for them: no class names, and a hint
 * where there is one ("is `jwarp server` running on HOST:PORT?"). Exit code 1.
 */
final class UserError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UserError(String message, Throwable cause) {
        super(message, cause);
    }

    /** Explains a failed connect to {@code server}: refused, unreachable or unknown host get a hint. */
    static RuntimeException connectFailed(InetSocketAddress server, Throwable e) {
        String where = server.getHostString() + ":" + server.getPort();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException) {
                return new UserError("cannot connect to " + where + ": connection refused. Is `jwarp server` running on "
                        + where + "?", e);
            }
            if (t instanceof NoRouteToHostException) {
                return new UserError("cannot connect to " + where + ": no route to host", e);
            }
            if (t instanceof UnknownHostException) {
                return new UserError("cannot connect to " + where + ": unknown host", e);
            }
        }
        return new UserError("cannot connect to " + where + ": " + describe(e), e);
    }

    /** True when the connect failed before any peer answered: refused, no route, unknown host. */
    static boolean isUnreachable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof NoRouteToHostException || t instanceof UnknownHostException) {
                return true;
            }
        }
        return false;
    }

    /** The messages of a cause chain, joined, without class names (a missing message becomes words). */
    static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        String last = null;
        for (Throwable t = e; t != null && sb.length() < 400; t = t.getCause()) {
            String m = t.getMessage();
            if (m == null || m.isBlank()) {
                m = words(t);
            }
            if (last != null && last.contains(m)) {
                continue;
            }
            if (sb.length() > 0) {
                sb.append(": ");
            }
            sb.append(m);
            last = m;
        }
        return sb.toString();
    }

    /** "SocketTimeoutException" → "socket timeout". */
    private static String words(Throwable t) {
        String n = t.getClass().getSimpleName().replaceAll("(Exception|Error)$", "");
        return n.replaceAll("([a-z])([A-Z])", "$1 $2").toLowerCase(java.util.Locale.ROOT);
    }
}
