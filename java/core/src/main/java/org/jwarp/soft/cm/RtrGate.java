package org.jwarp.soft.cm;

import java.nio.ByteBuffer;
import java.util.EnumSet;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.ground.RtrType;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.Fpdu;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.rdmap.ReadRequestHeader;

/**
 * The responder's check of the initiator's first FPDU (RFC 6581 §9.2, RFC 5044 §7.1.2): gathers
 * the head of that FPDU however TCP cut it, and tells whether it is a zero-length message of one
 * of the RTR types the Reply offered (a zero-length Write, Read Request or Send). Used once per
 * stream, before the engine sees any byte of it; the caller decides what a mismatch means (TERM
 * code 7) and what a TERM in its place means.
 */
public final class RtrGate {
    /** A zero-length Read Request: DDP untagged header plus the 28-byte RDMAP header. */
    public static final int READ_RTR_ULPDU = DdpHeader.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH;
    /** Bytes of the first FPDU looked at before it is handed to the engine. */
    private static final int PEEK = Fpdu.ULPDU_OFFSET + READ_RTR_ULPDU + 4;

    /** Every RTR type the Reply set; the initiator sends one of them. */
    private final EnumSet<RtrType> accept = EnumSet.noneOf(RtrType.class);
    private ByteBuffer peek;

    /** {@code rtr} is the negotiated type (null: no RTR expected); {@code sentReply} the Reply this side sent. */
    public RtrGate(RtrType rtr, MpaFrame sentReply) {
        if (rtr != null) {
            accept.add(rtr);
            EnhancedConnectionData ed = sentReply != null ? sentReply.enhancedData() : null;
            if (ed != null && ed.peerToPeer()) {
                addIf(ed.sendRtr(), RtrType.SEND);
                addIf(ed.writeRtr(), RtrType.WRITE);
                addIf(ed.readRtr(), RtrType.READ);
            }
        }
    }

    private void addIf(boolean set, RtrType t) {
        if (set) {
            accept.add(t);
        }
    }

    /**
     * Takes bytes of the first FPDU from {@code rx} until its head (or the whole FPDU, if shorter)
     * is here; returns that head (position 0) or null while it is incomplete.
     */
    public ByteBuffer gather(ByteBuffer rx) {
        if (peek == null) {
            peek = ByteBuffer.allocate(PEEK + 512);
        }
        int want = PEEK;
        if (peek.position() >= Fpdu.LENGTH_FIELD_SIZE) {
            want = Math.min(Fpdu.fpduLength(peek.getShort(0) & 0xFFFF), peek.capacity());
        }
        while (rx.hasRemaining() && peek.position() < want) {
            peek.put(rx.get());
            if (peek.position() == Fpdu.LENGTH_FIELD_SIZE) {
                want = Math.min(Fpdu.fpduLength(peek.getShort(0) & 0xFFFF), peek.capacity());
            }
        }
        if (peek.position() < want) {
            return null;
        }
        ByteBuffer head = peek.duplicate().flip();
        peek = null;
        return head;
    }

    /** Part of the first FPDU's head is buffered. */
    public boolean partial() {
        return peek != null && peek.position() > 0;
    }

    /** The fields of an FPDU head that tell an RTR: ULPDU length, DDP T flag, RDMAP opcode. */
    private record Head(int ulpdu, boolean tagged, int op) {
        static Head of(ByteBuffer h) {
            int seg = Fpdu.ULPDU_OFFSET;
            int control = h.get(seg + DdpHeader.CONTROL_OFFSET) & 0xFF;
            return new Head(h.getShort(0) & 0xFFFF, (control & DdpHeader.T_FLAG) != 0,
                    RdmapOpcode.opcode(h.get(seg + DdpHeader.RSVD_ULP_OFFSET) & 0xFF));
        }
    }

    /** The RTR type among those the Reply set that the FPDU head is (RFC 6581 §9.2), or null. */
    public RtrType match(ByteBuffer h) {
        Head f = Head.of(h);
        for (RtrType t : accept) {
            boolean ok = switch (t) {
                case WRITE -> f.tagged && f.op == RdmapOpcode.WRITE && f.ulpdu == DdpHeader.TAGGED_HEADER_LENGTH;
                case SEND -> !f.tagged && (f.op == RdmapOpcode.SEND || f.op == RdmapOpcode.SEND_SE)
                        && f.ulpdu == DdpHeader.UNTAGGED_HEADER_LENGTH;
                case READ -> !f.tagged && f.op == RdmapOpcode.READ_REQUEST && f.ulpdu == READ_RTR_ULPDU
                        && h.getInt(Fpdu.ULPDU_OFFSET + DdpHeader.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.SIZE_OFFSET) == 0;
            };
            if (ok) {
                return t;
            }
        }
        return null;
    }

    /** Why the FPDU head is no RTR the Reply offered (the TERM's reason). */
    public String mismatch(ByteBuffer h) {
        Head f = Head.of(h);
        return "first FPDU is a " + (f.tagged ? "tagged " : "untagged ") + RdmapOpcode.name(f.op) + " of " + f.ulpdu
                + " ULPDU bytes, not a zero-length " + RtrType.format(accept) + " RTR as the Reply offered (RFC 6581 §9.2)";
    }
}
