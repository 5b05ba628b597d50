package org.jwarp.verbs;

/**
 * A region was asked for beyond what the provider can register ({@link DeviceInfo#maxMrSize()};
 * RFC 5040 §2.1 STag, RFC 5041 §8.2 Tagged Buffer Model). Nothing was allocated or registered.
 */
public class RegionSizeException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final long requested;
    private final long limit;

    /**
     * A refused size.
     *
     * @param requested bytes asked for
     * @param limit     the largest region the provider registers
     * @param why       where the limit comes from
     */
    public RegionSizeException(long requested, long limit, String why) {
        super("region of " + requested + " bytes refused: the limit is " + limit + " bytes (max_mr_size; " + why + ")");
        this.requested = requested;
        this.limit = limit;
    }

    /** {@return the bytes asked for} */
    public long requested() {
        return requested;
    }

    /** {@return the largest region the provider registers ({@link DeviceInfo#maxMrSize()})} */
    public long limit() {
        return limit;
    }
}
