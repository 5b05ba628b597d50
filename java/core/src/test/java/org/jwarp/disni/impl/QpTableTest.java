package org.jwarp.disni.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The qp_num → QP table that routes completions to their RFC 5040 §5 stream. */
class QpTableTest {
    record Q(int num) {
    }

    @Test
    @DisplayName("Completions find their QP by qp_num among thousands, across attach and detach (RFC 5040 §5)")
    void findsEveryAttachedQpByNumber_5040_5() {
        QpTable<Q> t = new QpTable<>(Q::num);
        Random r = new Random(7);
        List<Q> live = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            Q q = new Q(r.nextInt(1 << 24));
            if (t.get(q.num()) != null) {
                continue;
            }
            t = t.with(q);
            live.add(q);
        }
        assertEquals(live.size(), t.size());
        for (Q q : live) {
            assertSame(q, t.get(q.num()));
        }
        for (int i = 0; i < live.size(); i += 2) {
            t = t.without(live.get(i));
        }
        for (int i = 0; i < live.size(); i++) {
            Q q = live.get(i);
            if (i % 2 == 0) {
                assertNull(t.get(q.num()), "detached " + q);
            } else {
                assertSame(q, t.get(q.num()), "still attached " + q);
            }
        }
        Q reused = new Q(live.get(1).num());
        t = t.with(reused);
        assertSame(reused, t.get(reused.num()), "a reused qp_num maps to the new QP");
        assertSame(t, t.without(live.get(1)), "detaching the replaced QP changes nothing");
    }
}
