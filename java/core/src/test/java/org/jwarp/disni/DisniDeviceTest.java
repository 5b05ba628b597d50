package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.jwarp.disni.GuestDevices.Side;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DiSNI provider's own facts on real devices: siw0 (iWARP, RFC 5040/5041/5044 with RFC 6581
 * setup in the kernel) and rxe0 (RoCE) are found with their transports and RFC 6581 §9.1 read
 * limits, and libdisni came from the jar. The API behaviour over them is
 * {@link org.jwarp.verbs.ProviderContractTest}'s (ProviderContractTestOnSiwTest/OnRxeTest). Run
 * inside the guest (devices on 10.77.0.1 and 10.78.0.1, override with
 * {@code -Djwarp.it.devices=addr,addr}); fails when a device is missing rather than skipping.
 */
@Tag("device")
class DisniDeviceTest {
    static RdmaProvider provider;

    @BeforeAll
    static void open() throws Exception {
        provider = Rdma.open("disni");
    }

    @AfterAll
    static void close() {
        if (provider != null) {
            provider.close();
        }
    }

    @ParameterizedTest
    @MethodSource("org.jwarp.disni.GuestDevices#addresses")
    void deviceIsPresentWithReadLimits(String addr) throws Exception {
        List<String> names = new ArrayList<>();
        for (DeviceInfo d : provider.devices()) {
            names.add(d.name());
        }
        try (Side s = new Side(provider, addr)) {
            DeviceInfo i = s.dev.info();
            System.out.println("device for " + addr + ": " + i + " (all: " + names + ")");
            assertTrue(names.contains(i.name()), names.toString());
            assertTrue(i.maxQpRdAtom() > 0 && i.maxQpInitRdAtom() > 0, i.toString());
            if (addr.startsWith("10.77.")) {
                assertEquals(DeviceInfo.Transport.IWARP, i.transport());
            } else if (addr.startsWith("10.78.")) {
                assertEquals(DeviceInfo.Transport.ROCE, i.transport());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("org.jwarp.disni.GuestDevices#addresses")
    @DisplayName("Closing a protection domain deregisters its open regions and frees allocated memory (RFC 5041 §8.3)")
    void pdCloseReleasesItsRegions_5041_8_3(String addr) throws Exception {
        Side s = new Side(provider, addr);
        try {
            MemoryRegion owned = s.pd.allocate(1 << 20, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
            owned.buffer(4096, 8).putLong(0, 0x5a5a5a5a5a5a5a5aL);
            assertEquals(0x5a5a5a5a5a5a5a5aL, owned.buffer(4096, 8).getLong(0));
            s.pd.close(); // the regions are left open on purpose
            assertThrows(IllegalStateException.class, () -> owned.buffer(0, 1), "the region's memory was unmapped");
            assertThrows(RdmaException.class, () -> s.pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE)));
            owned.close(); // a second release is a no-op
        } finally {
            s.close();
        }
    }

    @ParameterizedTest
    @MethodSource("org.jwarp.disni.GuestDevices#addresses")
    @DisplayName("A window kept past its region's close neither faults nor reaches a later region's memory (RFC 5040 §2.1)")
    void staleWindowNeverReachesAnotherRegion_5040_2_1(String addr) throws Exception {
        Side s = new Side(provider, addr);
        try {
            MemoryRegion old = s.pd.allocate(1 << 20, EnumSet.of(Access.LOCAL_WRITE));
            ByteBuffer w = old.buffer(0, 4096);
            long oldAddress = old.address();
            old.close();
            assertThrows(IllegalStateException.class, () -> old.buffer(0, 8), "no new window after close");
            w.putLong(0, 0x0bad_0bad_0bad_0badL); // still mapped: no fault
            for (int i = 0; i < 4; i++) {
                MemoryRegion fresh = s.pd.allocate(1 << 20, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
                try {
                    assertTrue(fresh.address() != oldAddress, "the stale window's memory was handed to a new region");
                    w.putLong(8, 0x0bad_0bad_0bad_0badL);
                    assertEquals(0L, fresh.buffer(8, 8).getLong(0), "a stale window wrote into a new region");
                } finally {
                    fresh.close();
                }
            }
            assertEquals(0x0bad_0bad_0bad_0badL, w.getLong(0));
        } finally {
            s.close();
        }
    }

    @ParameterizedTest
    @MethodSource("org.jwarp.disni.GuestDevices#addresses")
    void bundledLibraryCameFromTheJarCache(String addr) throws ExecutionException {
        assertTrue(DisniRuntime.get().libraryPath().isPresent(), "libdisni must come from the bundled copy");
        assertTrue(addr.length() > 0);
    }

    @ParameterizedTest
    @MethodSource("org.jwarp.disni.GuestDevices#addresses")
    void secondListenerOnABoundPortReportsTypedEaddrinuse(String addr) throws Exception {
        try (Side s = new Side(provider, addr)) {
            InetSocketAddress at = new InetSocketAddress(InetAddress.getByName(addr),
                    23900 + (int) (ProcessHandle.current().pid() % 90));
            try (Listener l = s.dev.connectionManager().listen(at, 4)) {
                RdmaException e = assertThrows(RdmaException.class, () -> s.dev.connectionManager().listen(at, 4));
                System.out.println("second listen on " + at + ": " + e);
                assertEquals(98, NativeErrnoException.errnoOf(e), "rdma_bind_addr's EADDRINUSE as a number: " + e);
                assertTrue(l.localAddress().getPort() == at.getPort());
            }
        }
    }
}
