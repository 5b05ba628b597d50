package org.jwarp.mpa;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The MPA FPDU CRC, RFC 5044 §4.4 (CRC32c per RFC 3720 §B.4), computed with
 * {@link java.util.zip.CRC32C} over direct buffers without allocation.
 *
 * <p>Wire order: Linux siw writes the CRC in the byte order its crypto API produces, which is the
 * little-endian form of the standard CRC32c value. {@link #putWire} and {@link #getWire} use that
 * order, so 32 zero bytes give {@code aa 36 91 8a} on the wire (RFC 3720 §B.4 vector).
 *
 * <p>Instances are not thread-safe; use one per connection. The buffers passed in must be private
 * to the caller: {@link #compute} and {@link #update} move their position and limit while they
 * run. Shared memory (a registered region's buffer) goes through a view of the caller's own.
 */
public final class Crc32c {
    /** Size of the CRC field, RFC 5044 §4.4. */
    public static final int CRC_LENGTH = 4;

    private final CRC32C crc = new CRC32C();

    /**
     * The standard CRC32c value of {@code length} bytes of {@code buf} from absolute index
     * {@code index}. The buffer's position and limit are restored before returning (a buffer
     * private to the caller).
     */
    public int compute(ByteBuffer buf, int index, int length) {
        int pos = buf.position();
        int lim = buf.limit();
        try {
            buf.limit(index + length);
            buf.position(index);
            crc.reset();
            crc.update(buf);
            return (int) crc.getValue();
        } finally {
            buf.limit(lim);
            buf.position(pos);
        }
    }

    /** Starts an incremental CRC over several pieces ({@link #update}, then {@link #value}). */
    public void begin() {
        crc.reset();
    }

    /**
     * Adds {@code length} bytes of {@code buf} from absolute index {@code index}; the buffer's
     * position and limit are restored before returning (a buffer private to the caller).
     */
    public void update(ByteBuffer buf, int index, int length) {
        int pos = buf.position();
        int lim = buf.limit();
        try {
            buf.limit(index + length);
            buf.position(index);
            crc.update(buf);
        } finally {
            buf.limit(lim);
            buf.position(pos);
        }
    }

    /** The standard CRC32c value of the pieces added since {@link #begin}. */
    public int value() {
        return (int) crc.getValue();
    }

    /** Writes {@code crc} at {@code index} in the siw wire order (little-endian of the value). */
    public static void putWire(ByteBuffer buf, int index, int crc) {
        buf.put(index, (byte) crc);
        buf.put(index + 1, (byte) (crc >>> 8));
        buf.put(index + 2, (byte) (crc >>> 16));
        buf.put(index + 3, (byte) (crc >>> 24));
    }

    /** Reads a CRC written by {@link #putWire}. */
    public static int getWire(ByteBuffer buf, int index) {
        return (buf.get(index) & 0xFF) | (buf.get(index + 1) & 0xFF) << 8 | (buf.get(index + 2) & 0xFF) << 16
                | (buf.get(index + 3) & 0xFF) << 24;
    }
}
