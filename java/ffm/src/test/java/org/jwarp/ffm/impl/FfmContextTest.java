package org.jwarp.ffm.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.WcOpcode;
import org.junit.jupiter.api.Test;

/** What the provider says on a machine without the device asked for (the host: no RDMA in its kernel). */
class FfmContextTest {
    @Test
    void openingAMissingDeviceNamesWhatIsThere() {
        RdmaException e = assertThrows(RdmaException.class, () -> FfmContext.open("nosuchdev0"));
        if (Files.isDirectory(Path.of("/sys/class/infiniband_verbs"))) {
            assertTrue(e.getMessage().startsWith("no RDMA device named 'nosuchdev0' (rdma-core lists "), e.getMessage());
        } else {
            assertEquals("ibv_get_device_list failed with errno 38 (ENOSYS): this kernel has no RDMA support "
                    + "(no /sys/class/infiniband_verbs)", e.getMessage());
        }
    }

    @Test
    void errnoNamesTheCommonOnes() {
        assertEquals("errno 12 (ENOMEM)", Ibv.describe(12));
        assertEquals("errno 4242", Ibv.describe(4242));
    }

    @Test
    void completionOpcodesAreRdmaCores() {
        for (WcOpcode o : WcOpcode.values()) {
            assertEquals(o, FfmCq.opcode(o.code));
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> FfmCq.opcode(7));
        assertTrue(e.getMessage().contains("unknown ibv_wc_opcode 7"), e.getMessage());
    }
}
