package org.jwarp.rdmap;

/**
 * RDMAP opcodes and the RDMAP control byte, RFC 5040 §4.1–§4.3. The control byte is the 8-bit
 * RsvdULP field of the DDP control field: {@code RV(2) = 01 | Rsvd(2) | Opcode(4)}. Untagged
 * messages use QN 0 (Send), 1 (Read Request) and 2 (Terminate), RFC 5040 §4.1 / §5.
 */
public final class RdmapOpcode {
    private RdmapOpcode() {
    }

    public static final int WRITE = 0;
    public static final int READ_REQUEST = 1;
    public static final int READ_RESPONSE = 2;
    public static final int SEND = 3;
    public static final int SEND_INVALIDATE = 4;
    public static final int SEND_SE = 5;
    public static final int SEND_SE_INVALIDATE = 6;
    public static final int TERMINATE = 7;

    /** RDMAP version of RFC 5040. */
    public static final int RDMAP_VERSION = 1;
    /** Mask of the RV field in the control byte. */
    public static final int RV_MASK = 0xC0;
    /** Mask of the opcode in the control byte. */
    public static final int OPCODE_MASK = 0x0F;

    /** Untagged queue of Send messages. */
    public static final int QN_SEND = 0;
    /** Untagged queue of RDMA Read Request messages. */
    public static final int QN_READ_REQUEST = 1;
    /** Untagged queue of Terminate messages. */
    public static final int QN_TERMINATE = 2;
    /** Number of untagged queues RDMAP uses. */
    public static final int QUEUE_COUNT = 3;

    /** The control byte for {@code opcode}: RV = 1, reserved bits zero. */
    public static int control(int opcode) {
        return (RDMAP_VERSION << 6) | (opcode & OPCODE_MASK);
    }

    public static int opcode(int control) {
        return control & OPCODE_MASK;
    }

    public static int version(int control) {
        return (control & RV_MASK) >>> 6;
    }

    public static boolean isSend(int opcode) {
        return opcode >= SEND && opcode <= SEND_SE_INVALIDATE;
    }

    public static boolean isSolicited(int opcode) {
        return opcode == SEND_SE || opcode == SEND_SE_INVALIDATE;
    }

    public static boolean isInvalidate(int opcode) {
        return opcode == SEND_INVALIDATE || opcode == SEND_SE_INVALIDATE;
    }

    public static String name(int opcode) {
        return switch (opcode) {
            case WRITE -> "RDMA Write";
            case READ_REQUEST -> "RDMA Read Request";
            case READ_RESPONSE -> "RDMA Read Response";
            case SEND -> "Send";
            case SEND_INVALIDATE -> "Send with Invalidate";
            case SEND_SE -> "Send with Solicited Event";
            case SEND_SE_INVALIDATE -> "Send with Solicited Event and Invalidate";
            case TERMINATE -> "Terminate";
            default -> "reserved opcode " + opcode;
        };
    }
}
