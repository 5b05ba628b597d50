package org.jwarp.sctp;

/**
 * Function codes of the DDP Stream Session Control message, RFC 5043 §4 (codes 1–4) and the
 * enhanced codes of RFC 6581 §7 (5–7), which carry RFC 6581 §9 enhanced connection establishment
 * data before the ULP private data.
 */
public enum SessionControlFunction {
    /** 0x1 DDP Stream Session Initiate. */
    INITIATE(0x1, false, true),
    /** 0x2 DDP Stream Session Accept. */
    ACCEPT(0x2, false, true),
    /** 0x3 DDP Stream Session Reject. */
    REJECT(0x3, false, true),
    /** 0x4 DDP Stream Session Terminate. */
    TERMINATE(0x4, false, false),
    /** 0x5 Enhanced DDP Stream Session Initiate (RFC 6581 §7). */
    ENHANCED_INITIATE(0x5, true, true),
    /** 0x6 Enhanced DDP Stream Session Accept (RFC 6581 §7). */
    ENHANCED_ACCEPT(0x6, true, true),
    /**
     * 0x7 Enhanced DDP Stream Session Reject (RFC 6581 §7): enhanced data first, so a responder can
     * name the ORD it requires (§9.1), then the ULP private data. Terminate (0x4) stays unenhanced
     * and carries no private data.
     */
    ENHANCED_REJECT(0x7, true, true);

    private final int code;
    private final boolean carriesEnhancedData;
    private final boolean carriesPrivateData;

    SessionControlFunction(int code, boolean carriesEnhancedData, boolean carriesPrivateData) {
        this.code = code;
        this.carriesEnhancedData = carriesEnhancedData;
        this.carriesPrivateData = carriesPrivateData;
    }

    public int code() {
        return code;
    }

    /** Whether the payload starts with the 4 bytes of RFC 6581 §9 enhanced data. */
    public boolean carriesEnhancedData() {
        return carriesEnhancedData;
    }

    /** Whether ULP private data may follow; never for Terminate. */
    public boolean carriesPrivateData() {
        return carriesPrivateData;
    }

    /** The function for {@code code}, or null when unknown. */
    public static SessionControlFunction fromCode(int code) {
        for (SessionControlFunction f : values()) {
            if (f.code == code) {
                return f;
            }
        }
        return null;
    }
}
