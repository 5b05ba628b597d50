package org.jwarp.ffm.impl;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * The parts of rdma-core's structs this provider reads or writes, as {@code java.lang.foreign}
 * layouts. They follow the frozen IBVERBS_1.1 ABI of {@code <infiniband/verbs.h>} (x86-64, LP64)
 * and were checked field by field against rdma-core 44 (Debian 12's libibverbs-dev 44.0-2) with
 * {@code offsetof}/{@code sizeof}. Fields the provider never touches are padding. Offsets are
 * named constants beside the layouts; {@code IbvLayoutsTest} pins them, and {@link FfmContext}
 * checks them against the live library when a device opens.
 */
final class IbvLayouts {
    private IbvLayouts() {
    }

    /** {@code struct ibv_context_ops}: 32 function pointers; the static inline hot verbs load theirs from here. */
    static final StructLayout CONTEXT_OPS = MemoryLayout.structLayout(
            MemoryLayout.paddingLayout(88),
            ADDRESS.withName("poll_cq"),
            ADDRESS.withName("req_notify_cq"),
            MemoryLayout.paddingLayout(56),
            ADDRESS.withName("post_srq_recv"),
            MemoryLayout.paddingLayout(32),
            ADDRESS.withName("post_send"),
            ADDRESS.withName("post_recv"),
            MemoryLayout.paddingLayout(40)).withName("ibv_context_ops");

    /** {@code struct ibv_context}: {@code ops} sits right after {@code device}. */
    static final StructLayout CONTEXT = MemoryLayout.structLayout(
            ADDRESS.withName("device"),
            CONTEXT_OPS.withName("ops"),
            JAVA_INT.withName("cmd_fd"),
            JAVA_INT.withName("async_fd"),
            MemoryLayout.paddingLayout(56)).withName("ibv_context");

    static final long CONTEXT_DEVICE = CONTEXT.byteOffset(groupElement("device"));
    static final long CONTEXT_CMD_FD = CONTEXT.byteOffset(groupElement("cmd_fd"));
    static final long OPS_POLL_CQ = CONTEXT.byteOffset(groupElement("ops"), groupElement("poll_cq"));
    static final long OPS_REQ_NOTIFY_CQ = CONTEXT.byteOffset(groupElement("ops"), groupElement("req_notify_cq"));
    static final long OPS_POST_SRQ_RECV = CONTEXT.byteOffset(groupElement("ops"), groupElement("post_srq_recv"));
    static final long OPS_POST_SEND = CONTEXT.byteOffset(groupElement("ops"), groupElement("post_send"));
    static final long OPS_POST_RECV = CONTEXT.byteOffset(groupElement("ops"), groupElement("post_recv"));

    /** {@code struct ibv_device_attr} (what {@code ibv_query_device} fills). */
    static final StructLayout DEVICE_ATTR = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(64, JAVA_BYTE).withName("fw_ver"),
            JAVA_LONG.withName("node_guid"),
            JAVA_LONG.withName("sys_image_guid"),
            JAVA_LONG.withName("max_mr_size"),
            JAVA_LONG.withName("page_size_cap"),
            JAVA_INT.withName("vendor_id"),
            JAVA_INT.withName("vendor_part_id"),
            JAVA_INT.withName("hw_ver"),
            JAVA_INT.withName("max_qp"),
            JAVA_INT.withName("max_qp_wr"),
            JAVA_INT.withName("device_cap_flags"),
            JAVA_INT.withName("max_sge"),
            JAVA_INT.withName("max_sge_rd"),
            JAVA_INT.withName("max_cq"),
            JAVA_INT.withName("max_cqe"),
            JAVA_INT.withName("max_mr"),
            JAVA_INT.withName("max_pd"),
            JAVA_INT.withName("max_qp_rd_atom"),
            JAVA_INT.withName("max_ee_rd_atom"),
            JAVA_INT.withName("max_res_rd_atom"),
            JAVA_INT.withName("max_qp_init_rd_atom"),
            MemoryLayout.paddingLayout(52),
            JAVA_INT.withName("max_srq"),
            JAVA_INT.withName("max_srq_wr"),
            JAVA_INT.withName("max_srq_sge"),
            MemoryLayout.paddingLayout(3),
            JAVA_BYTE.withName("phys_port_cnt"),
            MemoryLayout.paddingLayout(4)).withName("ibv_device_attr");

    static final long ATTR_MAX_MR_SIZE = DEVICE_ATTR.byteOffset(groupElement("max_mr_size"));
    static final long ATTR_MAX_QP_WR = DEVICE_ATTR.byteOffset(groupElement("max_qp_wr"));
    static final long ATTR_MAX_SGE = DEVICE_ATTR.byteOffset(groupElement("max_sge"));
    static final long ATTR_MAX_SGE_RD = DEVICE_ATTR.byteOffset(groupElement("max_sge_rd"));
    static final long ATTR_MAX_CQE = DEVICE_ATTR.byteOffset(groupElement("max_cqe"));
    static final long ATTR_MAX_QP_RD_ATOM = DEVICE_ATTR.byteOffset(groupElement("max_qp_rd_atom"));
    static final long ATTR_MAX_QP_INIT_RD_ATOM = DEVICE_ATTR.byteOffset(groupElement("max_qp_init_rd_atom"));
    static final long ATTR_MAX_SRQ = DEVICE_ATTR.byteOffset(groupElement("max_srq"));
    static final long ATTR_PHYS_PORT_CNT = DEVICE_ATTR.byteOffset(groupElement("phys_port_cnt"));

    /** {@code struct ibv_pd}. */
    static final StructLayout PD = MemoryLayout.structLayout(
            ADDRESS.withName("context"),
            JAVA_INT.withName("handle"),
            MemoryLayout.paddingLayout(4)).withName("ibv_pd");

    static final long PD_CONTEXT = PD.byteOffset(groupElement("context"));

    /** {@code struct ibv_mr}. */
    static final StructLayout MR = MemoryLayout.structLayout(
            ADDRESS.withName("context"),
            ADDRESS.withName("pd"),
            ADDRESS.withName("addr"),
            JAVA_LONG.withName("length"),
            JAVA_INT.withName("handle"),
            JAVA_INT.withName("lkey"),
            JAVA_INT.withName("rkey"),
            MemoryLayout.paddingLayout(4)).withName("ibv_mr");

    static final long MR_PD = MR.byteOffset(groupElement("pd"));
    static final long MR_ADDR = MR.byteOffset(groupElement("addr"));
    static final long MR_LENGTH = MR.byteOffset(groupElement("length"));
    static final long MR_LKEY = MR.byteOffset(groupElement("lkey"));
    static final long MR_RKEY = MR.byteOffset(groupElement("rkey"));

    /** {@code struct ibv_cq}: the IBVERBS_1.1 head (context .. cqe); the rest is the library's. */
    static final StructLayout CQ = MemoryLayout.structLayout(
            ADDRESS.withName("context"),
            ADDRESS.withName("channel"),
            ADDRESS.withName("cq_context"),
            JAVA_INT.withName("handle"),
            JAVA_INT.withName("cqe"),
            MemoryLayout.paddingLayout(96)).withName("ibv_cq");

    static final long CQ_CONTEXT = CQ.byteOffset(groupElement("context"));
    static final long CQ_CQE = CQ.byteOffset(groupElement("cqe"));

    /** {@code struct ibv_wc}: what {@code poll_cq} writes, one per completion. */
    static final StructLayout WC = MemoryLayout.structLayout(
            JAVA_LONG.withName("wr_id"),
            JAVA_INT.withName("status"),
            JAVA_INT.withName("opcode"),
            JAVA_INT.withName("vendor_err"),
            JAVA_INT.withName("byte_len"),
            JAVA_INT.withName("imm_data"), // or invalidated_rkey with IBV_WC_WITH_INV
            JAVA_INT.withName("qp_num"),
            JAVA_INT.withName("src_qp"),
            JAVA_INT.withName("wc_flags"),
            JAVA_SHORT.withName("pkey_index"),
            JAVA_SHORT.withName("slid"),
            JAVA_BYTE.withName("sl"),
            JAVA_BYTE.withName("dlid_path_bits"),
            MemoryLayout.paddingLayout(2)).withName("ibv_wc");

    static final long WC_WR_ID = WC.byteOffset(groupElement("wr_id"));
    static final long WC_STATUS = WC.byteOffset(groupElement("status"));
    static final long WC_OPCODE = WC.byteOffset(groupElement("opcode"));
    static final long WC_VENDOR_ERR = WC.byteOffset(groupElement("vendor_err"));
    static final long WC_BYTE_LEN = WC.byteOffset(groupElement("byte_len"));
    static final long WC_IMM_DATA = WC.byteOffset(groupElement("imm_data"));
    static final long WC_QP_NUM = WC.byteOffset(groupElement("qp_num"));
    static final long WC_FLAGS = WC.byteOffset(groupElement("wc_flags"));
    /** {@code IBV_WC_WITH_INV}: {@code imm_data} holds the invalidated rkey. */
    static final int WC_WITH_INV = 1 << 3;

    /** {@code struct ibv_qp}: the IBVERBS_1.1 head the provider reads. */
    static final StructLayout QP = MemoryLayout.structLayout(
            ADDRESS.withName("context"),
            ADDRESS.withName("qp_context"),
            ADDRESS.withName("pd"),
            ADDRESS.withName("send_cq"),
            ADDRESS.withName("recv_cq"),
            ADDRESS.withName("srq"),
            JAVA_INT.withName("handle"),
            JAVA_INT.withName("qp_num"),
            JAVA_INT.withName("state"),
            JAVA_INT.withName("qp_type"),
            MemoryLayout.paddingLayout(96)).withName("ibv_qp");

    static final long QP_CONTEXT = QP.byteOffset(groupElement("context"));
    static final long QP_PD = QP.byteOffset(groupElement("pd"));
    static final long QP_SEND_CQ = QP.byteOffset(groupElement("send_cq"));
    static final long QP_RECV_CQ = QP.byteOffset(groupElement("recv_cq"));
    static final long QP_NUM = QP.byteOffset(groupElement("qp_num"));
    static final long QP_STATE = QP.byteOffset(groupElement("state"));

    /** {@code struct ibv_qp_attr}: only {@code qp_state} is read (what {@code ibv_query_qp} answers). */
    static final StructLayout QP_ATTR = MemoryLayout.structLayout(
            JAVA_INT.withName("qp_state"),
            MemoryLayout.paddingLayout(140)).withName("ibv_qp_attr");

    static final long QP_ATTR_QP_STATE = QP_ATTR.byteOffset(groupElement("qp_state"));
    /** {@code IBV_QP_STATE}: the attribute mask bit of {@code qp_state}. */
    static final int QP_ATTR_MASK_STATE = 1;

    /** {@code struct ibv_qp_cap}. */
    static final StructLayout QP_CAP = MemoryLayout.structLayout(
            JAVA_INT.withName("max_send_wr"),
            JAVA_INT.withName("max_recv_wr"),
            JAVA_INT.withName("max_send_sge"),
            JAVA_INT.withName("max_recv_sge"),
            JAVA_INT.withName("max_inline_data")).withName("ibv_qp_cap");

    /** {@code struct ibv_qp_init_attr}. */
    static final StructLayout QP_INIT_ATTR = MemoryLayout.structLayout(
            ADDRESS.withName("qp_context"),
            ADDRESS.withName("send_cq"),
            ADDRESS.withName("recv_cq"),
            ADDRESS.withName("srq"),
            QP_CAP.withName("cap"),
            JAVA_INT.withName("qp_type"),
            JAVA_INT.withName("sq_sig_all"),
            MemoryLayout.paddingLayout(4)).withName("ibv_qp_init_attr");

    static final long INIT_SEND_CQ = QP_INIT_ATTR.byteOffset(groupElement("send_cq"));
    static final long INIT_RECV_CQ = QP_INIT_ATTR.byteOffset(groupElement("recv_cq"));
    static final long INIT_MAX_SEND_WR = QP_INIT_ATTR.byteOffset(groupElement("cap"), groupElement("max_send_wr"));
    static final long INIT_MAX_RECV_WR = QP_INIT_ATTR.byteOffset(groupElement("cap"), groupElement("max_recv_wr"));
    static final long INIT_MAX_SEND_SGE = QP_INIT_ATTR.byteOffset(groupElement("cap"), groupElement("max_send_sge"));
    static final long INIT_MAX_RECV_SGE = QP_INIT_ATTR.byteOffset(groupElement("cap"), groupElement("max_recv_sge"));
    static final long INIT_MAX_INLINE = QP_INIT_ATTR.byteOffset(groupElement("cap"), groupElement("max_inline_data"));
    static final long INIT_QP_TYPE = QP_INIT_ATTR.byteOffset(groupElement("qp_type"));
    /** {@code IBV_QPT_RC}. */
    static final int QPT_RC = 2;

    /** {@code struct ibv_sge}. */
    static final StructLayout SGE = MemoryLayout.structLayout(
            JAVA_LONG.withName("addr"),
            JAVA_INT.withName("length"),
            JAVA_INT.withName("lkey")).withName("ibv_sge");

    static final long SGE_ADDR = SGE.byteOffset(groupElement("addr"));
    static final long SGE_LENGTH = SGE.byteOffset(groupElement("length"));
    static final long SGE_LKEY = SGE.byteOffset(groupElement("lkey"));

    /** {@code struct ibv_send_wr}: the RDMA member of its {@code wr} union, the rest padding. */
    static final StructLayout SEND_WR = MemoryLayout.structLayout(
            JAVA_LONG.withName("wr_id"),
            ADDRESS.withName("next"),
            ADDRESS.withName("sg_list"),
            JAVA_INT.withName("num_sge"),
            JAVA_INT.withName("opcode"),
            JAVA_INT.withName("send_flags"),
            JAVA_INT.withName("imm_data"), // or invalidate_rkey
            JAVA_LONG.withName("remote_addr"), // wr.rdma
            JAVA_INT.withName("rkey"),
            MemoryLayout.paddingLayout(76)).withName("ibv_send_wr");

    static final long SWR_WR_ID = SEND_WR.byteOffset(groupElement("wr_id"));
    static final long SWR_NEXT = SEND_WR.byteOffset(groupElement("next"));
    static final long SWR_SG_LIST = SEND_WR.byteOffset(groupElement("sg_list"));
    static final long SWR_NUM_SGE = SEND_WR.byteOffset(groupElement("num_sge"));
    static final long SWR_OPCODE = SEND_WR.byteOffset(groupElement("opcode"));
    static final long SWR_SEND_FLAGS = SEND_WR.byteOffset(groupElement("send_flags"));
    static final long SWR_IMM_DATA = SEND_WR.byteOffset(groupElement("imm_data"));
    static final long SWR_REMOTE_ADDR = SEND_WR.byteOffset(groupElement("remote_addr"));
    static final long SWR_RKEY = SEND_WR.byteOffset(groupElement("rkey"));
    static final int SEND_FENCE = 1;
    static final int SEND_SIGNALED = 1 << 1;
    static final int SEND_SOLICITED = 1 << 2;
    static final int SEND_INLINE = 1 << 3;

    /** {@code struct ibv_recv_wr}. */
    static final StructLayout RECV_WR = MemoryLayout.structLayout(
            JAVA_LONG.withName("wr_id"),
            ADDRESS.withName("next"),
            ADDRESS.withName("sg_list"),
            JAVA_INT.withName("num_sge"),
            MemoryLayout.paddingLayout(4)).withName("ibv_recv_wr");

    static final long RWR_WR_ID = RECV_WR.byteOffset(groupElement("wr_id"));
    static final long RWR_NEXT = RECV_WR.byteOffset(groupElement("next"));
    static final long RWR_SG_LIST = RECV_WR.byteOffset(groupElement("sg_list"));
    static final long RWR_NUM_SGE = RECV_WR.byteOffset(groupElement("num_sge"));

    /** {@code struct ibv_srq_attr}. */
    static final StructLayout SRQ_ATTR = MemoryLayout.structLayout(
            JAVA_INT.withName("max_wr"),
            JAVA_INT.withName("max_sge"),
            JAVA_INT.withName("srq_limit")).withName("ibv_srq_attr");

    /** {@code struct ibv_srq_init_attr}: {@code srq_context}, then the attributes asked for (granted ones written back). */
    static final StructLayout SRQ_INIT_ATTR = MemoryLayout.structLayout(
            ADDRESS.withName("srq_context"),
            SRQ_ATTR.withName("attr"),
            MemoryLayout.paddingLayout(4)).withName("ibv_srq_init_attr");

    static final long SRQ_INIT_MAX_WR = SRQ_INIT_ATTR.byteOffset(groupElement("attr"), groupElement("max_wr"));
    static final long SRQ_INIT_MAX_SGE = SRQ_INIT_ATTR.byteOffset(groupElement("attr"), groupElement("max_sge"));
    static final long SRQ_ATTR_LIMIT = SRQ_ATTR.byteOffset(groupElement("srq_limit"));
    /** {@code IBV_SRQ_LIMIT}: the {@code ibv_modify_srq} mask bit that arms the limit. */
    static final int SRQ_LIMIT_MASK = 1 << 1;

    /** {@code struct ibv_srq}: its leading pointers (the mutex and condition variable follow). */
    static final StructLayout SRQ = MemoryLayout.structLayout(
            ADDRESS.withName("context"),
            ADDRESS.withName("srq_context"),
            ADDRESS.withName("pd")).withName("ibv_srq");

    static final long SRQ_CONTEXT = SRQ.byteOffset(groupElement("context"));
    static final long SRQ_PD = SRQ.byteOffset(groupElement("pd"));
    static final long INIT_SRQ = QP_INIT_ATTR.byteOffset(groupElement("srq"));

    // ---- librdmacm (<rdma/rdma_cma.h>, rdma-core 44) -------------------------------------------

    /** {@code struct rdma_cm_id}: {@code verbs} and {@code qp} are all the provider reads. */
    static final StructLayout CM_ID = MemoryLayout.structLayout(
            ADDRESS.withName("verbs"),
            ADDRESS.withName("channel"),
            ADDRESS.withName("context"),
            ADDRESS.withName("qp"),
            MemoryLayout.paddingLayout(384)).withName("rdma_cm_id");

    static final long CM_ID_VERBS = CM_ID.byteOffset(groupElement("verbs"));
    static final long CM_ID_CHANNEL = CM_ID.byteOffset(groupElement("channel"));
    static final long CM_ID_QP = CM_ID.byteOffset(groupElement("qp"));

    /** {@code struct rdma_conn_param}. */
    static final StructLayout CONN_PARAM = MemoryLayout.structLayout(
            ADDRESS.withName("private_data"),
            JAVA_BYTE.withName("private_data_len"),
            JAVA_BYTE.withName("responder_resources"),
            JAVA_BYTE.withName("initiator_depth"),
            JAVA_BYTE.withName("flow_control"),
            JAVA_BYTE.withName("retry_count"),
            JAVA_BYTE.withName("rnr_retry_count"),
            JAVA_BYTE.withName("srq"),
            MemoryLayout.paddingLayout(1),
            JAVA_INT.withName("qp_num"),
            MemoryLayout.paddingLayout(4)).withName("rdma_conn_param");

    static final long CP_PRIVATE_DATA = CONN_PARAM.byteOffset(groupElement("private_data"));
    static final long CP_PRIVATE_DATA_LEN = CONN_PARAM.byteOffset(groupElement("private_data_len"));
    static final long CP_RESPONDER_RESOURCES = CONN_PARAM.byteOffset(groupElement("responder_resources"));
    static final long CP_INITIATOR_DEPTH = CONN_PARAM.byteOffset(groupElement("initiator_depth"));
    static final long CP_RETRY_COUNT = CONN_PARAM.byteOffset(groupElement("retry_count"));
    static final long CP_RNR_RETRY_COUNT = CONN_PARAM.byteOffset(groupElement("rnr_retry_count"));

    /** {@code struct rdma_cm_event}: {@code param.conn} is a {@code struct rdma_conn_param}; the union is 56 bytes. */
    static final StructLayout CM_EVENT = MemoryLayout.structLayout(
            ADDRESS.withName("id"),
            ADDRESS.withName("listen_id"),
            JAVA_INT.withName("event"),
            JAVA_INT.withName("status"),
            CONN_PARAM.withName("conn"),
            MemoryLayout.paddingLayout(32)).withName("rdma_cm_event");

    static final long EV_ID = CM_EVENT.byteOffset(groupElement("id"));
    static final long EV_LISTEN_ID = CM_EVENT.byteOffset(groupElement("listen_id"));
    static final long EV_EVENT = CM_EVENT.byteOffset(groupElement("event"));
    static final long EV_STATUS = CM_EVENT.byteOffset(groupElement("status"));
    static final long EV_CONN = CM_EVENT.byteOffset(groupElement("conn"));
}
