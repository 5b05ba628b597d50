package org.jwarp.ffm.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The device list through java.lang.foreign is the one the kernel shows in sysfs. */
class FfmDevicesTest {
    @Test
    void deviceNamesAreTheKernelsOrItsErrno() throws IOException {
        Path verbs = Path.of("/sys/class/infiniband_verbs");
        if (Files.isDirectory(verbs)) {
            List<String> expected;
            Path ib = Path.of("/sys/class/infiniband");
            try (Stream<Path> s = Files.isDirectory(ib) ? Files.list(ib) : Stream.empty()) {
                expected = s.map(p -> p.getFileName().toString()).sorted().toList();
            }
            assertEquals(expected, FfmDevices.deviceNames().stream().sorted().toList());
        } else {
            // no uverbs in this kernel: rdma-core refuses with ENOSYS, captured at the call
            UncheckedIOException e = assertThrows(UncheckedIOException.class, FfmDevices::deviceNames);
            assertTrue(e.getMessage().contains("errno 38"), e.getMessage());
        }
    }
}
