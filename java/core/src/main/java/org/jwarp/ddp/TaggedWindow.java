package org.jwarp.ddp;

/**
 * The tagged window a ULP expects a segment to fall in (RFC 5040 §5.2: a Read Response fills only
 * the sink its Read Request named), filled by {@link DdpReceiveHandler#expectedWindow}; the DDP
 * receiver owns one and reuses it.
 */
public final class TaggedWindow {
    int stag;
    long to;
    long length;

    /** The segment must name {@code stag} and lie in {@code [to, to + length)}. */
    public void set(int stag, long to, long length) {
        this.stag = stag;
        this.to = to;
        this.length = length;
    }
}
