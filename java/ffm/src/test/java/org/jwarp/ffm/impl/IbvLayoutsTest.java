package org.jwarp.ffm.impl;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The struct layouts are rdma-core 44's (IBVERBS_1.1 ABI, x86-64): every offset and size the
 * provider uses, pinned to what {@code offsetof}/{@code sizeof} gave on Debian 12's
 * libibverbs-dev 44.0-2, and compared with a C compiler's answer where the headers are installed.
 */
class IbvLayoutsTest {
    /** "struct.field" (or "sizeof struct") -> bytes, as the C compiler computes them from rdma-core 44's headers. */
    private static final Map<String, Long> RDMA_CORE_44 = new LinkedHashMap<>();
    private static final List<String> MISMATCHES = new ArrayList<>();

    static {
        pin("sizeof ibv_context", 328, IbvLayouts.CONTEXT.byteSize());
        pin("ibv_context.device", 0, IbvLayouts.CONTEXT_DEVICE);
        pin("ibv_context.cmd_fd", 264, IbvLayouts.CONTEXT_CMD_FD);
        pin("sizeof ibv_context_ops", 256, IbvLayouts.CONTEXT_OPS.byteSize());
        pin("ibv_context.ops.poll_cq", 8 + 88, IbvLayouts.OPS_POLL_CQ);
        pin("ibv_context.ops.req_notify_cq", 8 + 96, IbvLayouts.OPS_REQ_NOTIFY_CQ);
        pin("ibv_context.ops.post_srq_recv", 8 + 160, IbvLayouts.OPS_POST_SRQ_RECV);
        pin("ibv_context.ops.post_send", 8 + 200, IbvLayouts.OPS_POST_SEND);
        pin("ibv_context.ops.post_recv", 8 + 208, IbvLayouts.OPS_POST_RECV);
        pin("sizeof ibv_device_attr", 232, IbvLayouts.DEVICE_ATTR.byteSize());
        pin("ibv_device_attr.max_mr_size", 80, IbvLayouts.ATTR_MAX_MR_SIZE);
        pin("ibv_device_attr.max_qp_wr", 112, IbvLayouts.ATTR_MAX_QP_WR);
        pin("ibv_device_attr.max_sge", 120, IbvLayouts.ATTR_MAX_SGE);
        pin("ibv_device_attr.max_cqe", 132, IbvLayouts.ATTR_MAX_CQE);
        pin("ibv_device_attr.max_qp_rd_atom", 144, IbvLayouts.ATTR_MAX_QP_RD_ATOM);
        pin("ibv_device_attr.max_qp_init_rd_atom", 156, IbvLayouts.ATTR_MAX_QP_INIT_RD_ATOM);
        pin("ibv_device_attr.max_srq", 212, IbvLayouts.ATTR_MAX_SRQ);
        pin("ibv_device_attr.phys_port_cnt", 227, IbvLayouts.ATTR_PHYS_PORT_CNT);
        pin("sizeof ibv_pd", 16, IbvLayouts.PD.byteSize());
        pin("ibv_pd.context", 0, IbvLayouts.PD_CONTEXT);
        pin("sizeof ibv_mr", 48, IbvLayouts.MR.byteSize());
        pin("ibv_mr.pd", 8, IbvLayouts.MR_PD);
        pin("ibv_mr.addr", 16, IbvLayouts.MR_ADDR);
        pin("ibv_mr.length", 24, IbvLayouts.MR_LENGTH);
        pin("ibv_mr.lkey", 36, IbvLayouts.MR_LKEY);
        pin("ibv_mr.rkey", 40, IbvLayouts.MR_RKEY);
        pin("sizeof ibv_cq", 128, IbvLayouts.CQ.byteSize());
        pin("ibv_cq.context", 0, IbvLayouts.CQ_CONTEXT);
        pin("ibv_cq.cqe", 28, IbvLayouts.CQ_CQE);
        pin("sizeof ibv_wc", 48, IbvLayouts.WC.byteSize());
        pin("ibv_wc.wr_id", 0, IbvLayouts.WC_WR_ID);
        pin("ibv_wc.status", 8, IbvLayouts.WC_STATUS);
        pin("ibv_wc.opcode", 12, IbvLayouts.WC_OPCODE);
        pin("ibv_wc.vendor_err", 16, IbvLayouts.WC_VENDOR_ERR);
        pin("ibv_wc.byte_len", 20, IbvLayouts.WC_BYTE_LEN);
        pin("ibv_wc.imm_data", 24, IbvLayouts.WC_IMM_DATA);
        pin("ibv_wc.qp_num", 28, IbvLayouts.WC_QP_NUM);
        pin("ibv_wc.wc_flags", 36, IbvLayouts.WC_FLAGS);
        pin("ibv_wc.dlid_path_bits", 45, IbvLayouts.WC.byteOffset(groupElement("dlid_path_bits")));
        pin("sizeof ibv_qp", 160, IbvLayouts.QP.byteSize());
        pin("ibv_qp.context", 0, IbvLayouts.QP_CONTEXT);
        pin("ibv_qp.pd", 16, IbvLayouts.QP_PD);
        pin("ibv_qp.send_cq", 24, IbvLayouts.QP_SEND_CQ);
        pin("ibv_qp.recv_cq", 32, IbvLayouts.QP_RECV_CQ);
        pin("ibv_qp.qp_num", 52, IbvLayouts.QP_NUM);
        pin("ibv_qp.state", 56, IbvLayouts.QP_STATE);
        pin("sizeof ibv_qp_attr", 144, IbvLayouts.QP_ATTR.byteSize());
        pin("ibv_qp_attr.qp_state", 0, IbvLayouts.QP_ATTR_QP_STATE);
        pin("sizeof ibv_qp_init_attr", 64, IbvLayouts.QP_INIT_ATTR.byteSize());
        pin("ibv_qp_init_attr.send_cq", 8, IbvLayouts.INIT_SEND_CQ);
        pin("ibv_qp_init_attr.recv_cq", 16, IbvLayouts.INIT_RECV_CQ);
        pin("ibv_qp_init_attr.cap.max_send_wr", 32, IbvLayouts.INIT_MAX_SEND_WR);
        pin("ibv_qp_init_attr.cap.max_recv_wr", 36, IbvLayouts.INIT_MAX_RECV_WR);
        pin("ibv_qp_init_attr.cap.max_send_sge", 40, IbvLayouts.INIT_MAX_SEND_SGE);
        pin("ibv_qp_init_attr.cap.max_recv_sge", 44, IbvLayouts.INIT_MAX_RECV_SGE);
        pin("ibv_qp_init_attr.cap.max_inline_data", 48, IbvLayouts.INIT_MAX_INLINE);
        pin("ibv_qp_init_attr.qp_type", 52, IbvLayouts.INIT_QP_TYPE);
        pin("sizeof ibv_sge", 16, IbvLayouts.SGE.byteSize());
        pin("ibv_sge.length", 8, IbvLayouts.SGE_LENGTH);
        pin("ibv_sge.lkey", 12, IbvLayouts.SGE_LKEY);
        pin("sizeof ibv_send_wr", 128, IbvLayouts.SEND_WR.byteSize());
        pin("ibv_send_wr.next", 8, IbvLayouts.SWR_NEXT);
        pin("ibv_send_wr.sg_list", 16, IbvLayouts.SWR_SG_LIST);
        pin("ibv_send_wr.num_sge", 24, IbvLayouts.SWR_NUM_SGE);
        pin("ibv_send_wr.opcode", 28, IbvLayouts.SWR_OPCODE);
        pin("ibv_send_wr.send_flags", 32, IbvLayouts.SWR_SEND_FLAGS);
        pin("ibv_send_wr.imm_data", 36, IbvLayouts.SWR_IMM_DATA);
        pin("ibv_send_wr.wr.rdma.remote_addr", 40, IbvLayouts.SWR_REMOTE_ADDR);
        pin("ibv_send_wr.wr.rdma.rkey", 48, IbvLayouts.SWR_RKEY);
        pin("sizeof ibv_recv_wr", 32, IbvLayouts.RECV_WR.byteSize());
        pin("ibv_recv_wr.next", 8, IbvLayouts.RWR_NEXT);
        pin("ibv_recv_wr.sg_list", 16, IbvLayouts.RWR_SG_LIST);
        pin("ibv_recv_wr.num_sge", 24, IbvLayouts.RWR_NUM_SGE);
        pin("ibv_qp_init_attr.srq", 24, IbvLayouts.INIT_SRQ);
        pin("sizeof ibv_srq_attr", 12, IbvLayouts.SRQ_ATTR.byteSize());
        pin("ibv_srq_attr.srq_limit", 8, IbvLayouts.SRQ_ATTR_LIMIT);
        pin("sizeof ibv_srq_init_attr", 24, IbvLayouts.SRQ_INIT_ATTR.byteSize());
        pin("ibv_srq_init_attr.attr.max_wr", 8, IbvLayouts.SRQ_INIT_MAX_WR);
        pin("ibv_srq_init_attr.attr.max_sge", 12, IbvLayouts.SRQ_INIT_MAX_SGE);
        pin("ibv_srq.context", 0, IbvLayouts.SRQ_CONTEXT);
        pin("ibv_srq.pd", 16, IbvLayouts.SRQ_PD);
        pin("sizeof rdma_cm_id", 416, IbvLayouts.CM_ID.byteSize());
        pin("rdma_cm_id.verbs", 0, IbvLayouts.CM_ID_VERBS);
        pin("rdma_cm_id.channel", 8, IbvLayouts.CM_ID_CHANNEL);
        pin("rdma_cm_id.qp", 24, IbvLayouts.CM_ID_QP);
        pin("sizeof rdma_conn_param", 24, IbvLayouts.CONN_PARAM.byteSize());
        pin("rdma_conn_param.private_data_len", 8, IbvLayouts.CP_PRIVATE_DATA_LEN);
        pin("rdma_conn_param.responder_resources", 9, IbvLayouts.CP_RESPONDER_RESOURCES);
        pin("rdma_conn_param.initiator_depth", 10, IbvLayouts.CP_INITIATOR_DEPTH);
        pin("rdma_conn_param.retry_count", 12, IbvLayouts.CP_RETRY_COUNT);
        pin("rdma_conn_param.rnr_retry_count", 13, IbvLayouts.CP_RNR_RETRY_COUNT);
        pin("sizeof rdma_cm_event", 80, IbvLayouts.CM_EVENT.byteSize());
        pin("rdma_cm_event.listen_id", 8, IbvLayouts.EV_LISTEN_ID);
        pin("rdma_cm_event.event", 16, IbvLayouts.EV_EVENT);
        pin("rdma_cm_event.status", 20, IbvLayouts.EV_STATUS);
        pin("rdma_cm_event.param.conn", 24, IbvLayouts.EV_CONN);
    }

    private static void pin(String what, long rdmaCore44, long ours) {
        RDMA_CORE_44.put(what, rdmaCore44);
        if (rdmaCore44 != ours) {
            MISMATCHES.add(what + ": rdma-core 44 has " + rdmaCore44 + ", the layout " + ours);
        }
    }

    @Test
    void layoutsAreRdmaCore44s() {
        assertTrue(MISMATCHES.isEmpty(), String.join("\n", MISMATCHES));
    }

    @Test
    void everyLayoutIsNaturallyAligned() {
        for (StructLayout s : List.of(IbvLayouts.CONTEXT, IbvLayouts.DEVICE_ATTR, IbvLayouts.PD, IbvLayouts.MR,
                IbvLayouts.CQ, IbvLayouts.WC)) {
            assertEquals(0, s.byteSize() % s.byteAlignment(), s.name().orElse("?") + " size is a multiple of its alignment");
        }
    }

    /** The pinned numbers against this machine's headers, compiled with its C compiler. */
    @Test
    void layoutsAreThisMachinesHeaders(@TempDir Path dir) throws IOException, InterruptedException {
        for (String h : List.of("/usr/include/infiniband/verbs.h", "/usr/include/rdma/rdma_cma.h")) {
            assertTrue(Files.isRegularFile(Path.of(h)), h + " is missing: install libibverbs-dev librdmacm-dev "
                    + "(scripts/run-tests does, through scripts/setup-guest-deps --dev); the layouts cannot be checked "
                    + "against this machine's headers without them");
        }
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include <infiniband/verbs.h>\n"
                + "#include <rdma/rdma_cma.h>\nint main(void){\n");
        for (String key : RDMA_CORE_44.keySet()) {
            if (key.startsWith("sizeof ")) {
                String s = key.substring(7);
                c.append("printf(\"%s %zu\\n\", \"").append(key).append("\", sizeof(struct ").append(s).append("));\n");
            } else {
                String s = key.substring(0, key.indexOf('.'));
                String field = key.substring(key.indexOf('.') + 1);
                c.append("printf(\"%s %zu\\n\", \"").append(key).append("\", offsetof(struct ").append(s).append(", ")
                        .append(field).append("));\n");
            }
        }
        c.append("return 0;}\n");
        Path src = Files.writeString(dir.resolve("offsets.c"), c.toString());
        Path exe = dir.resolve("offsets");
        run(dir, "cc", "-o", exe.toString(), src.toString());
        String out = run(dir, exe.toString());
        List<String> wrong = new ArrayList<>();
        for (String line : out.strip().split("\n")) {
            int sp = line.lastIndexOf(' ');
            String key = line.substring(0, sp);
            long c99 = Long.parseLong(line.substring(sp + 1));
            if (c99 != RDMA_CORE_44.get(key)) {
                wrong.add(key + ": headers " + c99 + ", pinned " + RDMA_CORE_44.get(key));
            }
        }
        assertEquals(RDMA_CORE_44.size(), out.strip().split("\n").length, out);
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    private static String run(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", cmd) + " did not end");
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + out);
        return out;
    }

    @Test
    void aWrongLayoutIsRefusedLoudly() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> FfmContext.layoutCheck("ibv_cq", List.of("ibv_cq.cqe is 0")));
        assertTrue(e.getMessage().contains("rdma-core 44") && e.getMessage().contains("ibv_cq.cqe is 0")
                && e.getMessage().contains("Refusing to run"), e.getMessage());
    }
}
