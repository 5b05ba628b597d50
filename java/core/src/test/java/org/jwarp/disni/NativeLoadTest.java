package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Loading the bundled libdisni through the DiSNI class loader (no LD_LIBRARY_PATH), the version
 * handshake DiSNI performs, and the rdma-core layouts DiSNI's Java side writes at fixed offsets.
 */
@Tag("native")
class NativeLoadTest {
    @Test
    void bundledLibraryLoadsFromTheContentAddressedCache() throws Exception {
        DisniRuntime rt = DisniRuntime.get();
        Path lib = rt.libraryPath().orElseThrow();
        assertEquals(NativeLibrary.FILE_NAME, lib.getFileName().toString());
        assertEquals(NativeLibrary.sha256(Files.readAllBytes(lib)), lib.getParent().getFileName().toString(),
                "the cache directory is named after the library's SHA-256");
        Class<?> inChild = Class.forName(NativeSymbolContractTest.DISPATCHER, false, rt.classLoader());
        Class<?> inParent = Class.forName(NativeSymbolContractTest.DISPATCHER, false, getClass().getClassLoader());
        assertNotSame(inParent, inChild, "DiSNI must be defined by the DiSNI loader, not the application loader");
        assertEquals(rt.classLoader(), inChild.getClassLoader());
    }

    @Test
    void disniVersionHandshakeIs32AndExtensionMatches() throws Exception {
        NativeInfo info = NativeInfo.load();
        assertEquals(32, info.disniJniVersion(), "NativeDispatcher.JVERBS_VERSION of DiSNI 2.1");
        assertEquals(DisniRuntime.EXPECTED_EXTENSION_VERSION, info.extensionVersion());
        assertNotNull(info.deviceNames());
    }

    @Test
    void sendWrPrefixMatchesTheOffsetsDisniWrites() {
        Map<String, Integer> l = NativeInfo.load().layouts();
        // DiSNI's NatIbvSendWR writes these fields at fixed offsets; only the size and the rdma
        // union are probed by it, so the fixed prefix must hold on this rdma-core.
        assertEquals(8, l.get("ibv_send_wr.next"));
        assertEquals(16, l.get("ibv_send_wr.sg_list"));
        assertEquals(24, l.get("ibv_send_wr.num_sge"));
        assertEquals(28, l.get("ibv_send_wr.opcode"));
        assertEquals(32, l.get("ibv_send_wr.send_flags"));
        assertEquals(36, l.get("ibv_send_wr.imm_data"));
        assertEquals(16, l.get("ibv_sge.size"), "DiSNI writes SGEs as addr u64, length u32, lkey u32");
        assertEquals(8, l.get("ibv_wc.status"));
        assertEquals(12, l.get("ibv_wc.opcode"));
        assertTrue(l.get("ibv_send_wr.wr.rdma.rkey") == l.get("ibv_send_wr.wr.rdma.remote_addr") + 8);
        assertEquals(24, l.get("rdma_conn_param.size"));
        assertEquals(255, l.get("max_private_data"));
    }
}
