package org.jwarp.memory;

import java.nio.ByteBuffer;

/**
 * A registered, off-heap byte range addressable by an STag, RFC 5041 §3.2 and §8.2 (Tagged Buffer
 * Model): tagged offsets {@code [baseTo, baseTo + length)} map onto bytes
 * {@code [offset, offset + length)} of a direct {@link ByteBuffer}.
 *
 * <p>Validity is a volatile flag: once {@link StagTable#invalidate} or {@link StagTable#deregister}
 * returns, no later validation succeeds (RFC 5041 §8.3, revocation takes effect immediately).
 */
public final class StagRegion {
    private final int stag;
    private final StagDomain pd;
    private final ByteBuffer buffer;
    private final int offset;
    private final int length;
    private final long baseTo;
    private final int access;
    private volatile boolean valid = true;

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

    public int length() {
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
