package org.jwarp.examples.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The key-value store under stress on the soft provider over loopback: 8 connections x 10,000
 * operations with every byte verified, 2 server threads on completion channels, 2 CPU hog threads.
 * Only the whole run is bounded in time; a hang fails it.
 */
class KvStressTest {
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void eightConnectionsUnderTwoHogsOnSoft() throws Exception {
        KvStress.Options o = KvStress.Options.defaults().with("soft", "127.0.0.1")
                .withLoad(8, 10_000, 2, 2).withTimeout(Duration.ofSeconds(240));
        KvStress.Report r = KvStress.run(o);
        System.out.println("kv stress, soft: " + r);
        assertEquals(80_000, r.ops());
        assertTrue(r.gets() > 0 && r.puts() > 0 && r.readBytes() > 0, r.toString());
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            assertTrue(!t.getName().startsWith("kv-") || !t.isAlive(), "thread left running: " + t);
        }
    }

    /**
     * The example users copy allocates nothing per operation on its client threads once warm (a GET
     * is a Send, a wait, an RDMA Read and a wait; a PUT a two-WR chain and a wait), so the
     * library's post, poll and await paths allocate nothing either: garbage collection would stall
     * every connection at once.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void clientOperationsAllocateNothingOnceWarm() throws Exception {
        KvStress.Options o = KvStress.Options.defaults().with("soft", "127.0.0.1")
                .withLoad(2, 5_000, 1, 0).withWarmup(5_000).withTimeout(Duration.ofSeconds(240));
        KvStress.Report r = KvStress.run(o);
        System.out.println("kv allocation, soft: " + r);
        assertEquals(10_000, r.ops());
        assertTrue(r.allocatedPerOp() >= 0, "this JVM does not count allocated bytes per thread: " + r);
        assertTrue(r.allocatedPerOp() < 8, "client threads allocated " + r.allocatedPerOp() + " bytes per operation");
    }
}
