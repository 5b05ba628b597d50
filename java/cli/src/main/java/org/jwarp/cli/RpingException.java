package org.jwarp.cli;

/**
 * Why {@code jwarp rping} stopped: a bad option, or a step of the rping exchange (Sends of
 * RFC 5040 §5.3 carrying advertisements, the RDMA Read of §5.2 and the RDMA Write of §5.1) that
 * failed, timed out or met a message rping would refuse. {@link #kind()} says which; the exit
 * status is the one rping uses for the same situation: {@code EINVAL} (22) for options, -1 (255)
 * for everything that goes wrong once it runs.
 */
final class RpingException extends Exception {
    private static final long serialVersionUID = 1L;

    /** rping's exit status for a bad option ({@code EINVAL}). */
    static final int EXIT_USAGE = 22;
    /** rping's exit status when a step fails ({@code return -1} from main). */
    static final int EXIT_FAILED = 255;

    /** The failure classes; each maps to rping's exit status for it. */
    enum Kind {
        /** An option outside rping's rules (size range, role, address). */
        USAGE(EXIT_USAGE),
        /** A message that is not the 16-byte advertisement. */
        BAD_LENGTH(EXIT_FAILED),
        /** A source advertisement larger than this side's buffer (-S), or empty. */
        ADVERT_TOO_LARGE(EXIT_FAILED),
        /** A sink advertisement too small for the data to write back. */
        SINK_TOO_SMALL(EXIT_FAILED),
        /** A message that arrived while the previous one was still unanswered. */
        UNEXPECTED_MESSAGE(EXIT_FAILED),
        /** The peer disconnected in the middle of an iteration. */
        DISCONNECTED(EXIT_FAILED),
        /** A step did not complete within --timeout. */
        TIMEOUT(EXIT_FAILED),
        /** A work request completed with an error status. */
        COMPLETION_FAILED(EXIT_FAILED),
        /** -V: the data written back differs from the data sent. */
        DATA_MISMATCH(EXIT_FAILED),
        /** Connection setup or the device failed. */
        SETUP_FAILED(EXIT_FAILED);

        final int exitStatus;

        Kind(int exitStatus) {
            this.exitStatus = exitStatus;
        }
    }

    private final Kind kind;

    RpingException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    RpingException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    Kind kind() {
        return kind;
    }

    int exitStatus() {
        return kind.exitStatus;
    }
}
