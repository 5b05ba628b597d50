package org.jwarp.soft.verbs;

import org.jwarp.memory.StagTable;
import org.jwarp.provider.EventDispatcher;

/** What a protection domain and its regions need of the device that made them. */
public interface DeviceResources {
    /** The device's STag table (RFC 5040 §2.1), where regions are registered. */
    StagTable stags();

    /** The device's asynchronous events (e.g. an SRQ's limit reached). */
    EventDispatcher events();

    /** A closed protection domain leaves the device's list. */
    void forget(AutoCloseable closed);
}
