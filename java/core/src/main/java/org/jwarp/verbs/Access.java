package org.jwarp.verbs;

/** Access rights of a memory region (ibv_access_flags; RFC 5040 §8 STag access rights). */
public enum Access {
    LOCAL_WRITE(1),
    REMOTE_WRITE(2),
    REMOTE_READ(4);

    /** The ibv_access_flags bit. */
    public final int ibvFlag;

    Access(int ibvFlag) {
        this.ibvFlag = ibvFlag;
    }
}
