/**
 * An RDMA key-value store written against the public verbs API only, the example to copy for
 * middleware: one shared receive queue for every connection, server threads sleeping on completion
 * channels (poll–arm–poll), GETs answered with the address and STag of a value that the client
 * RDMA-Reads from one region all connections share, PUTs as a chained two-SGE Write plus an inline
 * solicited commit Send, asynchronous connect and accept. {@link org.jwarp.examples.kv.KvStress}
 * runs it as a stress test with every byte verified.
 */
package org.jwarp.examples.kv;
