package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.EnumSet;
import java.util.Set;
import org.jwarp.ground.RtrType;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SetupValuesTest {

    @Test
    @DisplayName("The private data is copied in and out: a caller's later writes change no built value")
    void privateDataIsCopiedInAndOut() {
        byte[] given = {1, 2, 3};
        SetupValues v = SetupValues.DEFAULTS.withUlpPrivateData(given);
        given[0] = 9;
        v.ulpPrivateData()[1] = 9;
        assertArrayEquals(new byte[] {1, 2, 3}, v.ulpPrivateData());
        assertEquals(v, SetupValues.DEFAULTS.withUlpPrivateData(new byte[] {1, 2, 3}));
    }

    @Test
    @DisplayName("The RTR types are copied in and cannot be changed through the value")
    void rtrTypesAreCopiedAndUnmodifiable() {
        Set<RtrType> given = EnumSet.of(RtrType.SEND);
        SetupValues v = SetupValues.DEFAULTS.withRtrTypes(given);
        given.add(RtrType.READ);
        assertEquals(Set.of(RtrType.SEND), v.rtrTypes());
        assertThrows(UnsupportedOperationException.class, () -> v.rtrTypes().add(RtrType.WRITE));
    }

    @Test
    @DisplayName("RFC 6581 §9.1: IRD and ORD are checked as the builder's field names them")
    void irdOrdNameTheBuildersField_6581_9_1() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SetupValues.DEFAULTS.withIrd("maxIrd", 0x4000));
        assertEquals("maxIrd: 16384 is outside the 14-bit range 0..16383 (RFC 6581 §9.1)", e.getMessage());
        assertEquals(0x3FFF, SetupValues.DEFAULTS.withOrd("ord", 0x3FFF).ord());
    }

    @Test
    @DisplayName("RFC 6581 §9.1: the canonical constructor refuses an IRD or ORD outside 14 bits, as the with methods do")
    void canonicalConstructorChecksIrdOrd_6581_9_1() {
        IllegalArgumentException ird = assertThrows(IllegalArgumentException.class, () -> new SetupValues(-1, 16, true,
                Set.of(RtrType.WRITE), true, false, null, MpaFrameLimits.RFC));
        assertEquals("ird: -1 is outside the 14-bit range 0..16383 (RFC 6581 §9.1)", ird.getMessage());
        IllegalArgumentException ord = assertThrows(IllegalArgumentException.class, () -> new SetupValues(16, 0x4000, true,
                Set.of(RtrType.WRITE), true, false, null, MpaFrameLimits.RFC));
        assertEquals("ord: 16384 is outside the 14-bit range 0..16383 (RFC 6581 §9.1)", ord.getMessage());
        assertEquals(0x3FFF, new SetupValues(0x3FFF, 0, true, Set.of(RtrType.WRITE), true, false, null,
                MpaFrameLimits.RFC).ird());
    }
}
