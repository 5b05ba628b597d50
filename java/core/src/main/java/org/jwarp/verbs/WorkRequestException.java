package org.jwarp.verbs;

/**
 * A work request was refused at post time; nothing of it was sent and no completion will follow.
 * For a chain (ibverbs' {@code bad_wr} contract) the requests before {@link #index()} were posted
 * and complete as usual, the refused one and every later one were not. When the device refused a
 * chain without naming the request ({@link #INDEX_UNKNOWN}), any of them may have been posted: the
 * provider then moves the queue pair to ERR, and those that were posted complete as flushed.
 */
public class WorkRequestException extends RdmaException {
    private static final long serialVersionUID = 1L;

    /** {@link #index()} when the device did not say which request of a chain it refused. */
    public static final int INDEX_UNKNOWN = -1;

    private final int index;
    private final String field;

    /**
     * A refusal of the first (or only) request, naming no field.
     *
     * @param message why, naming the limit
     */
    public WorkRequestException(String message) {
        this(message, 0, null);
    }

    /**
     * A refusal of request {@code index} of a chain.
     *
     * @param message why, naming the field and the limit
     * @param index   position of the refused request in its chain (0 for the first), or {@link #INDEX_UNKNOWN}
     * @param field   the refused field ({@code num_sge}, {@code sg_list[2]}, {@code inline}, ...), or null
     */
    public WorkRequestException(String message, int index, String field) {
        super((index == INDEX_UNKNOWN ? "WR ?: " : "WR " + index + ": ") + message);
        this.index = index;
        this.field = field;
    }

    /**
     * Position of the refused request in the posted chain; 0 for a single request;
     * {@link #INDEX_UNKNOWN} when the device did not name it (the queue pair is then in ERR).
     *
     * @return the index of the refused request
     */
    public int index() {
        return index;
    }

    /** {@return the field that was refused, or null when the queue pair as a whole refused (state, depth)} */
    public String field() {
        return field;
    }
}
