package org.jwarp.examples.kv;

import java.nio.ByteBuffer;

/**
 * The key-value store's wire vocabulary: the fixed-size request/reply message carried by Sends,
 * the layout of a value slot in the server's shared region, the connection's private data, and
 * the value of a key at a version (derived, so any reader can check every byte).
 *
 * <pre>
 * message (MESSAGE_BYTES):             value slot (HEADER_BYTES + body):
 *   0 op      u8                         0 key      u64
 *   1 status  u8                         8 version  u64
 *   4 rkey    u32                       16 body     bodyLength(key, version) bytes
 *   8 key     u64
 *  16 version u64
 *  24 address u64  (GET: the value; PUT: the next staging slot)
 *  32 length  u32  (GET: header + body bytes)
 *  36 seq     u32
 * </pre>
 */
public final class KvProtocol {
    private KvProtocol() {
    }

    /** Bytes of every request and reply; sent inline. */
    public static final int MESSAGE_BYTES = 40;
    /** Inline payload asked for on every QP (siw grants 80, rxe and soft more). */
    public static final int INLINE_BYTES = 64;

    public static final int OP_OFFSET = 0;
    public static final int STATUS_OFFSET = 1;
    public static final int RKEY_OFFSET = 4;
    public static final int KEY_OFFSET = 8;
    public static final int VERSION_OFFSET = 16;
    public static final int ADDRESS_OFFSET = 24;
    public static final int LENGTH_OFFSET = 32;
    public static final int SEQ_OFFSET = 36;

    public static final byte OP_GET = 1;
    public static final byte OP_PUT = 2;
    public static final byte OP_GET_OK = (byte) 0x81;
    public static final byte OP_PUT_OK = (byte) 0x82;
    public static final byte OP_ERROR = (byte) 0xFF;

    public static final byte STATUS_OK = 0;
    public static final byte STATUS_BAD_REQUEST = 1;
    public static final byte STATUS_NOT_OWNER = 2;
    public static final byte STATUS_STALE_VERSION = 3;
    public static final byte STATUS_BAD_DATA = 4;

    /** Key and version in front of every value body. */
    public static final int HEADER_BYTES = 16;

    /** The accept's private data: what a client needs to know about its server. */
    public static final int PRIVATE_DATA_BYTES = 32;

    /**
     * Connection setup data from server to client (in the MPA Reply / CM accept private data).
     *
     * @param index             the connection's number; it owns keys {@code [index*keysPerConnection, +keysPerConnection)}
     * @param keysPerConnection keys each connection owns (and may PUT)
     * @param totalKeys         keys of the store (any may be read)
     * @param maxBody           largest value body
     * @param rkey              STag of the shared value region
     * @param stagingAddress    the first slot this connection writes a PUT into
     */
    public record Hello(int index, int keysPerConnection, int totalKeys, int maxBody, int rkey, long stagingAddress) {
        public byte[] encode() {
            return ByteBuffer.allocate(PRIVATE_DATA_BYTES).putInt(index).putInt(keysPerConnection).putInt(totalKeys)
                    .putInt(maxBody).putInt(rkey).putLong(stagingAddress).array();
        }

        public static Hello decode(byte[] data) {
            if (data == null || data.length < PRIVATE_DATA_BYTES) {
                throw new IllegalArgumentException("server private data of " + (data == null ? 0 : data.length)
                        + " bytes, expected " + PRIVATE_DATA_BYTES + ": not a key-value server");
            }
            ByteBuffer b = ByteBuffer.wrap(data);
            return new Hello(b.getInt(), b.getInt(), b.getInt(), b.getInt(), b.getInt(), b.getLong());
        }
    }

    /** Length of the body of {@code key} at {@code version}: 1..maxBody. */
    public static int bodyLength(long key, long version, int maxBody) {
        return 1 + (int) Long.remainderUnsigned(mix(key * 31 + version), maxBody);
    }

    /** Writes header and body of {@code key} at {@code version} into {@code header} and {@code body} at the offsets. */
    public static void writeValue(ByteBuffer header, int headerAt, ByteBuffer body, int bodyAt, long key, long version,
                                  int length) {
        header.putLong(headerAt, key);
        header.putLong(headerAt + 8, version);
        long s = seed(key, version);
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            s = next(s);
            body.putLong(bodyAt + i, mix(s));
        }
        if (i < length) {
            long last = mix(next(s));
            for (; i < length; i++, last >>>= 8) {
                body.put(bodyAt + i, (byte) last);
            }
        }
    }

    /**
     * Checks header and body at {@code at} of {@code buf} against {@code key} at {@code version};
     * returns null when every byte matches, else what differs first.
     */
    public static String checkValue(ByteBuffer buf, int at, long key, long version, int length) {
        long k = buf.getLong(at);
        long v = buf.getLong(at + 8);
        if (k != key || v != version) {
            return "header says key " + k + " version " + v + ", expected key " + key + " version " + version;
        }
        int body = at + HEADER_BYTES;
        long s = seed(key, version);
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            s = next(s);
            long want = mix(s);
            long got = buf.getLong(body + i);
            if (got != want) {
                return "body bytes " + i + ".." + (i + 7) + " of " + length + ": 0x" + Long.toHexString(got)
                        + ", expected 0x" + Long.toHexString(want);
            }
        }
        if (i < length) {
            long last = mix(next(s));
            for (; i < length; i++, last >>>= 8) {
                if (buf.get(body + i) != (byte) last) {
                    return "body byte " + i + " of " + length + ": " + buf.get(body + i) + ", expected " + (byte) last;
                }
            }
        }
        return null;
    }

    private static long seed(long key, long version) {
        return mix(key ^ 0x5DEECE66DL) + version * 0x9E3779B97F4A7C15L;
    }

    private static long next(long s) {
        return s + 0x9E3779B97F4A7C15L;
    }

    /** SplitMix64's finalizer. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
