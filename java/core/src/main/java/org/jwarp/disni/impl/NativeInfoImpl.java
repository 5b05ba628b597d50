package org.jwarp.disni.impl;

import com.ibm.disni.verbs.RdmaProvider;
import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jwarp.disni.NativeInfo;
import org.jwarp.disni.natives.JwarpNative;

/** {@link NativeInfo} inside the DiSNI loader (RFC 5040 verbs devices through DiSNI). */
public final class NativeInfoImpl implements NativeInfo {
    @Override
    public int disniJniVersion() throws IOException {
        return RdmaProvider.provider().getVersion();
    }

    @Override
    public int extensionVersion() {
        return JwarpNative.version();
    }

    @Override
    public Map<String, Integer> layouts() {
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("ibv_send_wr.size", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_SIZE));
        m.put("ibv_recv_wr.size", JwarpNative.probe(JwarpNative.PROBE_RECV_WR_SIZE));
        m.put("ibv_sge.size", JwarpNative.probe(JwarpNative.PROBE_SGE_SIZE));
        m.put("ibv_wc.size", JwarpNative.probe(JwarpNative.PROBE_WC_SIZE));
        m.put("ibv_send_wr.next", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_NEXT));
        m.put("ibv_send_wr.sg_list", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_SG_LIST));
        m.put("ibv_send_wr.num_sge", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_NUM_SGE));
        m.put("ibv_send_wr.opcode", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_OPCODE));
        m.put("ibv_send_wr.send_flags", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_FLAGS));
        m.put("ibv_send_wr.imm_data", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_IMM));
        m.put("ibv_send_wr.wr.rdma.remote_addr", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_REMOTE_ADDR));
        m.put("ibv_send_wr.wr.rdma.rkey", JwarpNative.probe(JwarpNative.PROBE_SEND_WR_RKEY));
        m.put("ibv_wc.status", JwarpNative.probe(JwarpNative.PROBE_WC_STATUS));
        m.put("ibv_wc.opcode", JwarpNative.probe(JwarpNative.PROBE_WC_OPCODE));
        m.put("ibv_wc.vendor_err", JwarpNative.probe(JwarpNative.PROBE_WC_VENDOR_ERR));
        m.put("ibv_wc.byte_len", JwarpNative.probe(JwarpNative.PROBE_WC_BYTE_LEN));
        m.put("ibv_wc.imm_data", JwarpNative.probe(JwarpNative.PROBE_WC_IMM));
        m.put("ibv_wc.qp_num", JwarpNative.probe(JwarpNative.PROBE_WC_QP_NUM));
        m.put("ibv_wc.wc_flags", JwarpNative.probe(JwarpNative.PROBE_WC_FLAGS));
        m.put("rdma_conn_param.size", JwarpNative.probe(JwarpNative.PROBE_CONN_PARAM_SIZE));
        m.put("event_info.size", JwarpNative.probe(JwarpNative.PROBE_EVENT_INFO_SIZE));
        m.put("device_info.size", JwarpNative.probe(JwarpNative.PROBE_DEVICE_INFO_SIZE));
        m.put("max_private_data", JwarpNative.probe(JwarpNative.PROBE_MAX_PRIVATE_DATA));
        m.put("errno.EADDRINUSE", JwarpNative.probe(JwarpNative.PROBE_ERRNO_EADDRINUSE));
        m.put("errno.EINVAL", JwarpNative.probe(JwarpNative.PROBE_ERRNO_EINVAL));
        return m;
    }

    @Override
    public List<String> deviceNames() throws IOException {
        return Arrays.asList(JwarpNative.deviceNames());
    }
}
