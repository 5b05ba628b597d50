package org.jwarp.ground;

import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The Ready-to-Receive (RTR) indications of the RFC 6581 §9.2 peer-to-peer model: the first FPDU
 * the initiator sends is a zero-length Send (flag B), RDMA Write (flag C) or RDMA Read (flag D).
 * An application offers them with {@code ConnectionParameters.Builder#rtrTypes} (verbs package)
 * and finds the one chosen in {@code ConnectionInfo#rtr()}.
 *
 * <p>Immutable; the static methods are thread-safe.
 */
public enum RtrType {
    /** B: zero-length Send. */
    SEND("send"),
    /** C: zero-length RDMA Write. */
    WRITE("write"),
    /** D: zero-length RDMA Read Request; it needs an IRD of at least 1 at the responder. */
    READ("read");

    /**
     * The order in which jwarp picks among common RTR types: Write, then Read, then Send, as Linux
     * siw does (it prefers Write and never sends a Send RTR; irdma prefers Read and refuses Send).
     */
    public static final List<RtrType> PREFERENCE = List.of(WRITE, READ, SEND);

    private final String wireName;

    RtrType(String wireName) {
        this.wireName = wireName;
    }

    /** {@return "send", "write" or "read", as the CLI prints it} */
    public String wireName() {
        return wireName;
    }

    /**
     * A mutable copy of {@code types} (EnumSet.copyOf refuses an empty plain Set).
     *
     * @param types the types to copy
     * @return a new set of the same types
     */
    public static EnumSet<RtrType> mutableCopy(Set<RtrType> types) {
        return types.isEmpty() ? EnumSet.noneOf(RtrType.class) : EnumSet.copyOf(types);
    }

    /**
     * The most preferred member of {@code candidates} in {@link #PREFERENCE} order.
     *
     * @param candidates the types to choose from
     * @return the preferred one, or null when {@code candidates} is empty
     */
    public static RtrType preferred(Set<RtrType> candidates) {
        for (RtrType t : PREFERENCE) {
            if (candidates.contains(t)) {
                return t;
            }
        }
        return null;
    }

    /**
     * Parses {@code "write+read"} style lists ({@code "none"} or empty for no type); {@code +},
     * {@code |} and {@code /} separate names, case is ignored.
     *
     * @param text the list
     * @return the types, a new mutable set
     * @throws IllegalArgumentException for an unknown name
     */
    public static Set<RtrType> parseSet(String text) {
        EnumSet<RtrType> set = EnumSet.noneOf(RtrType.class);
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.isEmpty() || t.equals("none")) {
            return set;
        }
        for (String part : t.split("[+|/]")) {
            set.add(parse(part));
        }
        return set;
    }

    /**
     * Parses "send", "write" or "read" (case and surrounding blanks ignored).
     *
     * @param name the name
     * @return its type
     * @throws IllegalArgumentException for an unknown name
     */
    public static RtrType parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (RtrType r : values()) {
            if (r.wireName.equals(n)) {
                return r;
            }
        }
        throw new IllegalArgumentException("rtr: unknown RTR type '" + name + "', expected send, write or read (RFC 6581 §9.2)");
    }

    /**
     * "write+read" style text for a set, in preference order.
     *
     * @param set the types
     * @return the text, "none" when {@code set} is empty
     */
    public static String format(Set<RtrType> set) {
        StringBuilder sb = new StringBuilder();
        for (RtrType t : PREFERENCE) {
            if (set.contains(t)) {
                if (sb.length() > 0) {
                    sb.append('+');
                }
                sb.append(t.wireName);
            }
        }
        return sb.length() == 0 ? "none" : sb.toString();
    }
}
