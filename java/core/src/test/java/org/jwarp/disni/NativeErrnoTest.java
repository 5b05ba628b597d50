package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.function.Supplier;
import org.jwarp.verbs.RdmaException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The native layer reports a failed call's errno as a number, not only in the message text. */
class NativeErrnoTest {

    @Test
    @DisplayName("errnoOf finds the typed errno anywhere in a cause chain, 0 without one")
    void errnoOfWalksTheCauseChain() {
        NativeErrnoException n = new NativeErrnoException("rdma_connect: Address already in use (errno 98)", 98);
        assertEquals(98, NativeErrnoException.errnoOf(n));
        assertEquals(98, NativeErrnoException.errnoOf(new RdmaException("connect to x: " + n.getMessage(), n)));
        assertEquals(98, NativeErrnoException.errnoOf(new RdmaException("outer", new IllegalStateException(n))));
        assertEquals(0, NativeErrnoException.errnoOf(new RdmaException("connect: (errno 98)")),
                "the message text alone means nothing");
        assertEquals(0, NativeErrnoException.errnoOf(null));
        assertInstanceOf(IOException.class, n);
    }

    @Test
    @Tag("native")
    @DisplayName("libdisni throws NativeErrnoException with the errno of the failed call")
    @SuppressWarnings("unchecked")
    void nativeFailuresCarryTheirErrno() {
        Object[] r = ((Supplier<Object[]>) DisniRuntime.get().newInstance("org.jwarp.disni.impl.NativeErrnoProbe",
                Supplier.class)).get();
        int einval = (Integer) r[2];
        int eaddrinuse = (Integer) r[3];
        assertEquals(22, einval, "Linux EINVAL");
        assertEquals(98, eaddrinuse, "Linux EADDRINUSE (x86_64, aarch64)");
        NativeErrnoException nullId = assertInstanceOf(NativeErrnoException.class, r[0]);
        assertEquals(einval, nullId.errno());
        assertTrue(nullId.getMessage().startsWith("rdma_connect: null id"), nullId.getMessage());
        NativeErrnoException noDevice = assertInstanceOf(NativeErrnoException.class, r[1]);
        assertTrue(noDevice.errno() > 0, "errno of ibv_open_device/ibv_get_device_list: " + noDevice.errno());
        assertTrue(noDevice.getMessage().endsWith("(errno " + noDevice.errno() + ")"), noDevice.getMessage());
    }
}
