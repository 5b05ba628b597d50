package org.jwarp.soft;

import org.jwarp.soft.verbs.VerbsProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.soft.verbs.SoftSharedReceiveQueue;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.WorkRequestException;
import org.junit.jupiter.api.Test;

/**
 * Closing a soft protection domain (RFC 5041 §8.2, §8.3.1 (6)): once {@code close()} returns no
 * STag of the domain is valid, also one a racing {@code register()} obtained; a later register is
 * refused with a typed error; the domain's shared receive queues close with it.
 */
class SoftProtectionDomainCloseTest {

    @Test
    void registerRacingCloseLeavesNoLiveStag_5041_8_3_1() throws Exception {
        AtomicInteger lateLive = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        try (SoftProvider provider = new SoftProvider(SoftConfig.defaults());
             SoftDevice device = provider.open(SoftFixture.LOOPBACK)) {
            for (int round = 0; round < 300 && lateLive.get() == 0; round++) {
                SoftProtectionDomain pd = device.allocateProtectionDomain();
                ConcurrentLinkedQueue<SoftMemoryRegion> got = new ConcurrentLinkedQueue<>();
                AtomicReference<Throwable> odd = new AtomicReference<>();
                CountDownLatch started = new CountDownLatch(2);
                Thread[] ts = new Thread[2];
                for (int i = 0; i < ts.length; i++) {
                    ts[i] = new Thread(() -> {
                        started.countDown();
                        try {
                            while (true) {
                                got.add(pd.register(ByteBuffer.allocateDirect(64), EnumSet.of(Access.LOCAL_WRITE)));
                            }
                        } catch (RdmaException e) {
                            refused.incrementAndGet(); // the typed refusal: the domain is closed
                        } catch (Throwable e) {
                            odd.set(e);
                        }
                    });
                    ts[i].start();
                }
                started.await();
                Thread.sleep(0, 200_000);
                pd.close();
                // close() returned: whatever a register obtained must already be dead
                for (SoftMemoryRegion r : got) {
                    if (VerbsProbe.isValid(r) || device.stags().lookup(r.lkey()) != null) {
                        lateLive.incrementAndGet();
                    }
                }
                for (Thread t : ts) {
                    t.join(10_000);
                    assertFalse(t.isAlive());
                }
                if (odd.get() != null) {
                    throw new AssertionError("register failed with an untyped error", odd.get());
                }
                for (SoftMemoryRegion r : got) { // a register that returned after close() did too
                    if (VerbsProbe.isValid(r) || device.stags().lookup(r.lkey()) != null) {
                        lateLive.incrementAndGet();
                    }
                }
            }
        }
        assertEquals(0, lateLive.get(), "STags valid after their protection domain's close() returned");
        assertTrue(refused.get() > 0);
    }

    @Test
    void closedDomainRefusesRegistrationTyped_5041_8_2() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            SoftMemoryRegion r = f.region(f.pd, 64, Access.LOCAL_WRITE);
            f.pd.close();
            assertFalse(VerbsProbe.isValid(r));
            assertNull(f.device.stags().lookup(r.lkey()));
            assertThrows(RdmaException.class, () -> f.pd.register(ByteBuffer.allocateDirect(8), EnumSet.noneOf(Access.class)));
            assertThrows(RdmaException.class, () -> f.pd.allocate(8, EnumSet.noneOf(Access.class)));
            assertThrows(RdmaException.class, () -> f.pd.createSharedReceiveQueue(4, 1));
        }
    }

    @Test
    void sharedReceiveQueueClosesWithItsDomain_5041_8_2() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            SoftMemoryRegion r = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftSharedReceiveQueue srq = f.pd.createSharedReceiveQueue(4, 1);
            srq.postRecv(1, r, 0, 64);
            assertEquals(1, srq.posted());
            f.pd.close();
            assertEquals(0, srq.posted(), "buffers of a closed domain's SRQ are released");
            WorkRequestException e = assertThrows(WorkRequestException.class, () -> srq.postRecv(2, r, 0, 64));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            srq.close(); // closing it again is harmless
        }
    }

    @Test
    void closedSharedReceiveQueueIsForgottenByItsDomain_5041_8_2() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            for (int i = 0; i < 100; i++) {
                f.pd.createSharedReceiveQueue(4, 1).close();
            }
            assertEquals(0, VerbsProbe.liveSharedReceiveQueues(f.pd), "a closed SRQ is not kept by its domain");
            f.pd.createSharedReceiveQueue(4, 1);
            assertEquals(1, VerbsProbe.liveSharedReceiveQueues(f.pd));
        }
    }
}
