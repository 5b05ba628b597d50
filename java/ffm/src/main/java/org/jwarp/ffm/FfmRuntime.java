package org.jwarp.ffm;

import java.lang.reflect.InvocationTargetException;

/**
 * Whether the {@code ffm} provider can run in this JVM, decided before any Java 25 class is
 * loaded. This class alone is compiled for release 17: a Java 17 JVM that finds {@code jwarp-ffm}
 * on its class path loads it and is told why the provider cannot run, instead of failing with
 * UnsupportedClassVersionError on the classes that use {@code java.lang.foreign}. The Java 25
 * part ({@code org.jwarp.ffm.impl}) is named here only by string.
 */
public final class FfmRuntime {
    /** The first Java release with the Foreign Function &amp; Memory API final and this module's class files. */
    public static final int REQUIRED_FEATURE = 25;
    static final String DEVICES = "org.jwarp.ffm.impl.FfmDevices";

    private FfmRuntime() {
    }

    /**
     * Null when rdma-core answers through {@code java.lang.foreign} and lists at least one device;
     * otherwise why not (Java too old, libibverbs missing, no RDMA kernel support, no device).
     */
    public static String unavailableReason() {
        String tooOld = javaTooOld(Runtime.version().feature());
        if (tooOld != null) {
            return tooOld;
        }
        try {
            Object names = Class.forName(DEVICES).getMethod("deviceNames").invoke(null);
            return ((java.util.List<?>) names).isEmpty() ? "rdma-core lists no RDMA device (ibv_get_device_list: 0)" : null;
        } catch (InvocationTargetException e) {
            return String.valueOf(e.getCause().getMessage());
        } catch (ReflectiveOperationException | LinkageError e) {
            return "the ffm provider's Java 25 classes did not load: " + e;
        }
    }

    /**
     * Prints {@code java <feature>: <why not>} and exits 2, or {@code java <feature>: available} and
     * exits 0: what a launcher asks before choosing the JVM for {@code --provider ffm}.
     */
    public static void main(String[] args) {
        String why = unavailableReason();
        System.out.println("java " + Runtime.version().feature() + ": " + (why == null ? "available" : why));
        System.exit(why == null ? 0 : 2);
    }

    /** Why a JVM of this feature release cannot run the provider, or null. */
    static String javaTooOld(int feature) {
        return feature >= REQUIRED_FEATURE ? null : "the ffm provider needs Java " + REQUIRED_FEATURE
                + " or newer (java.lang.foreign); this JVM is Java " + feature + ": use the soft or disni provider, "
                + "or run on Java " + REQUIRED_FEATURE;
    }
}
