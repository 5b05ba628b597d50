/*
 * jwarp libdisni: shared receive queues, completion events on a shared completion channel and
 * device async events (org.jwarp.disni.natives.JwarpNative, extension versions 6-10).
 *
 *  - ibv_create_srq / ibv_post_srq_recv / ibv_modify_srq (IBV_SRQ_LIMIT) / ibv_destroy_srq, and
 *    the SRQ a QP created on this thread is attached to (around DiSNI's _createQP);
 *  - ibv_req_notify_cq, and ibv_get_cq_event on a channel many CQs share, returning which CQ
 *    raised the event (version 10: left unacknowledged, the caller acknowledges in batches);
 *  - ibv_get_async_event + ibv_ack_async_event with a timeout, copying out what the event names;
 *  - (version 9) the blocking wait of a CQ on its own channel in one call (poll, arm, poll, wait,
 *    take the event, poll), its events acknowledged in batches, and an eventfd that ends the wait;
 *    the wait itself is the exported C function jw_cq_await, which the ffm provider binds without JNI.
 *
 * Every verbs return code is checked; nothing here allocates memory that outlives a call.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "jw_common.h"

#define JN(name) Java_org_jwarp_disni_natives_JwarpNative_##name

/* srqCreate output layout */
#define SRQ_MAX_WR 0
#define SRQ_MAX_SGE 4
#define SRQ_SIZE 8

/* asyncEvent output layout */
#define AE_TYPE 0
#define AE_QP_NUM 4
#define AE_CQ 8
#define AE_SRQ 16
#define AE_PORT 24
#define AE_SIZE 32

static void put32(void *base, size_t off, int32_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

static void put64(void *base, size_t off, int64_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

/* 0, or (index << 32) | errno, as postSendList; index -1 when bad_wr is not in the chain. */
static jlong srq_list_result(int rc, const struct ibv_recv_wr *first, const struct ibv_recv_wr *bad)
{
	const struct ibv_recv_wr *w = first;
	jlong i = 0;

	if (rc < 0)
		rc = -rc;
	if (rc == 0)
		return 0;
	if (bad == NULL) {
		i = -1;
	} else {
		while (w != NULL && w != bad) {
			w = w->next;
			i++;
		}
		if (w == NULL)
			i = -1;
	}
	return (jlong)(((uint64_t)(uint32_t)i << 32) | (uint32_t)rc);
}

JNIEXPORT jlong JNICALL JN(srqCreate)(JNIEnv *env, jclass cls, jlong pd, jint maxWr, jint maxSge, jobject out)
{
	struct ibv_srq_init_attr attr;
	struct ibv_srq *srq;
	void *base;

	(void)cls;
	base = out != NULL ? (*env)->GetDirectBufferAddress(env, out) : NULL;
	if (pd == 0 || maxWr < 1 || maxSge < 1 || base == NULL
	    || (*env)->GetDirectBufferCapacity(env, out) < SRQ_SIZE) {
		jw_throw_io(env, "ibv_create_srq: invalid argument", EINVAL);
		return 0;
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr.max_wr = (uint32_t)maxWr;
	attr.attr.max_sge = (uint32_t)maxSge;
	attr.attr.srq_limit = 0;
	errno = 0;
	srq = ibv_create_srq(JW_PTR(struct ibv_pd, pd), &attr);
	if (srq == NULL) {
		jw_throw_io(env, "ibv_create_srq", errno != 0 ? errno : ENOMEM);
		return 0;
	}
	/* ibv_create_srq writes back what was granted */
	put32(base, SRQ_MAX_WR, (int32_t)attr.attr.max_wr);
	put32(base, SRQ_MAX_SGE, (int32_t)attr.attr.max_sge);
	return JW_JLONG(srq);
}

/* Hot path: one ibv_post_srq_recv for a linked chain; 0 or (index << 32) | errno. */
JNIEXPORT jlong JNICALL JN(srqPostRecvList)(JNIEnv *env, jclass cls, jlong srq, jlong wr)
{
	struct ibv_recv_wr *bad = NULL;
	int rc;

	(void)env;
	(void)cls;
	if (srq == 0 || wr == 0)
		return EINVAL;
	rc = ibv_post_srq_recv(JW_PTR(struct ibv_srq, srq), JW_PTR(struct ibv_recv_wr, wr), &bad);
	return srq_list_result(rc, JW_PTR(struct ibv_recv_wr, wr), bad);
}

/* ibv_modify_srq(IBV_SRQ_LIMIT): arms the limit event (0 disarms on most providers); 0 or errno. */
JNIEXPORT jint JNICALL JN(srqArm)(JNIEnv *env, jclass cls, jlong srq, jint limit)
{
	struct ibv_srq_attr attr;
	int rc;

	(void)env;
	(void)cls;
	if (srq == 0 || limit < 0)
		return EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.srq_limit = (uint32_t)limit;
	rc = ibv_modify_srq(JW_PTR(struct ibv_srq, srq), &attr, IBV_SRQ_LIMIT);
	return rc < 0 ? -rc : rc;
}

/* ibv_query_srq: the armed limit (0 once the event fired), or -errno. */
JNIEXPORT jint JNICALL JN(srqLimit)(JNIEnv *env, jclass cls, jlong srq)
{
	struct ibv_srq_attr attr;
	int rc;

	(void)env;
	(void)cls;
	if (srq == 0)
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	rc = ibv_query_srq(JW_PTR(struct ibv_srq, srq), &attr);
	if (rc != 0)
		return rc < 0 ? rc : -rc;
	return (jint)attr.srq_limit;
}

JNIEXPORT jint JNICALL JN(srqDestroy)(JNIEnv *env, jclass cls, jlong srq)
{
	int rc;

	(void)env;
	(void)cls;
	if (srq == 0)
		return EINVAL;
	rc = ibv_destroy_srq(JW_PTR(struct ibv_srq, srq));
	return rc < 0 ? -rc : rc;
}

/* The SRQ the next _createQP on this thread attaches (0: none); cleared with qpRequestClear. */
JNIEXPORT void JNICALL JN(qpRequestSrq)(JNIEnv *env, jclass cls, jlong srq)
{
	(void)env;
	(void)cls;
	jw_qp_req.srq = JW_PTR(struct ibv_srq, srq);
}

/* ibv_req_notify_cq; 0 or an errno value. */
JNIEXPORT jint JNICALL JN(reqNotifyCq)(JNIEnv *env, jclass cls, jlong cq, jboolean solicitedOnly)
{
	int rc;

	(void)env;
	(void)cls;
	if (cq == 0)
		return EINVAL;
	rc = ibv_req_notify_cq(JW_PTR(struct ibv_cq, cq), solicitedOnly ? 1 : 0);
	return rc < 0 ? -rc : rc;
}

/*
 * Waits up to timeoutMs on the (O_NONBLOCK) channel fd and takes one event, which it does NOT
 * acknowledge: the caller counts it against the CQ and acknowledges in batches (cqAckEvents),
 * always before that CQ is destroyed. Returns the CQ that raised it, 0 on timeout or when another
 * thread took the event, or a negative errno.
 */
JNIEXPORT jlong JNICALL JN(compChannelNext)(JNIEnv *env, jclass cls, jlong channel, jint timeoutMs)
{
	struct ibv_comp_channel *ch = JW_PTR(struct ibv_comp_channel, channel);
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	struct pollfd pfd;
	int rc;

	(void)env;
	(void)cls;
	if (ch == NULL)
		return -EINVAL;
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	rc = poll(&pfd, 1, timeoutMs < 0 ? 0 : timeoutMs);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	if (rc == 0)
		return 0;
	if (ibv_get_cq_event(ch, &cq, &ctx) != 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -(errno != 0 ? errno : EIO);
	return JW_JLONG(cq);
}

/*
 * Waits up to timeoutMs for a device async event on ctx->async_fd (made O_NONBLOCK here), copies
 * what it names into out (AE_* layout) and acknowledges it. Returns the ibv_event_type, -1 on
 * timeout (or when another reader took it), or -2 - errno on an error.
 */
JNIEXPORT jint JNICALL JN(asyncEvent)(JNIEnv *env, jclass cls, jlong ctxPtr, jint timeoutMs, jobject out)
{
	struct ibv_context *ctx = JW_PTR(struct ibv_context, ctxPtr);
	struct ibv_async_event ev;
	struct pollfd pfd;
	void *base;
	int flags, rc;

	(void)cls;
	base = out != NULL ? (*env)->GetDirectBufferAddress(env, out) : NULL;
	if (ctx == NULL || base == NULL || (*env)->GetDirectBufferCapacity(env, out) < AE_SIZE)
		return -2 - EINVAL;
	flags = fcntl(ctx->async_fd, F_GETFL);
	if (flags < 0)
		return -2 - errno;
	if ((flags & O_NONBLOCK) == 0 && fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -2 - errno;
	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	rc = poll(&pfd, 1, timeoutMs < 0 ? 0 : timeoutMs);
	if (rc < 0)
		return errno == EINTR ? -1 : -2 - errno;
	if (rc == 0)
		return -1;
	if (ibv_get_async_event(ctx, &ev) != 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? -1 : -2 - (errno != 0 ? errno : EIO);
	memset(base, 0, AE_SIZE);
	put32(base, AE_TYPE, (int32_t)ev.event_type);
	put32(base, AE_QP_NUM, -1);
	switch (ev.event_type) {
	case IBV_EVENT_CQ_ERR:
		put64(base, AE_CQ, JW_JLONG(ev.element.cq));
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		put64(base, AE_SRQ, JW_JLONG(ev.element.srq));
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		put32(base, AE_PORT, ev.element.port_num);
		break;
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		if (ev.element.qp != NULL)
			put32(base, AE_QP_NUM, (int32_t)ev.element.qp->qp_num);
		break;
	default:
		/* DEVICE_FATAL, WQ_FATAL (its element is a struct ibv_wq, not a QP) and any event this
		 * code does not know: no element is read, so no qp number (-1), CQ or SRQ */
		break;
	}
	ibv_ack_async_event(&ev);
	return (jint)ev.event_type;
}

/* ibv_event_type values the Java side maps (they are ABI). */
JNIEXPORT jint JNICALL JN(asyncEventCode)(JNIEnv *env, jclass cls, jint key)
{
	(void)env;
	(void)cls;
	switch (key) {
	case 0: return IBV_EVENT_QP_FATAL;
	case 1: return IBV_EVENT_QP_REQ_ERR;
	case 2: return IBV_EVENT_QP_ACCESS_ERR;
	case 3: return IBV_EVENT_CQ_ERR;
	case 4: return IBV_EVENT_SRQ_LIMIT_REACHED;
	case 5: return IBV_EVENT_SRQ_ERR;
	case 6: return IBV_EVENT_COMM_EST;
	case 7: return IBV_EVENT_DEVICE_FATAL;
	default: return -1;
	}
}

/* ---- version 9: the blocking wait of a CQ on its own channel in one crossing ---- */

/*
 * Completion events taken by cqAwait before one ibv_ack_cq_events acknowledges them together
 * (the call takes the CQ's lock and signals its condition variable, so once per event costs more
 * than the wait's fast path). The rest is acknowledged by cqAckEvents before the CQ is destroyed:
 * ibv_destroy_cq waits until every event it reported was acknowledged.
 */
#define JW_CQ_ACK_BATCH 64

/* ibv_req_notify_cq and ibv_poll_cq failures as one negative errno (providers return either sign). */
static int neg_errno(int rc)
{
	if (rc == 0)
		return -EIO;
	return rc < 0 ? rc : -rc;
}

/*
 * The whole blocking wait of a CQ on its own (O_NONBLOCK or blocking) completion channel:
 *   poll -> arm (ibv_req_notify_cq, every completion) -> poll -> wait on the channel fd and the
 *   wake fd (ppoll, up to timeoutNanos) -> ibv_get_cq_event -> poll.
 * The arm comes after a first empty poll and is followed by a second poll, so a completion that
 * arrives between the two is found by the poll, one that arrives after the arm raises the event:
 * none is slept through. Events taken are counted in the uint32 at unacked and acknowledged
 * JW_CQ_ACK_BATCH at a time. A readable wake fd (the CQ is being closed) ends the wait at once
 * and is left readable. The caller serializes every call on one CQ (and with its destruction).
 *
 * Plain C, no JNIEnv: the JNI entry point cqAwait (DiSNI provider) wraps it, and the ffm provider
 * binds it by name through java.lang.foreign, so the sequence is one native call for both.
 *
 * Returns the completions polled into wcs (n at most), 0 when the time passed, the wake fd fired,
 * a signal interrupted the wait or the event found the CQ empty (then call again), -EINVAL for bad
 * arguments, or the failing call's negative errno.
 */
JW_API int jw_cq_await(struct ibv_cq *c, struct ibv_comp_channel *ch, int wakeFd, int n, struct ibv_wc *w,
		       int64_t timeoutNanos, uint32_t *unacked)
{
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;
	struct pollfd pfd[2];
	struct timespec ts;
	int rc;

	if (c == NULL || ch == NULL || w == NULL || unacked == NULL || wakeFd < 0 || n <= 0 || timeoutNanos < 0)
		return -EINVAL;
	rc = ibv_poll_cq(c, n, w);
	if (rc != 0)
		return rc;
	rc = ibv_req_notify_cq(c, 0);
	if (rc != 0)
		return neg_errno(rc);
	rc = ibv_poll_cq(c, n, w);
	if (rc != 0)
		return rc;
	pfd[0].fd = ch->fd;
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	pfd[1].fd = wakeFd;
	pfd[1].events = POLLIN;
	pfd[1].revents = 0;
	ts.tv_sec = (time_t)(timeoutNanos / 1000000000LL);
	ts.tv_nsec = (long)(timeoutNanos % 1000000000LL);
	rc = ppoll(pfd, 2, &ts, NULL);
	if (rc < 0)
		return errno == EINTR ? 0 : neg_errno(errno);
	if (rc == 0 || (pfd[1].revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) != 0)
		return 0;
	if ((pfd[0].revents & POLLNVAL) != 0)
		return -EBADF;
	if ((pfd[0].revents & POLLIN) == 0)
		return (pfd[0].revents & (POLLERR | POLLHUP)) != 0 ? -EIO : 0;
	errno = 0;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) != 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : neg_errno(errno);
	if (ev_cq != c) {
		/* not this CQ's event (a channel shared behind the caller's back): never keep it unacked */
		ibv_ack_cq_events(ev_cq, 1);
	} else if (++*unacked >= JW_CQ_ACK_BATCH) {
		ibv_ack_cq_events(c, *unacked);
		*unacked = 0;
	}
	return ibv_poll_cq(c, n, w);
}

/* jw_cq_await for the DiSNI provider (org.jwarp.disni.natives.JwarpNative.cqAwait). */
JNIEXPORT jint JNICALL JN(cqAwait)(JNIEnv *env, jclass cls, jlong cq, jlong channel, jint wakeFd, jint n,
				   jlong wcs, jlong timeoutNanos, jlong ackState)
{
	(void)env;
	(void)cls;
	return jw_cq_await(JW_PTR(struct ibv_cq, cq), JW_PTR(struct ibv_comp_channel, channel), wakeFd, n,
			   JW_PTR(struct ibv_wc, wcs), timeoutNanos, JW_PTR(uint32_t, ackState));
}

/*
 * Acknowledges the events cqAwait counted at ackState and not yet acknowledged; call it before
 * ibv_destroy_cq, with no cqAwait running on the CQ. Returns how many were acknowledged, or
 * -EINVAL.
 */
JNIEXPORT jint JNICALL JN(cqAckEvents)(JNIEnv *env, jclass cls, jlong cq, jlong ackState)
{
	uint32_t *unacked = JW_PTR(uint32_t, ackState);
	uint32_t k;

	(void)env;
	(void)cls;
	if (cq == 0 || unacked == NULL)
		return -EINVAL;
	k = *unacked;
	if (k > 0)
		ibv_ack_cq_events(JW_PTR(struct ibv_cq, cq), k);
	*unacked = 0;
	return (jint)k;
}

/* An eventfd (non-blocking, close-on-exec) that ends a cqAwait when written; its fd or -1 with an exception. */
JNIEXPORT jint JNICALL JN(wakeCreate)(JNIEnv *env, jclass cls)
{
	int fd;

	(void)cls;
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0) {
		jw_throw_io(env, "eventfd", errno);
		return -1;
	}
	return fd;
}

/* Makes the wake fd readable (for good: nothing reads it); 0 or an errno value. */
JNIEXPORT jint JNICALL JN(wakeSignal)(JNIEnv *env, jclass cls, jint fd)
{
	uint64_t one = 1;
	ssize_t w;

	(void)env;
	(void)cls;
	if (fd < 0)
		return EINVAL;
	do {
		w = write(fd, &one, sizeof(one));
	} while (w < 0 && errno == EINTR);
	if (w == (ssize_t)sizeof(one))
		return 0;
	/* EAGAIN: the counter is at its maximum, so the fd is readable already */
	return w < 0 ? (errno == EAGAIN ? 0 : errno) : EIO;
}

/* Closes the wake fd; 0 or the errno of close. */
JNIEXPORT jint JNICALL JN(wakeClose)(JNIEnv *env, jclass cls, jint fd)
{
	(void)env;
	(void)cls;
	if (fd < 0)
		return EINVAL;
	return close(fd) == 0 ? 0 : errno;
}
