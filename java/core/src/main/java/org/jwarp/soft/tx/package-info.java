/**
 * Transmit buffers of the soft provider (the buffer side of siw_qp_tx): the staging areas a
 * connection borrows from its device's {@link org.jwarp.soft.tx.DirectBufferPool} (each with the
 * arrays of an {@link org.jwarp.mpa.SliceTable}), the zero-copy {@link org.jwarp.soft.tx.TxGather}
 * that turns the engine's FPDUs (RFC 5044 §4) and the payload slices it referenced into mpa's
 * {@link org.jwarp.mpa.FpduSink} into one gathering socket write, the FPDU size from the interface's MTU ({@link org.jwarp.soft.tx.FpduSizing}), and
 * {@link org.jwarp.soft.tx.SourceRevocation}: a region revoked while the gather still references
 * its bytes is fenced, the bytes copied first (RFC 5041 §8.3.1).
 *
 * <p>Imports: {@code soft.loop} only (the I/O lock) within soft; every sub-package above may use this one.
 * A transmitter waiting for an area is a {@link org.jwarp.soft.tx.StagingWaiter}, whose queue
 * state the pool keeps. Checked by {@code LayeringTest}.
 */
package org.jwarp.soft.tx;
