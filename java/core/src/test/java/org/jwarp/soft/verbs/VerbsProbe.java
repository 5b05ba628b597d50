package org.jwarp.soft.verbs;

import java.nio.ByteBuffer;

import org.jwarp.memory.StagRegion;

/**
 * Test access to package-private state of the verbs objects, for the tests in {@code org.jwarp.soft}
 * that reach it through whole connections (they need the provider's fixture, so they cannot sit here).
 */
public final class VerbsProbe {
    private VerbsProbe() {
    }

    /** The provider's view of the registered memory (read and write by absolute index only). */
    public static ByteBuffer raw(SoftMemoryRegion mr) {
        return mr.raw();
    }

    public static StagRegion engineRegion(SoftMemoryRegion mr) {
        return mr.engineRegion();
    }

    public static boolean isValid(SoftMemoryRegion mr) {
        return mr.isValid();
    }

    public static int liveSharedReceiveQueues(SoftProtectionDomain pd) {
        return pd.liveSharedReceiveQueues();
    }
}
