package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The async-event pump's life on the host, no device needed: a context whose {@code async_fd} is -1,
 * which poll(2) ignores, so the pump's thread just waits out its 100 ms slices. At most one thread may
 * poll a context's fd: two would race for each event, and the old one, with no devices left, would
 * acknowledge it unseen.
 */
class FfmAsyncEventsTest {
    private static final String NAME = "pump-test0";

    @Test
    void aJoinDuringTheLastLeaveStartsItsPumpOnlyOnceTheOldThreadEnded() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment ctx = arena.allocate(IbvLayouts.CONTEXT);
            ctx.set(JAVA_INT, IbvLayouts.CONTEXT.byteOffset(MemoryLayout.PathElement.groupElement("async_fd")), -1);
            FfmAsyncEvents.Sink first = (type, element) -> { };
            FfmAsyncEvents.Sink second = (type, element) -> { };
            for (int round = 0; round < 5; round++) {
                FfmAsyncEvents.join(ctx, NAME, first);
                assertEquals(1, pumps().size(), "round " + round + ": pump threads after the first join");
                Thread leaver = new Thread(() -> FfmAsyncEvents.leave(ctx, first), "leaver");
                leaver.start();
                // The last leave has stopped the pump once it waits for the pump's thread.
                while (leaver.isAlive() && leaver.getState() != Thread.State.WAITING
                        && leaver.getState() != Thread.State.TIMED_WAITING) {
                    Thread.onSpinWait();
                }
                FfmAsyncEvents.join(ctx, NAME, second);
                assertEquals(1, pumps().size(), "round " + round + ": pump threads polling the context's fd after "
                        + "a join while the last device left");
                leaver.join();
                assertEquals(1, pumps().size(), "round " + round + ": the new pump runs on for the second device");
                FfmAsyncEvents.leave(ctx, second);
                assertEquals(0, pumps().size(), "round " + round + ": pump threads after the last leave");
            }
        }
    }

    private static List<Thread> pumps() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("jwarp-ffm-async-events-" + NAME) && t.isAlive()).toList();
    }
}
