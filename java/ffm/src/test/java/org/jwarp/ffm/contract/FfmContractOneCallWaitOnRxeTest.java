package org.jwarp.ffm.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.jwarp.ffm.impl.NativeWaitLibrary;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * {@link FfmContractOnRxeTest} with {@code CompletionQueue.await} in one downcall: the CQs are
 * created while {@code -Djwarp.ffm.nativeLib} names jwarp's native library, so every await of the
 * suite runs {@code jw_cq_await} (poll, arm, poll, sleep, take the event, poll) instead of the Java
 * steps (guest only, JDK 25).
 */
@Tag("device")
class FfmContractOneCallWaitOnRxeTest extends FfmContractOnRxeTest {
    private static String was;

    @BeforeAll
    static void waitInOneDowncall() {
        was = System.getProperty(NativeWaitLibrary.PROPERTY);
        String lib = NativeWaitLibrary.path().toString();
        System.setProperty(NativeWaitLibrary.PROPERTY, lib);
        // a library without the symbol only warns: the suite would pass on the Java steps
        assertEquals("jw_cq_await of " + lib, NativeWaitLibrary.configuredWait());
    }

    @AfterAll
    static void waitInJavaSteps() {
        if (was == null) {
            System.clearProperty(NativeWaitLibrary.PROPERTY);
        } else {
            System.setProperty(NativeWaitLibrary.PROPERTY, was);
        }
    }
}
