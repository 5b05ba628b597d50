package org.jwarp.disni;

import java.io.IOException;

/**
 * A failed rdma-core call in jwarp's libdisni, with the C {@code errno} it reported as a number,
 * so callers decide on the error code rather than on the message text. Every IOException the
 * library raises (DiSNI's NativeDispatcher entry points and jwarp's extension alike) is one of
 * these; the message still reads {@code "<call>: <strerror> (errno N)"}.
 *
 * <p>Defined by the application's loader (not the DiSNI loader), so the provider inside the DiSNI
 * loader and code outside it see the same class.
 */
public class NativeErrnoException extends IOException {
    private static final long serialVersionUID = 1L;

    private final int errno;

    /** Called by the native library. */
    public NativeErrnoException(String message, int errno) {
        super(message);
        this.errno = errno;
    }

    /** The C errno value of the failed call (positive, platform numbering). */
    public int errno() {
        return errno;
    }

    /**
     * The errno of the first NativeErrnoException in {@code t}'s cause chain (t included), or 0
     * when there is none.
     */
    public static int errnoOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof NativeErrnoException n) {
                return n.errno;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return 0;
    }
}
