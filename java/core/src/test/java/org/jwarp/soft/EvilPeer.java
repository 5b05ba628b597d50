package org.jwarp.soft;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

import org.jwarp.mpa.MpaRequestReplyFlyweight;
import org.jwarp.ground.TermCode;
import org.jwarp.soft.cm.SetupTerm;

/** A raw-socket peer for malformed-input tests: blocking I/O with a read timeout. */
final class EvilPeer implements AutoCloseable {
    final Socket socket;
    final DataInputStream in;
    final OutputStream out;

    EvilPeer(Socket s) throws IOException {
        socket = s;
        try {
            s.setSoTimeout(5000);
            s.setTcpNoDelay(true);
        } catch (java.net.SocketException e) {
            // already reset by the peer; reads will say so
        }
        in = new DataInputStream(s.getInputStream());
        out = s.getOutputStream();
    }

    static EvilPeer connect(InetSocketAddress a) throws IOException {
        Socket s = new Socket();
        s.connect(a, 5000);
        return new EvilPeer(s);
    }

    static EvilPeer accept(ServerSocket ss) throws IOException {
        ss.setSoTimeout(5000);
        return new EvilPeer(ss.accept());
    }

    void send(byte[] b) throws IOException {
        out.write(b);
        out.flush();
    }

    byte[] read(int n) throws IOException {
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    /** Reads one MPA frame (header + PD_Length). */
    byte[] readFrame() throws IOException {
        byte[] h = read(MpaRequestReplyFlyweight.HEADER_LENGTH);
        int pd = ((h[18] & 0xFF) << 8) | (h[19] & 0xFF);
        byte[] all = new byte[h.length + pd];
        System.arraycopy(h, 0, all, 0, h.length);
        in.readFully(all, h.length, pd);
        return all;
    }

    /** Reads one FPDU (length, ULPDU, pad, CRC) and returns all its bytes. */
    byte[] readFpdu() throws IOException {
        byte[] l = read(2);
        int ulpdu = ((l[0] & 0xFF) << 8) | (l[1] & 0xFF);
        int total = org.jwarp.mpa.Fpdu.fpduLength(ulpdu);
        byte[] all = new byte[total];
        all[0] = l[0];
        all[1] = l[1];
        in.readFully(all, 2, total - 2);
        return all;
    }

    /** Reads an FPDU that must be a TERM; returns its code. */
    TermCode readTerm() throws IOException {
        byte[] f = readFpdu();
        TermCode t = SetupTerm.sniff(ByteBuffer.wrap(f), 0);
        if (t == null) {
            throw new AssertionError("expected a TERM FPDU, got " + java.util.HexFormat.of().formatHex(f));
        }
        return t;
    }

    /** True when the peer closed (EOF or reset) within the read timeout. */
    boolean closedByPeer() throws IOException {
        try {
            InputStream s = socket.getInputStream();
            while (true) {
                int b = s.read();
                if (b < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (EOFException e) {
            return true;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
