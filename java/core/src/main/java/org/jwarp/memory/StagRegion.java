package org.jwarp.memory;

import java.nio.ByteBuffer;

/**
 * A registered, off-heap byte range addressable by an STag, RFC 5041 §3.2 and §8.2 (Tagged Buffer
 * Model): tagged offsets {@code [baseTo, baseTo + length)} map onto bytes
 * {@code [offset, offset + length)} of a direct {@link ByteBuffer}.
 *
 * <p>Validity is a volatile flag: once {@link StagTable#invalidate} or {@link StagTable#deregister}
 * returns, no later validation succeeds (RFC 5041 §8.3, revocation takes effect immediately).
 *
 * <p>Association (RFC 5041 §8.2): every region belongs to its protection domain; {@link #bindStream}
 * further limits remote access to one DDP stream (the DDP Stream association of §8.2, §8.3 (3),
 * §8.3.1 (2)). The stream is an opaque key the transport chooses (the soft provider uses its QP).
 */
public final class StagRegion {
    private final int stag;
    private final StagDomain pd;
    private final ByteBuffer buffer;
    private final int offset;
    private final long length;
    private final long baseTo;
    private final int access;
    private volatile boolean valid = true;
    private volatile Object stream;

    StagRegion(int stag, StagDomain pd, ByteBuffer buffer, int offset, int length, long baseTo, int access) {
        this.stag = stag;
        this.pd = pd;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.baseTo = baseTo;
        this.access = access;
    }

    public int stag() {
        return stag;
    }

    public StagDomain pd() {
        return pd;
    }

    /** The backing direct buffer; index arithmetic only, its position and limit are never used. */
    public ByteBuffer buffer() {
        return buffer;
    }

    /** Index in {@link #buffer()} of the byte at tagged offset {@link #baseTo()}. */
    public int offset() {
        return offset;
    }

    /** Bytes addressable by tagged offsets from {@link #baseTo()}; a long, as TOs are 64-bit (RFC 5041 §4.1). */
    public long length() {
        return length;
    }

    public long baseTo() {
        return baseTo;
    }

    public int access() {
        return access;
    }

    public boolean isValid() {
        return valid;
    }

    /**
     * Limits remote access to the DDP stream identified by {@code streamKey} (RFC 5041 §8.2 DDP Stream
     * association); {@code null} returns the region to its whole protection domain.
     */
    public void bindStream(Object streamKey) {
        stream = streamKey;
    }

    /** The DDP stream this region is limited to, or null for every stream of its protection domain. */
    public Object stream() {
        return stream;
    }

    void revoke() {
        valid = false;
    }

    /** Buffer index of tagged offset {@code to}; only meaningful after a successful check. */
    public int indexOf(long to) {
        return offset + (int) (to - baseTo);
    }

    @Override
    public String toString() {
        return String.format("MR[stag=0x%08x %s to=0x%x len=%d access=%d valid=%b]", stag, pd, baseTo, length,
                access, valid);
    }
}
