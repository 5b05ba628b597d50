/*
 * jwarp libdisni: the libibverbs half of com.ibm.disni.verbs.impl.NativeDispatcher, the
 * structure probes the Java side compares its layouts against, and the version check.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <netinet/in.h>
#include "jw_common.h"

#define ND(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

JNIEXPORT jlong JNICALL ND(allocPd)(JNIEnv *env, jobject self, jlong ctx)
{
	struct ibv_pd *pd;

	(void)self;
	if (ctx == 0) {
		jw_throw_io(env, "ibv_alloc_pd: null context", EINVAL);
		return -1;
	}
	pd = ibv_alloc_pd(JW_PTR(struct ibv_context, ctx));
	if (pd == NULL) {
		jw_throw_io(env, "ibv_alloc_pd", errno != 0 ? errno : ENOMEM);
		return -1;
	}
	return JW_JLONG(pd);
}

JNIEXPORT jlong JNICALL ND(createCompChannel)(JNIEnv *env, jobject self, jlong ctx)
{
	struct ibv_comp_channel *ch;
	int flags, err;

	(void)self;
	if (ctx == 0) {
		jw_throw_io(env, "ibv_create_comp_channel: null context", EINVAL);
		return -1;
	}
	ch = ibv_create_comp_channel(JW_PTR(struct ibv_context, ctx));
	if (ch == NULL) {
		jw_throw_io(env, "ibv_create_comp_channel", errno != 0 ? errno : ENOMEM);
		return -1;
	}
	flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		err = errno;
		if (ibv_destroy_comp_channel(ch) != 0)
			err = errno;
		jw_throw_io(env, "fcntl(O_NONBLOCK) on completion channel", err);
		return -1;
	}
	return JW_JLONG(ch);
}

JNIEXPORT jlong JNICALL ND(createCQ)(JNIEnv *env, jobject self, jlong ctx, jlong channel,
				     jint ncqe, jint compVector)
{
	struct ibv_cq *cq;

	(void)self;
	if (ctx == 0) {
		jw_throw_io(env, "ibv_create_cq: null context", EINVAL);
		return -1;
	}
	cq = ibv_create_cq(JW_PTR(struct ibv_context, ctx), ncqe, NULL,
			   JW_PTR(struct ibv_comp_channel, channel), compVector);
	if (cq == NULL) {
		jw_throw_io(env, "ibv_create_cq", errno != 0 ? errno : ENOMEM);
		return -1;
	}
	return JW_JLONG(cq);
}

/*
 * DiSNI 2.1 passes no attribute block (address 0): with nothing to modify this is a no-op
 * that succeeds. A non-zero address is taken as a struct ibv_qp_attr followed by an int mask.
 */
JNIEXPORT jint JNICALL ND(modifyQP)(JNIEnv *env, jobject self, jlong qp, jlong attr)
{
	int mask, rc;

	(void)self;
	if (qp == 0) {
		jw_throw_io(env, "ibv_modify_qp: null qp", EINVAL);
		return -1;
	}
	if (attr == 0)
		return 0;
	memcpy(&mask, JW_PTR(char, attr) + sizeof(struct ibv_qp_attr), sizeof(mask));
	rc = ibv_modify_qp(JW_PTR(struct ibv_qp, qp), JW_PTR(struct ibv_qp_attr, attr), mask);
	if (rc != 0) {
		jw_throw_io(env, "ibv_modify_qp", rc);
		return -1;
	}
	return 0;
}

JNIEXPORT jlong JNICALL ND(regMr)(JNIEnv *env, jobject self, jlong pd, jlong addr, jint len,
				  jint access, jlong lkeyOut, jlong rkeyOut, jlong handleOut)
{
	struct ibv_mr *mr;
	uint32_t v;

	(void)self;
	if (pd == 0 || addr == 0 || len <= 0 || lkeyOut == 0 || rkeyOut == 0 || handleOut == 0) {
		jw_throw_io(env, "ibv_reg_mr: invalid argument", EINVAL);
		return -1;
	}
	mr = ibv_reg_mr(JW_PTR(struct ibv_pd, pd), JW_PTR(void, addr), (size_t)len, access);
	if (mr == NULL) {
		jw_throw_io(env, "ibv_reg_mr", errno != 0 ? errno : ENOMEM);
		return -1;
	}
	v = mr->lkey;
	memcpy(JW_PTR(void, lkeyOut), &v, sizeof(v));
	v = mr->rkey;
	memcpy(JW_PTR(void, rkeyOut), &v, sizeof(v));
	v = mr->handle;
	memcpy(JW_PTR(void, handleOut), &v, sizeof(v));
	return JW_JLONG(mr);
}

/* On-demand paging needs the vendor experimental verbs; not available with rdma-core. */
JNIEXPORT jint JNICALL ND(queryOdpSupport)(JNIEnv *env, jobject self, jlong ctx)
{
	(void)env;
	(void)self;
	(void)ctx;
	return -1;
}

JNIEXPORT jint JNICALL ND(expPrefetchMr)(JNIEnv *env, jobject self, jlong mr, jlong addr, jint len)
{
	(void)env;
	(void)self;
	(void)mr;
	(void)addr;
	(void)len;
	return -1;
}

JNIEXPORT void JNICALL ND(deregMr)(JNIEnv *env, jobject self, jlong mr)
{
	int rc;

	(void)self;
	if (mr == 0) {
		jw_throw_io(env, "ibv_dereg_mr: null mr", EINVAL);
		return;
	}
	rc = ibv_dereg_mr(JW_PTR(struct ibv_mr, mr));
	if (rc != 0)
		jw_throw_io(env, "ibv_dereg_mr", rc);
}

JNIEXPORT void JNICALL ND(postSend)(JNIEnv *env, jobject self, jlong qp, jlong wrs)
{
	struct ibv_send_wr *bad = NULL;
	int rc;

	(void)self;
	if (qp == 0 || wrs == 0) {
		jw_throw_io(env, "ibv_post_send: null argument", EINVAL);
		return;
	}
	rc = ibv_post_send(JW_PTR(struct ibv_qp, qp), JW_PTR(struct ibv_send_wr, wrs), &bad);
	if (rc != 0)
		jw_throw_io(env, "ibv_post_send", rc);
}

JNIEXPORT void JNICALL ND(postRecv)(JNIEnv *env, jobject self, jlong qp, jlong wrs)
{
	struct ibv_recv_wr *bad = NULL;
	int rc;

	(void)self;
	if (qp == 0 || wrs == 0) {
		jw_throw_io(env, "ibv_post_recv: null argument", EINVAL);
		return;
	}
	rc = ibv_post_recv(JW_PTR(struct ibv_qp, qp), JW_PTR(struct ibv_recv_wr, wrs), &bad);
	if (rc != 0)
		jw_throw_io(env, "ibv_post_recv", rc);
}

/* Waits up to timeoutMs for a completion event; 0 when one was taken, -1 otherwise. */
JNIEXPORT jint JNICALL ND(getCqEvent)(JNIEnv *env, jobject self, jlong channel, jint timeoutMs)
{
	struct ibv_comp_channel *ch = JW_PTR(struct ibv_comp_channel, channel);
	struct ibv_cq *cq = NULL;
	void *cq_ctx = NULL;
	struct pollfd pfd;
	int rc;

	(void)env;
	(void)self;
	if (ch == NULL)
		return -1;
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	do {
		rc = poll(&pfd, 1, timeoutMs);
	} while (rc < 0 && errno == EINTR);
	if (rc <= 0)
		return -1;
	if (ibv_get_cq_event(ch, &cq, &cq_ctx) != 0)
		return -1;
	return 0;
}

JNIEXPORT jint JNICALL ND(pollCQ)(JNIEnv *env, jobject self, jlong cq, jint ne, jlong wcs)
{
	(void)env;
	(void)self;
	if (cq == 0 || wcs == 0 || ne < 0)
		return -EINVAL;
	return ibv_poll_cq(JW_PTR(struct ibv_cq, cq), ne, JW_PTR(struct ibv_wc, wcs));
}

JNIEXPORT jint JNICALL ND(reqNotifyCQ)(JNIEnv *env, jobject self, jlong cq, jint solicitedOnly)
{
	(void)env;
	(void)self;
	if (cq == 0)
		return -EINVAL;
	return ibv_req_notify_cq(JW_PTR(struct ibv_cq, cq), solicitedOnly);
}

JNIEXPORT jint JNICALL ND(ackCqEvent)(JNIEnv *env, jobject self, jlong cq, jint nevents)
{
	(void)env;
	(void)self;
	if (cq == 0 || nevents < 0)
		return -EINVAL;
	ibv_ack_cq_events(JW_PTR(struct ibv_cq, cq), (unsigned int)nevents);
	return 0;
}

JNIEXPORT jint JNICALL ND(destroyCompChannel)(JNIEnv *env, jobject self, jlong channel)
{
	(void)env;
	(void)self;
	if (channel == 0)
		return -EINVAL;
	return ibv_destroy_comp_channel(JW_PTR(struct ibv_comp_channel, channel)) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNICALL ND(deallocPd)(JNIEnv *env, jobject self, jlong pd)
{
	(void)env;
	(void)self;
	if (pd == 0)
		return -EINVAL;
	return -ibv_dealloc_pd(JW_PTR(struct ibv_pd, pd));
}

JNIEXPORT jint JNICALL ND(destroyCQ)(JNIEnv *env, jobject self, jlong cq)
{
	(void)env;
	(void)self;
	if (cq == 0)
		return -EINVAL;
	return -ibv_destroy_cq(JW_PTR(struct ibv_cq, cq));
}

JNIEXPORT jint JNICALL ND(getQpNum)(JNIEnv *env, jobject self, jlong qp)
{
	(void)self;
	if (qp == 0) {
		jw_throw_io(env, "qp_num of a null qp", EINVAL);
		return -1;
	}
	return (jint)JW_PTR(struct ibv_qp, qp)->qp_num;
}

JNIEXPORT jint JNICALL ND(getContextFd)(JNIEnv *env, jobject self, jlong ctx)
{
	(void)self;
	if (ctx == 0) {
		jw_throw_io(env, "cmd_fd of a null context", EINVAL);
		return -1;
	}
	return JW_PTR(struct ibv_context, ctx)->cmd_fd;
}

JNIEXPORT jint JNICALL ND(getContextNumCompVectors)(JNIEnv *env, jobject self, jlong ctx)
{
	(void)self;
	if (ctx == 0) {
		jw_throw_io(env, "num_comp_vectors of a null context", EINVAL);
		return -1;
	}
	return JW_PTR(struct ibv_context, ctx)->num_comp_vectors;
}

JNIEXPORT jint JNICALL ND(getPdHandle)(JNIEnv *env, jobject self, jlong pd)
{
	(void)self;
	if (pd == 0) {
		jw_throw_io(env, "handle of a null pd", EINVAL);
		return -1;
	}
	return (jint)JW_PTR(struct ibv_pd, pd)->handle;
}

JNIEXPORT jint JNICALL ND(getSockAddrInSize)(JNIEnv *env, jobject self)
{
	(void)env;
	(void)self;
	return (jint)sizeof(struct sockaddr_in);
}

JNIEXPORT jint JNICALL ND(getIbvRecvWRSize)(JNIEnv *env, jobject self)
{
	(void)env;
	(void)self;
	return (jint)sizeof(struct ibv_recv_wr);
}

JNIEXPORT jint JNICALL ND(getIbvSendWRSize)(JNIEnv *env, jobject self)
{
	(void)env;
	(void)self;
	return (jint)sizeof(struct ibv_send_wr);
}

JNIEXPORT jint JNICALL ND(getIbvSgeSize)(JNIEnv *env, jobject self)
{
	(void)env;
	(void)self;
	return (jint)sizeof(struct ibv_sge);
}

JNIEXPORT jint JNICALL ND(getIbvWCSize)(JNIEnv *env, jobject self)
{
	(void)env;
	(void)self;
	return (jint)sizeof(struct ibv_wc);
}

JNIEXPORT jint JNICALL ND(getRemoteAddressOffset)(JNIEnv *env, jobject self)
{
	(void)env;
	(void)self;
	return (jint)offsetof(struct ibv_send_wr, wr.rdma.remote_addr);
}

JNIEXPORT jint JNICALL ND(getRKeyOffset)(JNIEnv *env, jobject self)
{
	(void)env;
	(void)self;
	return (jint)offsetof(struct ibv_send_wr, wr.rdma.rkey);
}

JNIEXPORT jint JNICALL ND(getVersion)(JNIEnv *env, jobject self)
{
	(void)env;
	(void)self;
	return JW_DISNI_JNI_VERSION;
}
