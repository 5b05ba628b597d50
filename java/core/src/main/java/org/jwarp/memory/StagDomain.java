package org.jwarp.memory;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A protection domain, RFC 5041 §8.2 and RFC 5040 §8.1: an STag may be used on a DDP stream only
 * if both were created in the same protection domain. Identity is the object; {@link #id()} is for
 * logs and the CLI.
 */
public final class StagDomain {
    private static final AtomicInteger NEXT_ID = new AtomicInteger(1);

    private final int id;

    public StagDomain() {
        this.id = NEXT_ID.getAndIncrement();
    }

    public int id() {
        return id;
    }

    @Override
    public String toString() {
        return "PD#" + id;
    }
}
