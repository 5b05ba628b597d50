package org.jwarp.disni.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.BiConsumer;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;

/**
 * Test helper defined by the DiSNI loader (a child-first package): queue-pair creation that fails
 * part-way, on the device at an address (org.jwarp.disni.DisniQpSetupDeviceTest runs it). Case
 * {@code "leak"}: a QP whose Java side cannot be built after rdma_create_qp is destroyed, so its CQ
 * can be destroyed (ibv_destroy_cq refuses a CQ a QP still uses with EBUSY). Case {@code "stale"}:
 * an SGE request whose createQP threw before reaching _createQP does not apply to the thread's
 * next creation. Assertions are JUnit's (the parent loader's classes).
 */
public final class QpSetupProbe implements BiConsumer<String, String> {
    @Override
    public void accept(String which, String address) {
        try (DisniProviderImpl provider = new DisniProviderImpl()) {
            InetAddress local = InetAddress.getByName(address);
            if (which.equals("leak")) {
                leak(provider, local);
            } else if (which.equals("stale")) {
                stale(provider, local);
            } else {
                throw new IllegalArgumentException(which);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(which + " on " + address + ": " + e, e);
        }
    }

    static RdmaCmId boundId(DisniDevice dev, InetAddress local) throws IOException {
        RdmaCmId id = dev.dispatcher.createId();
        dev.dispatcher.locked(() -> {
            dev.cm.bindAddr(id, new InetSocketAddress(local, 0));
            return null;
        });
        return id;
    }

    static void leak(DisniProviderImpl provider, InetAddress local) throws Exception {
        try (DisniDevice dev = (DisniDevice) provider.open(local); ProtectionDomain pd = dev.allocateProtectionDomain()) {
            DisniCq cq = (DisniCq) dev.createCompletionQueue(16);
            RdmaCmId id = boundId(dev, local);
            try {
                dev.qpFactory = (qp, caps) -> {
                    throw new IOException("injected: the QP's Java side cannot be built");
                };
                IOException e = assertThrows(IOException.class, () -> dev.createQp(id, QueuePairConfig.of(pd, cq, 8)));
                assertTrue(e.getMessage().contains("injected"), e.toString());
            } finally {
                dev.qpFactory = DisniQp::new;
                dev.dispatcher.destroy(id, false);
            }
            // a QP left behind would still hold the CQ: ibv_destroy_cq refuses that with EBUSY
            int rc = dev.verbs.destroyCQ(cq.cq);
            assertEquals(0, rc, "ibv_destroy_cq after the failed setup (EBUSY: the QP leaked)");
        }
    }

    static void stale(DisniProviderImpl provider, InetAddress local) throws Exception {
        try (DisniDevice dev = (DisniDevice) provider.open(local); ProtectionDomain pd = dev.allocateProtectionDomain()) {
            DisniCq cq = (DisniCq) dev.createCompletionQueue(16);
            ProtectionDomain closed = dev.allocateProtectionDomain();
            closed.close(); // DiSNI's createQP refuses a closed PD in Java, before _createQP
            RdmaCmId first = boundId(dev, local);
            RdmaCmId second = boundId(dev, local);
            try {
                IOException e = assertThrows(IOException.class,
                        () -> dev.createQp(first, QueuePairConfig.of(closed, cq, 8).withSge(1, 1)));
                assertTrue(e.getMessage().contains("closed"), e.toString());
                // the same thread creates a QP through DiSNI without a request: the native default applies
                IbvQPInitAttr attr = new IbvQPInitAttr();
                attr.cap().setMax_send_wr(8);
                attr.cap().setMax_recv_wr(8);
                attr.setQp_type(IbvQP.IBV_QPT_RC);
                attr.setSend_cq(cq.cq);
                attr.setRecv_cq(cq.cq);
                IbvQP qp = dev.dispatcher.locked(() -> dev.cm.createQP(second, ((DisniPd) pd).pd, attr));
                assertTrue(qp != null);
                ByteBuffer granted = ByteBuffer.allocateDirect(JwarpNative.CAP_SIZE).order(ByteOrder.nativeOrder());
                assertEquals(JwarpNative.CAP_SIZE, JwarpNative.qpGranted(granted));
                int expected = Math.min(4, dev.info().maxSge());
                assertTrue(expected > 1, dev.info().toString());
                assertTrue(granted.getInt(JwarpNative.CAP_MAX_SEND_SGE) >= expected,
                        "send SGEs " + granted.getInt(JwarpNative.CAP_MAX_SEND_SGE) + ": the stale request for 1 applied");
                assertTrue(granted.getInt(JwarpNative.CAP_MAX_RECV_SGE) >= expected,
                        "recv SGEs " + granted.getInt(JwarpNative.CAP_MAX_RECV_SGE) + ": the stale request for 1 applied");
            } finally {
                dev.dispatcher.destroy(first, false);
                dev.dispatcher.destroy(second, true);
            }
        }
    }
}
