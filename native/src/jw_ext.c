/*
 * jwarp libdisni: org.jwarp.disni.natives.JwarpNative, what DiSNI 2.1 cannot do.
 *
 *  - connect/accept with a full rdma_conn_param (responder resources = IRD, initiator depth =
 *    ORD, private data, retry counts) and reject with private data;
 *  - the data of the last CM event of an id (status, IRD/ORD, private data), recorded by
 *    _getCmEvent before it acknowledged the event;
 *  - device and port limits (max_qp_rd_atom, max_qp_init_rd_atom, transport, link layer);
 *  - allocation-free post/poll entry points that return the verbs error code, and a spin poll
 *    that waits for a completion in one crossing;
 *  - regions of any length (ibv_reg_mr takes a size_t; DiSNI's regMr an int): anonymous memory
 *    mapped here, registered by address and 64-bit length, and Java windows onto it.
 *
 * Layouts of the output buffers are fixed; the Java flyweights name the same offsets.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "jw_common.h"

#define JN(name) Java_org_jwarp_disni_natives_JwarpNative_##name

/* cmEventInfo output layout */
#define EV_SEQ 0
#define EV_EVENT 4
#define EV_STATUS 8
#define EV_RESPONDER_RESOURCES 12
#define EV_INITIATOR_DEPTH 16
#define EV_PRIVATE_DATA_LEN 20
#define EV_QP_NUM 24
#define EV_FLAGS 28
#define EV_PRIVATE_DATA 32
#define EV_SIZE (EV_PRIVATE_DATA + JW_MAX_PRIVATE_DATA)

/* queryDevice output layout */
#define DEV_MAX_QP_RD_ATOM 0
#define DEV_MAX_QP_INIT_RD_ATOM 4
#define DEV_MAX_RES_RD_ATOM 8
#define DEV_MAX_QP_WR 12
#define DEV_MAX_SGE 16
#define DEV_MAX_CQE 20
#define DEV_MAX_QP 24
#define DEV_TRANSPORT 28
#define DEV_NODE_TYPE 32
#define DEV_VENDOR_ID 36
#define DEV_VENDOR_PART 40
#define DEV_PORT_CNT 44
#define DEV_MAX_MR_SIZE 48
#define DEV_NODE_GUID 56
#define DEV_LINK_LAYER 64
#define DEV_ACTIVE_MTU 68
#define DEV_PORT_STATE 72
#define DEV_MAX_INLINE 76
#define DEV_MAX_SGE_RD 80
#define DEV_SIZE 88

/* qpGranted output layout */
#define CAP_QP_NUM 0
#define CAP_MAX_SEND_WR 4
#define CAP_MAX_RECV_WR 8
#define CAP_MAX_SEND_SGE 12
#define CAP_MAX_RECV_SGE 16
#define CAP_MAX_INLINE 20
#define CAP_SIZE 24

/* probe keys */
enum {
	PROBE_SEND_WR_SIZE = 1,
	PROBE_RECV_WR_SIZE,
	PROBE_SGE_SIZE,
	PROBE_WC_SIZE,
	PROBE_SEND_WR_REMOTE_ADDR,
	PROBE_SEND_WR_RKEY,
	PROBE_SEND_WR_OPCODE,
	PROBE_SEND_WR_FLAGS,
	PROBE_SEND_WR_IMM,
	PROBE_SEND_WR_SG_LIST,
	PROBE_SEND_WR_NUM_SGE,
	PROBE_SEND_WR_NEXT,
	PROBE_WC_STATUS,
	PROBE_WC_OPCODE,
	PROBE_WC_VENDOR_ERR,
	PROBE_WC_BYTE_LEN,
	PROBE_WC_IMM,
	PROBE_WC_QP_NUM,
	PROBE_WC_FLAGS,
	PROBE_CONN_PARAM_SIZE,
	PROBE_EVENT_INFO_SIZE,
	PROBE_DEVICE_INFO_SIZE,
	PROBE_MAX_PRIVATE_DATA,
	PROBE_ERRNO_EADDRINUSE,
	PROBE_ERRNO_EINVAL,
};

static void put32(void *base, size_t off, int32_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

static void put64(void *base, size_t off, int64_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

JNIEXPORT jint JNICALL JN(version)(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	return JW_EXT_VERSION;
}

JNIEXPORT jint JNICALL JN(probe)(JNIEnv *env, jclass cls, jint key)
{
	(void)env;
	(void)cls;
	switch (key) {
	case PROBE_SEND_WR_SIZE: return (jint)sizeof(struct ibv_send_wr);
	case PROBE_RECV_WR_SIZE: return (jint)sizeof(struct ibv_recv_wr);
	case PROBE_SGE_SIZE: return (jint)sizeof(struct ibv_sge);
	case PROBE_WC_SIZE: return (jint)sizeof(struct ibv_wc);
	case PROBE_SEND_WR_REMOTE_ADDR: return (jint)offsetof(struct ibv_send_wr, wr.rdma.remote_addr);
	case PROBE_SEND_WR_RKEY: return (jint)offsetof(struct ibv_send_wr, wr.rdma.rkey);
	case PROBE_SEND_WR_OPCODE: return (jint)offsetof(struct ibv_send_wr, opcode);
	case PROBE_SEND_WR_FLAGS: return (jint)offsetof(struct ibv_send_wr, send_flags);
	case PROBE_SEND_WR_IMM: return (jint)offsetof(struct ibv_send_wr, imm_data);
	case PROBE_SEND_WR_SG_LIST: return (jint)offsetof(struct ibv_send_wr, sg_list);
	case PROBE_SEND_WR_NUM_SGE: return (jint)offsetof(struct ibv_send_wr, num_sge);
	case PROBE_SEND_WR_NEXT: return (jint)offsetof(struct ibv_send_wr, next);
	case PROBE_WC_STATUS: return (jint)offsetof(struct ibv_wc, status);
	case PROBE_WC_OPCODE: return (jint)offsetof(struct ibv_wc, opcode);
	case PROBE_WC_VENDOR_ERR: return (jint)offsetof(struct ibv_wc, vendor_err);
	case PROBE_WC_BYTE_LEN: return (jint)offsetof(struct ibv_wc, byte_len);
	case PROBE_WC_IMM: return (jint)offsetof(struct ibv_wc, imm_data);
	case PROBE_WC_QP_NUM: return (jint)offsetof(struct ibv_wc, qp_num);
	case PROBE_WC_FLAGS: return (jint)offsetof(struct ibv_wc, wc_flags);
	case PROBE_CONN_PARAM_SIZE: return (jint)sizeof(struct rdma_conn_param);
	case PROBE_EVENT_INFO_SIZE: return EV_SIZE;
	case PROBE_DEVICE_INFO_SIZE: return DEV_SIZE;
	case PROBE_MAX_PRIVATE_DATA: return JW_MAX_PRIVATE_DATA;
	case PROBE_ERRNO_EADDRINUSE: return EADDRINUSE;
	case PROBE_ERRNO_EINVAL: return EINVAL;
	default: return -1;
	}
}

/*
 * Builds the rdma_conn_param. Returns 0, or -1 with an exception pending. The private data
 * is copied into buf (caller's stack) so the Java array is not pinned across the CM call.
 */
static int build_param(JNIEnv *env, struct rdma_conn_param *p, uint8_t *buf, jint rr, jint id,
		       jint retry, jint rnr, jbyteArray pdata)
{
	jsize len = 0;

	memset(p, 0, sizeof(*p));
	if (rr < 0 || rr > 255 || id < 0 || id > 255) {
		jw_throw_msg(env, "java/lang/IllegalArgumentException",
			     "responder_resources/initiator_depth out of range 0..255 (rdma_conn_param u8)");
		return -1;
	}
	if (retry < 0 || retry > 7 || rnr < 0 || rnr > 7) {
		jw_throw_msg(env, "java/lang/IllegalArgumentException",
			     "retry_count/rnr_retry_count out of range 0..7");
		return -1;
	}
	if (pdata != NULL) {
		len = (*env)->GetArrayLength(env, pdata);
		if (len > JW_MAX_PRIVATE_DATA) {
			jw_throw_msg(env, "java/lang/IllegalArgumentException",
				     "private_data longer than 255 bytes (rdma_conn_param.private_data_len is u8)");
			return -1;
		}
		(*env)->GetByteArrayRegion(env, pdata, 0, len, (jbyte *)buf);
		if ((*env)->ExceptionCheck(env))
			return -1;
	}
	p->responder_resources = (uint8_t)rr;
	p->initiator_depth = (uint8_t)id;
	p->retry_count = (uint8_t)retry;
	p->rnr_retry_count = (uint8_t)rnr;
	if (len > 0) {
		p->private_data = buf;
		p->private_data_len = (uint8_t)len;
	}
	return 0;
}

JNIEXPORT void JNICALL JN(connect)(JNIEnv *env, jclass cls, jlong cmId, jint responderResources,
				   jint initiatorDepth, jint retryCount, jint rnrRetryCount,
				   jbyteArray privateData)
{
	struct rdma_conn_param p;
	uint8_t buf[JW_MAX_PRIVATE_DATA];

	(void)cls;
	if (cmId == 0) {
		jw_throw_io(env, "rdma_connect: null id", EINVAL);
		return;
	}
	if (build_param(env, &p, buf, responderResources, initiatorDepth, retryCount, rnrRetryCount,
			privateData) != 0)
		return;
	if (rdma_connect(JW_PTR(struct rdma_cm_id, cmId), &p) != 0)
		jw_throw_io(env, "rdma_connect", errno);
}

JNIEXPORT void JNICALL JN(accept)(JNIEnv *env, jclass cls, jlong cmId, jint responderResources,
				  jint initiatorDepth, jint retryCount, jint rnrRetryCount,
				  jbyteArray privateData)
{
	struct rdma_conn_param p;
	uint8_t buf[JW_MAX_PRIVATE_DATA];

	(void)cls;
	if (cmId == 0) {
		jw_throw_io(env, "rdma_accept: null id", EINVAL);
		return;
	}
	if (build_param(env, &p, buf, responderResources, initiatorDepth, retryCount, rnrRetryCount,
			privateData) != 0)
		return;
	if (rdma_accept(JW_PTR(struct rdma_cm_id, cmId), &p) != 0)
		jw_throw_io(env, "rdma_accept", errno);
}

JNIEXPORT void JNICALL JN(reject)(JNIEnv *env, jclass cls, jlong cmId, jbyteArray privateData)
{
	uint8_t buf[JW_MAX_PRIVATE_DATA];
	jsize len = 0;

	(void)cls;
	if (cmId == 0) {
		jw_throw_io(env, "rdma_reject: null id", EINVAL);
		return;
	}
	if (privateData != NULL) {
		len = (*env)->GetArrayLength(env, privateData);
		if (len > JW_MAX_PRIVATE_DATA) {
			jw_throw_msg(env, "java/lang/IllegalArgumentException",
				     "reject private_data longer than 255 bytes (u8 length)");
			return;
		}
		(*env)->GetByteArrayRegion(env, privateData, 0, len, (jbyte *)buf);
		if ((*env)->ExceptionCheck(env))
			return;
	}
	if (rdma_reject(JW_PTR(struct rdma_cm_id, cmId), len > 0 ? buf : NULL, (uint8_t)len) != 0)
		jw_throw_io(env, "rdma_reject", errno);
}

JNIEXPORT jint JNICALL JN(cmEventInfo)(JNIEnv *env, jclass cls, jlong cmId, jobject out)
{
	struct rdma_cm_id *id = JW_PTR(struct rdma_cm_id, cmId);
	struct jw_cm_rec *rec;
	void *base;
	jint written = -1;

	(void)cls;
	if (id == NULL || out == NULL)
		return -1;
	base = (*env)->GetDirectBufferAddress(env, out);
	if (base == NULL || (*env)->GetDirectBufferCapacity(env, out) < EV_SIZE)
		return -1;
	pthread_mutex_lock(&jw_cm_lock);
	rec = id->context;
	if (rec != NULL && rec->owner == id && rec->event >= 0) {
		put32(base, EV_SEQ, (int32_t)rec->seq);
		put32(base, EV_EVENT, rec->event);
		put32(base, EV_STATUS, rec->status);
		put32(base, EV_RESPONDER_RESOURCES, rec->responder_resources);
		put32(base, EV_INITIATOR_DEPTH, rec->initiator_depth);
		put32(base, EV_PRIVATE_DATA_LEN, rec->private_data_len);
		put32(base, EV_QP_NUM, (int32_t)rec->qp_num);
		put32(base, EV_FLAGS, (int32_t)((uint32_t)rec->flow_control |
						 ((uint32_t)rec->retry_count << 8) |
						 ((uint32_t)rec->rnr_retry_count << 16) |
						 ((uint32_t)rec->srq << 24)));
		memcpy((char *)base + EV_PRIVATE_DATA, rec->private_data, rec->private_data_len);
		written = EV_PRIVATE_DATA + rec->private_data_len;
	}
	pthread_mutex_unlock(&jw_cm_lock);
	return written;
}

static void *device_out(JNIEnv *env, jobject out)
{
	void *base = out != NULL ? (*env)->GetDirectBufferAddress(env, out) : NULL;

	if (base == NULL || (*env)->GetDirectBufferCapacity(env, out) < DEV_SIZE) {
		jw_throw_msg(env, "java/lang/IllegalArgumentException",
			     "device info needs a direct buffer of at least DEVICE_INFO_SIZE bytes");
		return NULL;
	}
	return base;
}

/*
 * ibv_device_attr has no inline limit: create a throw-away RC QP asking for decreasing inline
 * sizes and report what the first successful creation granted (-1 if none could be created).
 * Everything created here is destroyed again.
 */
static int32_t probe_inline(struct ibv_context *c)
{
	static const uint32_t tries[] = { 1024, 512, 256, 128, 96, 80, 64, 32, 0 };
	struct ibv_qp_init_attr attr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int32_t granted = -1;
	size_t i;

	pd = ibv_alloc_pd(c);
	if (pd == NULL)
		return -1;
	cq = ibv_create_cq(c, 2, NULL, NULL, 0);
	if (cq == NULL) {
		ibv_dealloc_pd(pd);
		return -1;
	}
	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		memset(&attr, 0, sizeof(attr));
		attr.send_cq = cq;
		attr.recv_cq = cq;
		attr.qp_type = IBV_QPT_RC;
		attr.cap.max_send_wr = 1;
		attr.cap.max_recv_wr = 1;
		attr.cap.max_send_sge = 1;
		attr.cap.max_recv_sge = 1;
		attr.cap.max_inline_data = tries[i];
		qp = ibv_create_qp(pd, &attr);
		if (qp != NULL) {
			granted = (int32_t)attr.cap.max_inline_data;
			if (ibv_destroy_qp(qp) != 0)
				granted = -1;
			break;
		}
	}
	if (ibv_destroy_cq(cq) != 0)
		granted = -1;
	if (ibv_dealloc_pd(pd) != 0)
		granted = -1;
	return granted;
}

static jint fill_device(JNIEnv *env, struct ibv_context *c, int port, void *base)
{
	struct ibv_device_attr a;
	struct ibv_port_attr pa;
	int rc;

	rc = ibv_query_device(c, &a);
	if (rc != 0) {
		jw_throw_io(env, "ibv_query_device", rc);
		return -1;
	}
	memset(base, 0, DEV_SIZE);
	put32(base, DEV_MAX_QP_RD_ATOM, a.max_qp_rd_atom);
	put32(base, DEV_MAX_QP_INIT_RD_ATOM, a.max_qp_init_rd_atom);
	put32(base, DEV_MAX_RES_RD_ATOM, a.max_res_rd_atom);
	put32(base, DEV_MAX_QP_WR, a.max_qp_wr);
	put32(base, DEV_MAX_SGE, a.max_sge);
	put32(base, DEV_MAX_CQE, a.max_cqe);
	put32(base, DEV_MAX_QP, a.max_qp);
	put32(base, DEV_TRANSPORT, (int32_t)c->device->transport_type);
	put32(base, DEV_NODE_TYPE, (int32_t)c->device->node_type);
	put32(base, DEV_VENDOR_ID, (int32_t)a.vendor_id);
	put32(base, DEV_VENDOR_PART, (int32_t)a.vendor_part_id);
	put32(base, DEV_PORT_CNT, a.phys_port_cnt);
	put64(base, DEV_MAX_MR_SIZE, (int64_t)a.max_mr_size);
	put64(base, DEV_NODE_GUID, (int64_t)a.node_guid);
	put32(base, DEV_MAX_SGE_RD, a.max_sge_rd);
	put32(base, DEV_MAX_INLINE, probe_inline(c));
	put32(base, DEV_LINK_LAYER, -1);
	if (port > 0) {
		rc = ibv_query_port(c, (uint8_t)port, &pa);
		if (rc != 0) {
			jw_throw_io(env, "ibv_query_port", rc);
			return -1;
		}
		put32(base, DEV_LINK_LAYER, pa.link_layer);
		put32(base, DEV_ACTIVE_MTU, (int32_t)pa.active_mtu);
		put32(base, DEV_PORT_STATE, (int32_t)pa.state);
	}
	return DEV_SIZE;
}

JNIEXPORT jint JNICALL JN(queryDevice)(JNIEnv *env, jclass cls, jlong ctx, jint port, jobject out)
{
	struct ibv_context *c = JW_PTR(struct ibv_context, ctx);
	void *base;

	(void)cls;
	if (c == NULL) {
		jw_throw_io(env, "ibv_query_device: null context", EINVAL);
		return -1;
	}
	base = device_out(env, out);
	if (base == NULL)
		return -1;
	return fill_device(env, c, port, base);
}

/* Opens the named device, queries it (and port 1), closes it again. */
JNIEXPORT jint JNICALL JN(queryDeviceByName)(JNIEnv *env, jclass cls, jstring name, jobject out)
{
	struct ibv_device **list;
	struct ibv_context *c = NULL;
	const char *want;
	void *base;
	jint rc = -1;
	int n = 0, i, err = ENODEV;

	(void)cls;
	base = device_out(env, out);
	if (base == NULL)
		return -1;
	if (name == NULL) {
		jw_throw_io(env, "queryDeviceByName: null name", EINVAL);
		return -1;
	}
	want = (*env)->GetStringUTFChars(env, name, NULL);
	if (want == NULL)
		return -1;
	list = ibv_get_device_list(&n);
	if (list == NULL)
		err = errno;
	for (i = 0; list != NULL && i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), want) == 0) {
			c = ibv_open_device(list[i]);
			err = c == NULL ? errno : 0;
			break;
		}
	}
	(*env)->ReleaseStringUTFChars(env, name, want);
	if (c != NULL) {
		rc = fill_device(env, c, 1, base);
		if (ibv_close_device(c) != 0 && rc >= 0) {
			jw_throw_io(env, "ibv_close_device", errno);
			rc = -1;
		}
	} else {
		jw_throw_io(env, "ibv_open_device", err);
	}
	if (list != NULL)
		ibv_free_device_list(list);
	return rc;
}

JNIEXPORT jstring JNICALL JN(deviceName)(JNIEnv *env, jclass cls, jlong ctx)
{
	struct ibv_context *c = JW_PTR(struct ibv_context, ctx);
	const char *name;

	(void)cls;
	if (c == NULL || c->device == NULL)
		return NULL;
	name = ibv_get_device_name(c->device);
	return name != NULL ? (*env)->NewStringUTF(env, name) : NULL;
}

JNIEXPORT jint JNICALL JN(cmIdPortNum)(JNIEnv *env, jclass cls, jlong cmId)
{
	(void)env;
	(void)cls;
	if (cmId == 0)
		return -1;
	return JW_PTR(struct rdma_cm_id, cmId)->port_num;
}

JNIEXPORT jobjectArray JNICALL JN(deviceNames)(JNIEnv *env, jclass cls)
{
	struct ibv_device **list;
	jobjectArray arr = NULL;
	jclass scls;
	jstring s;
	int n = 0, i;

	(void)cls;
	list = ibv_get_device_list(&n);
	if (list == NULL && errno == ENOSYS) {
		/* the kernel has no RDMA subsystem (no uverbs): no devices */
		scls = (*env)->FindClass(env, "java/lang/String");
		return scls != NULL ? (*env)->NewObjectArray(env, 0, scls, NULL) : NULL;
	}
	if (list == NULL) {
		jw_throw_io(env, "ibv_get_device_list", errno);
		return NULL;
	}
	scls = (*env)->FindClass(env, "java/lang/String");
	if (scls != NULL)
		arr = (*env)->NewObjectArray(env, n, scls, NULL);
	for (i = 0; arr != NULL && i < n; i++) {
		s = (*env)->NewStringUTF(env, ibv_get_device_name(list[i]));
		if (s == NULL) {
			arr = NULL;
			break;
		}
		(*env)->SetObjectArrayElement(env, arr, i, s);
		(*env)->DeleteLocalRef(env, s);
	}
	ibv_free_device_list(list);
	return arr;
}

JNIEXPORT void JNICALL JN(qpRequest)(JNIEnv *env, jclass cls, jint maxSendSge, jint maxRecvSge)
{
	(void)env;
	(void)cls;
	jw_qp_req.max_send_sge = maxSendSge > 0 ? (uint32_t)maxSendSge : 1;
	jw_qp_req.max_recv_sge = maxRecvSge > 0 ? (uint32_t)maxRecvSge : 1;
	jw_qp_req.srq = NULL; /* qpRequestSrq, if wanted, comes after this call */
	jw_qp_req.set = 1;
}

JNIEXPORT void JNICALL JN(qpRequestClear)(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	memset(&jw_qp_req, 0, sizeof(jw_qp_req));
}

/* ibv_modify_qp to IBV_QPS_ERR: outstanding WRs complete as flushed. 0 or an errno value. */
JNIEXPORT jint JNICALL JN(qpToError)(JNIEnv *env, jclass cls, jlong qp)
{
	struct ibv_qp_attr attr;
	int rc;

	(void)env;
	(void)cls;
	if (qp == 0)
		return EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_ERR;
	rc = ibv_modify_qp(JW_PTR(struct ibv_qp, qp), &attr, IBV_QP_STATE);
	return rc < 0 ? -rc : rc;
}

JNIEXPORT jint JNICALL JN(qpGranted)(JNIEnv *env, jclass cls, jobject out)
{
	void *base = out != NULL ? (*env)->GetDirectBufferAddress(env, out) : NULL;

	(void)cls;
	if (base == NULL || (*env)->GetDirectBufferCapacity(env, out) < CAP_SIZE)
		return -1;
	put32(base, CAP_QP_NUM, (int32_t)jw_qp_granted_num);
	put32(base, CAP_MAX_SEND_WR, (int32_t)jw_qp_granted.max_send_wr);
	put32(base, CAP_MAX_RECV_WR, (int32_t)jw_qp_granted.max_recv_wr);
	put32(base, CAP_MAX_SEND_SGE, (int32_t)jw_qp_granted.max_send_sge);
	put32(base, CAP_MAX_RECV_SGE, (int32_t)jw_qp_granted.max_recv_sge);
	put32(base, CAP_MAX_INLINE, (int32_t)jw_qp_granted.max_inline_data);
	return CAP_SIZE;
}

/* bad_wr is not in the posted chain (NULL or foreign): how many were posted is unknown. */
#define JW_CHAIN_UNKNOWN ((jlong)-1)

/* Position of bad in the chain starting at first, JW_CHAIN_UNKNOWN when it is not there. */
static jlong chain_index(const void *first, const void *bad, size_t next_off)
{
	const char *w = first;
	jlong i = 0;

	if (bad == NULL)
		return JW_CHAIN_UNKNOWN;
	while (w != NULL && w != bad) {
		memcpy(&w, w + next_off, sizeof(w));
		i++;
	}
	return w == NULL ? JW_CHAIN_UNKNOWN : i;
}

/* 0, or (index << 32) | errno; index -1 (all ones in the high word) means position unknown. */
static jlong list_result(int rc, jlong index)
{
	if (rc < 0)
		rc = -rc; /* some providers return -errno */
	if (rc == 0)
		return 0;
	return (jlong)(((uint64_t)(uint32_t)index << 32) | (uint32_t)rc);
}

/*
 * Hot path, one ibv_post_send for a whole linked chain: 0, or (index of bad_wr << 32) | errno.
 * The WRs before bad_wr were posted, bad_wr and the ones after it were not. When the provider
 * left bad_wr outside the chain the index is -1: the caller cannot tell what was posted.
 */
JNIEXPORT jlong JNICALL JN(postSendList)(JNIEnv *env, jclass cls, jlong qp, jlong wr)
{
	struct ibv_send_wr *bad = NULL;
	int rc;

	(void)env;
	(void)cls;
	if (qp == 0 || wr == 0)
		return EINVAL;
	rc = ibv_post_send(JW_PTR(struct ibv_qp, qp), JW_PTR(struct ibv_send_wr, wr), &bad);
	return list_result(rc, rc != 0 ? chain_index(JW_PTR(void, wr), bad, offsetof(struct ibv_send_wr, next)) : 0);
}

JNIEXPORT jlong JNICALL JN(postRecvList)(JNIEnv *env, jclass cls, jlong qp, jlong wr)
{
	struct ibv_recv_wr *bad = NULL;
	int rc;

	(void)env;
	(void)cls;
	if (qp == 0 || wr == 0)
		return EINVAL;
	rc = ibv_post_recv(JW_PTR(struct ibv_qp, qp), JW_PTR(struct ibv_recv_wr, wr), &bad);
	return list_result(rc, rc != 0 ? chain_index(JW_PTR(void, wr), bad, offsetof(struct ibv_recv_wr, next)) : 0);
}

/* Hot path: no exception, the verbs return code (0 or an errno value) is the result. */
JNIEXPORT jint JNICALL JN(postSend)(JNIEnv *env, jclass cls, jlong qp, jlong wr)
{
	struct ibv_send_wr *bad = NULL;

	(void)env;
	(void)cls;
	if (qp == 0 || wr == 0)
		return EINVAL;
	return ibv_post_send(JW_PTR(struct ibv_qp, qp), JW_PTR(struct ibv_send_wr, wr), &bad);
}

JNIEXPORT jint JNICALL JN(postRecv)(JNIEnv *env, jclass cls, jlong qp, jlong wr)
{
	struct ibv_recv_wr *bad = NULL;

	(void)env;
	(void)cls;
	if (qp == 0 || wr == 0)
		return EINVAL;
	return ibv_post_recv(JW_PTR(struct ibv_qp, qp), JW_PTR(struct ibv_recv_wr, wr), &bad);
}

JNIEXPORT jint JNICALL JN(pollCq)(JNIEnv *env, jclass cls, jlong cq, jint n, jlong wcs)
{
	(void)env;
	(void)cls;
	if (cq == 0 || wcs == 0 || n < 0)
		return -EINVAL;
	return ibv_poll_cq(JW_PTR(struct ibv_cq, cq), n, JW_PTR(struct ibv_wc, wcs));
}

/* Empty polls between two clock reads of pollCqSpin's time bound (a clock read costs more than a poll). */
#define JW_SPIN_CLOCK_EVERY 64

static int64_t mono_ns(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail with a valid pointer (vDSO); a failure reads as time 0 */
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Hot path, the spin wait in one crossing: ibv_poll_cq until it returns at least one completion,
 * fails, or a bound is reached: maxPolls polls (> 0), or, when maxNanos > 0, maxNanos of
 * CLOCK_MONOTONIC time (read every JW_SPIN_CLOCK_EVERY polls, so the time bound may overshoot by
 * that many polls). No pause between polls (perftest's loops have none); allocates nothing.
 * Returns the count (0: bound reached, CQ empty), -EINVAL for bad arguments, or ibv_poll_cq's
 * negative failure value (as pollCq does).
 */
JNIEXPORT jint JNICALL JN(pollCqSpin)(JNIEnv *env, jclass cls, jlong cq, jint n, jlong wcs, jlong maxPolls,
				      jlong maxNanos)
{
	struct ibv_cq *c = JW_PTR(struct ibv_cq, cq);
	struct ibv_wc *w = JW_PTR(struct ibv_wc, wcs);
	int64_t deadline = 0;
	jlong polls = 0;
	int rc;

	(void)env;
	(void)cls;
	if (cq == 0 || wcs == 0 || n <= 0 || maxPolls <= 0 || maxNanos < 0)
		return -EINVAL;
	if (maxNanos > 0)
		deadline = mono_ns() + maxNanos;
	for (;;) {
		rc = ibv_poll_cq(c, n, w);
		if (rc != 0)
			return rc; /* the count, or ibv_poll_cq's negative failure value */
		if (++polls >= maxPolls)
			return 0;
		if (deadline != 0 && polls % JW_SPIN_CLOCK_EVERY == 0 && mono_ns() - deadline >= 0)
			return 0;
	}
}

/* Region memory: anonymous private pages, zeroed by the kernel, owned by the Java region object. */
JNIEXPORT jlong JNICALL JN(mapRegion)(JNIEnv *env, jclass cls, jlong length)
{
	void *p;

	(void)cls;
	if (length <= 0) {
		jw_throw_io(env, "mmap: length must be positive", EINVAL);
		return 0;
	}
	p = mmap(NULL, (size_t)length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		jw_throw_io(env, "mmap", errno);
		return 0;
	}
	return JW_JLONG(p);
}

/* 0 or the errno of munmap. */
JNIEXPORT jint JNICALL JN(unmapRegion)(JNIEnv *env, jclass cls, jlong addr, jlong length)
{
	(void)env;
	(void)cls;
	if (addr == 0 || length <= 0)
		return EINVAL;
	return munmap(JW_PTR(void, addr), (size_t)length) == 0 ? 0 : errno;
}

/*
 * Gives the pages of [addr, addr + length) back to the kernel at once while the mapping stays:
 * madvise(MADV_DONTNEED) on private anonymous memory drops the pages, and a later access sees
 * fresh zero pages. For a closed region whose windows are still reachable (they keep the mapping,
 * not its contents). 0 or the errno of madvise.
 */
JNIEXPORT jint JNICALL JN(discardRegion)(JNIEnv *env, jclass cls, jlong addr, jlong length)
{
	(void)env;
	(void)cls;
	if (addr == 0 || length <= 0)
		return EINVAL;
	return madvise(JW_PTR(void, addr), (size_t)length, MADV_DONTNEED) == 0 ? 0 : errno;
}

/*
 * ibv_reg_mr of [addr, addr + length) with a 64-bit length; writes lkey (offset 0) and rkey
 * (offset 4) into out (direct, >= 8 bytes, native order) and returns the struct ibv_mr pointer.
 */
JNIEXPORT jlong JNICALL JN(regMr)(JNIEnv *env, jclass cls, jlong pd, jlong addr, jlong length, jint access,
				  jobject out)
{
	void *base = out != NULL ? (*env)->GetDirectBufferAddress(env, out) : NULL;
	struct ibv_mr *mr;
	uint32_t v;

	(void)cls;
	if (base == NULL || (*env)->GetDirectBufferCapacity(env, out) < 8) {
		jw_throw_msg(env, "java/lang/IllegalArgumentException", "regMr needs a direct buffer of 8 bytes");
		return 0;
	}
	if (pd == 0 || addr == 0 || length <= 0) {
		jw_throw_io(env, "ibv_reg_mr: invalid argument", EINVAL);
		return 0;
	}
	errno = 0;
	mr = ibv_reg_mr(JW_PTR(struct ibv_pd, pd), JW_PTR(void, addr), (size_t)length, access);
	if (mr == NULL) {
		jw_throw_io(env, "ibv_reg_mr", errno != 0 ? errno : ENOMEM);
		return 0;
	}
	v = mr->lkey;
	memcpy(base, &v, sizeof(v));
	v = mr->rkey;
	memcpy((char *)base + 4, &v, sizeof(v));
	return JW_JLONG(mr);
}

/* 0 or the error of ibv_dereg_mr. */
JNIEXPORT jint JNICALL JN(deregMr)(JNIEnv *env, jclass cls, jlong mr)
{
	(void)env;
	(void)cls;
	if (mr == 0)
		return EINVAL;
	return ibv_dereg_mr(JW_PTR(struct ibv_mr, mr));
}

/* A direct ByteBuffer over [addr, addr + length) (no copy; valid while the mapping lives). */
JNIEXPORT jobject JNICALL JN(window)(JNIEnv *env, jclass cls, jlong addr, jint length)
{
	(void)cls;
	if (addr == 0 || length < 0) {
		jw_throw_msg(env, "java/lang/IllegalArgumentException", "window: null address or negative length");
		return NULL;
	}
	return (*env)->NewDirectByteBuffer(env, JW_PTR(void, addr), (jlong)length);
}
