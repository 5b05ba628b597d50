package org.jwarp.soft;

import java.io.IOException;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Set;

/**
 * A socket channel standing in for a stream's own (tests swap it in under the stream's I/O lock):
 * it reads from the real socket, but at most {@link #cap} bytes per plain read, and remembers the
 * targets of the last scattering read and what went into each.
 */
final class ScriptedChannel extends SocketChannel {
    private final SocketChannel real;
    /** Most bytes one plain read returns. */
    int cap = Integer.MAX_VALUE;
    /** The first target of the last scattering read, its position before and after. */
    ByteBuffer scatterFirst;
    int scatterFrom;
    int scatterTo;
    int scatterReads;

    ScriptedChannel(SocketChannel real) {
        super(real.provider());
        this.real = real;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        int lim = dst.limit();
        dst.limit(dst.position() + Math.min(cap, dst.remaining()));
        try {
            return real.read(dst);
        } finally {
            dst.limit(lim);
        }
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        scatterFirst = dsts[offset];
        scatterFrom = scatterFirst.position();
        try {
            return real.read(dsts, offset, length);
        } finally {
            scatterTo = scatterFirst.position();
            scatterReads++;
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return real.write(src);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return real.write(srcs, offset, length);
    }

    @Override
    public SocketChannel bind(SocketAddress local) throws IOException {
        throw new UnsupportedOperationException();
    }

    @Override
    public <T> SocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        real.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return real.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return real.supportedOptions();
    }

    @Override
    public SocketChannel shutdownInput() throws IOException {
        real.shutdownInput();
        return this;
    }

    @Override
    public SocketChannel shutdownOutput() throws IOException {
        real.shutdownOutput();
        return this;
    }

    @Override
    public java.net.Socket socket() {
        return real.socket();
    }

    @Override
    public boolean isConnected() {
        return real.isConnected();
    }

    @Override
    public boolean isConnectionPending() {
        return false;
    }

    @Override
    public boolean connect(SocketAddress remote) {
        throw new UnsupportedOperationException();
    }

    @Override
    public boolean finishConnect() {
        return true;
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        return real.getRemoteAddress();
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        return real.getLocalAddress();
    }

    @Override
    protected void implCloseSelectableChannel() {
        // the stream closes the real channel
    }

    @Override
    protected void implConfigureBlocking(boolean block) {
        // reads go to the real (non-blocking) channel
    }
}
