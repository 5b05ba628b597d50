package org.jwarp.examples.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/** The value slots' reuse rule: a slot a GET handed out is not reused before that reader's next request. */
class SlotTableTest {
    @Test
    void aRetiredSlotIsReusedOnlyOnceItsReaderMovedOn() {
        SlotTable t = new SlotTable(1, 1 + 2 * 2);
        int live = t.load(0);
        SlotTable.Lease reader = new SlotTable.Lease();
        SlotTable.Lease writer = new SlotTable.Lease();
        reader.staging = t.allocate();
        writer.staging = t.allocate();
        assertEquals(live, t.get(reader, 0));
        int written = writer.staging;
        int nextStaging = t.commit(writer, 0, 1);
        assertNotEquals(live, nextStaging, "the slot under a reader went to a writer");
        assertEquals(written, t.get(writer, 0));
        assertEquals(1, writer.pinnedVersion);
        t.release(reader); // the reader's next request: its slot may now be reused
        t.close(reader);
        t.close(writer);
        assertEquals(4, t.freeSlots(), "everything but the key's slot is free again");
    }
}
