/*
 * jwarp libdisni: the rdma_cm half of com.ibm.disni.verbs.impl.NativeDispatcher.
 *
 * Written from the Java side's contract (javap of DiSNI 2.1): handles are raw pointers,
 * socket addresses are IPv4 sockaddr_in images in native memory, _getCmEvent stores the
 * listen id and the id of the event at two addresses and acknowledges the event itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include "jw_common.h"

#define ND(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

static int set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -1;
	return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

JNIEXPORT jlong JNICALL ND(createEventChannel)(JNIEnv *env, jobject self)
{
	struct rdma_event_channel *ch;
	int err;

	(void)self;
	ch = rdma_create_event_channel();
	if (ch == NULL) {
		jw_throw_io(env, "rdma_create_event_channel", errno);
		return -1;
	}
	if (set_nonblock(ch->fd) != 0) {
		err = errno;
		rdma_destroy_event_channel(ch);
		jw_throw_io(env, "fcntl(O_NONBLOCK) on event channel", err);
		return -1;
	}
	return JW_JLONG(ch);
}

JNIEXPORT jlong JNICALL ND(createId)(JNIEnv *env, jobject self, jlong channel, jshort ps)
{
	struct rdma_event_channel *ch = JW_PTR(struct rdma_event_channel, channel);
	struct rdma_cm_id *id = NULL;
	enum rdma_port_space space;
	int err;

	(void)self;
	switch ((unsigned short)ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		space = (enum rdma_port_space)(unsigned short)ps;
		break;
	default:
		space = RDMA_PS_TCP;
		break;
	}
	if (ch == NULL) {
		jw_throw_io(env, "rdma_create_id: no event channel", EINVAL);
		return -1;
	}
	if (rdma_create_id(ch, &id, NULL, space) != 0) {
		jw_throw_io(env, "rdma_create_id", errno);
		return -1;
	}
	pthread_mutex_lock(&jw_cm_lock);
	if (jw_rec_attach(id) == NULL) {
		pthread_mutex_unlock(&jw_cm_lock);
		err = ENOMEM;
		rdma_destroy_id(id);
		jw_throw_io(env, "rdma_create_id: side record", err);
		return -1;
	}
	pthread_mutex_unlock(&jw_cm_lock);
	return JW_JLONG(id);
}

JNIEXPORT jlong JNICALL ND(createQP)(JNIEnv *env, jobject self, jlong cmId, jlong pdPtr,
				     jlong sendCq, jlong recvCq, jint qpType, jint maxSendWr,
				     jint maxRecvWr, jint maxInline)
{
	struct rdma_cm_id *id = JW_PTR(struct rdma_cm_id, cmId);
	struct ibv_qp_init_attr attr;
	struct ibv_device_attr dev;
	struct jw_qp_req req = jw_qp_req;
	int sge = 4;

	(void)self;
	jw_qp_req.set = 0; /* a request is good for the next creation on this thread only */
	jw_qp_req.srq = NULL;
	if (id == NULL || pdPtr == 0 || sendCq == 0 || recvCq == 0) {
		jw_throw_io(env, "rdma_create_qp: null handle", EINVAL);
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	if (req.set) {
		/* asked for by JwarpNative.qpRequest on this thread: more than the device offers fails */
		attr.cap.max_send_sge = req.max_send_sge;
		attr.cap.max_recv_sge = req.max_recv_sge;
	} else {
		if (id->verbs != NULL && ibv_query_device(id->verbs, &dev) == 0 && dev.max_sge < sge)
			sge = dev.max_sge;
		attr.cap.max_send_sge = (uint32_t)sge;
		attr.cap.max_recv_sge = (uint32_t)sge;
	}
	attr.send_cq = JW_PTR(struct ibv_cq, sendCq);
	attr.recv_cq = JW_PTR(struct ibv_cq, recvCq);
	attr.qp_type = (enum ibv_qp_type)qpType;
	attr.cap.max_send_wr = (uint32_t)maxSendWr;
	attr.cap.max_recv_wr = (uint32_t)maxRecvWr;
	attr.cap.max_inline_data = (uint32_t)maxInline;
	if (req.set && req.srq != NULL) {
		/* receives come from the SRQ: the QP's own receive queue is not used */
		attr.srq = req.srq;
		attr.cap.max_recv_wr = 0;
		attr.cap.max_recv_sge = 0;
	}
	memset(&jw_qp_granted, 0, sizeof(jw_qp_granted));
	jw_qp_granted_num = 0;
	if (rdma_create_qp(id, JW_PTR(struct ibv_pd, pdPtr), &attr) != 0) {
		jw_throw_io(env, "rdma_create_qp", errno);
		return -1;
	}
	jw_qp_granted = attr.cap; /* rdma_create_qp reports the capabilities granted */
	jw_qp_granted_num = id->qp->qp_num;
	return JW_JLONG(id->qp);
}

JNIEXPORT void JNICALL ND(bindAddr)(JNIEnv *env, jobject self, jlong cmId, jlong addr)
{
	(void)self;
	if (cmId == 0 || addr == 0) {
		jw_throw_io(env, "rdma_bind_addr: null argument", EINVAL);
		return;
	}
	if (rdma_bind_addr(JW_PTR(struct rdma_cm_id, cmId), JW_PTR(struct sockaddr, addr)) != 0)
		jw_throw_io(env, "rdma_bind_addr", errno);
}

JNIEXPORT void JNICALL ND(listen)(JNIEnv *env, jobject self, jlong cmId, jint backlog)
{
	(void)self;
	if (cmId == 0) {
		jw_throw_io(env, "rdma_listen: null id", EINVAL);
		return;
	}
	if (rdma_listen(JW_PTR(struct rdma_cm_id, cmId), backlog) != 0)
		jw_throw_io(env, "rdma_listen", errno);
}

JNIEXPORT void JNICALL ND(resolveAddr)(JNIEnv *env, jobject self, jlong cmId, jlong src,
				       jlong dst, jint timeoutMs)
{
	(void)self;
	if (cmId == 0 || dst == 0) {
		jw_throw_io(env, "rdma_resolve_addr: null argument", EINVAL);
		return;
	}
	if (rdma_resolve_addr(JW_PTR(struct rdma_cm_id, cmId), JW_PTR(struct sockaddr, src),
			      JW_PTR(struct sockaddr, dst), timeoutMs) != 0)
		jw_throw_io(env, "rdma_resolve_addr", errno);
}

JNIEXPORT void JNICALL ND(resolveRoute)(JNIEnv *env, jobject self, jlong cmId, jint timeoutMs)
{
	(void)self;
	if (cmId == 0) {
		jw_throw_io(env, "rdma_resolve_route: null id", EINVAL);
		return;
	}
	if (rdma_resolve_route(JW_PTR(struct rdma_cm_id, cmId), timeoutMs) != 0)
		jw_throw_io(env, "rdma_resolve_route", errno);
}

/* Copies what the Java side of DiSNI would otherwise lose into the id's side record. */
static void record_event(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct jw_cm_rec *rec;
	const struct rdma_conn_param *cp = &ev->param.conn;

	if (id == NULL)
		return;
	pthread_mutex_lock(&jw_cm_lock);
	rec = id->context;
	if (rec == NULL || rec->owner != id)
		rec = jw_rec_attach(id); /* a new id of a CONNECT_REQUEST inherits the listener's */
	if (rec != NULL) {
		rec->seq++;
		rec->event = (int32_t)ev->event;
		rec->status = ev->status;
		rec->responder_resources = cp->responder_resources;
		rec->initiator_depth = cp->initiator_depth;
		rec->flow_control = cp->flow_control;
		rec->retry_count = cp->retry_count;
		rec->rnr_retry_count = cp->rnr_retry_count;
		rec->srq = cp->srq;
		rec->qp_num = cp->qp_num;
		rec->private_data_len = 0;
		if (cp->private_data != NULL && cp->private_data_len > 0 &&
		    (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
		     ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE ||
		     ev->event == RDMA_CM_EVENT_ESTABLISHED ||
		     ev->event == RDMA_CM_EVENT_REJECTED)) {
			rec->private_data_len = cp->private_data_len;
			memcpy(rec->private_data, cp->private_data, cp->private_data_len);
		}
	}
	pthread_mutex_unlock(&jw_cm_lock);
}

JNIEXPORT jint JNICALL ND(getCmEvent)(JNIEnv *env, jobject self, jlong channel, jlong listenIdOut,
				      jlong idOut, jint timeoutMs)
{
	struct rdma_event_channel *ch = JW_PTR(struct rdma_event_channel, channel);
	struct rdma_cm_event *ev = NULL;
	struct pollfd pfd;
	uint64_t lid, cid;
	int rc, type;

	(void)env;
	(void)self;
	if (ch == NULL || listenIdOut == 0 || idOut == 0)
		return -1;
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	do {
		rc = poll(&pfd, 1, timeoutMs);
	} while (rc < 0 && errno == EINTR);
	if (rc <= 0)
		return -1;
	if (rdma_get_cm_event(ch, &ev) != 0)
		return -1; /* EAGAIN: another thread took it */
	record_event(ev);
	lid = ev->listen_id != NULL ? (uint64_t)(uintptr_t)ev->listen_id : UINT64_MAX;
	cid = ev->id != NULL ? (uint64_t)(uintptr_t)ev->id : UINT64_MAX;
	memcpy(JW_PTR(void, listenIdOut), &lid, sizeof(lid));
	memcpy(JW_PTR(void, idOut), &cid, sizeof(cid));
	type = (int)ev->event;
	if (rdma_ack_cm_event(ev) != 0)
		return -1;
	return type;
}

static int fill_default_param(struct rdma_cm_id *id, struct rdma_conn_param *p, int retry, int rnr)
{
	struct ibv_device_attr dev;

	memset(p, 0, sizeof(*p));
	if (id->verbs == NULL)
		return EINVAL;
	if (ibv_query_device(id->verbs, &dev) != 0)
		return errno != 0 ? errno : EIO;
	p->responder_resources = (uint8_t)(dev.max_qp_rd_atom > 255 ? 255 : dev.max_qp_rd_atom);
	p->initiator_depth = (uint8_t)(dev.max_qp_init_rd_atom > 255 ? 255 : dev.max_qp_init_rd_atom);
	p->retry_count = (uint8_t)retry;
	p->rnr_retry_count = (uint8_t)rnr;
	return 0;
}

JNIEXPORT void JNICALL ND(connect)(JNIEnv *env, jobject self, jlong cmId, jint retry, jint rnr,
				   jlong privAddr, jbyte privLen)
{
	struct rdma_cm_id *id = JW_PTR(struct rdma_cm_id, cmId);
	struct rdma_conn_param p;
	int err;

	(void)self;
	if (id == NULL) {
		jw_throw_io(env, "rdma_connect: null id", EINVAL);
		return;
	}
	err = fill_default_param(id, &p, retry, rnr);
	if (err != 0) {
		jw_throw_io(env, "rdma_connect: ibv_query_device", err);
		return;
	}
	if (privAddr != 0 && (uint8_t)privLen > 0) {
		p.private_data = JW_PTR(const void, privAddr);
		p.private_data_len = (uint8_t)privLen;
	}
	if (rdma_connect(id, &p) != 0)
		jw_throw_io(env, "rdma_connect", errno);
}

JNIEXPORT void JNICALL ND(accept)(JNIEnv *env, jobject self, jlong cmId, jint retry, jint rnr)
{
	struct rdma_cm_id *id = JW_PTR(struct rdma_cm_id, cmId);
	struct rdma_conn_param p;
	int err;

	(void)self;
	if (id == NULL) {
		jw_throw_io(env, "rdma_accept: null id", EINVAL);
		return;
	}
	err = fill_default_param(id, &p, retry, rnr);
	if (err != 0) {
		jw_throw_io(env, "rdma_accept: ibv_query_device", err);
		return;
	}
	if (rdma_accept(id, &p) != 0)
		jw_throw_io(env, "rdma_accept", errno);
}

/* Events are acknowledged inside _getCmEvent, as the Java side expects. */
JNIEXPORT jint JNICALL ND(ackCmEvent)(JNIEnv *env, jobject self, jint event)
{
	(void)env;
	(void)self;
	(void)event;
	return 0;
}

JNIEXPORT jint JNICALL ND(disconnect)(JNIEnv *env, jobject self, jlong cmId)
{
	(void)env;
	(void)self;
	if (cmId == 0)
		return -EINVAL;
	return rdma_disconnect(JW_PTR(struct rdma_cm_id, cmId)) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNICALL ND(destroyEventChannel)(JNIEnv *env, jobject self, jlong channel)
{
	(void)env;
	(void)self;
	if (channel == 0)
		return -EINVAL;
	rdma_destroy_event_channel(JW_PTR(struct rdma_event_channel, channel));
	return 0;
}

JNIEXPORT jint JNICALL ND(destroyCmId)(JNIEnv *env, jobject self, jlong cmId)
{
	struct rdma_cm_id *id = JW_PTR(struct rdma_cm_id, cmId);
	struct jw_cm_rec *rec;

	(void)env;
	(void)self;
	if (id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&jw_cm_lock);
	rec = id->context;
	if (rec != NULL && rec->owner != id)
		rec = NULL;
	pthread_mutex_unlock(&jw_cm_lock);
	if (rdma_destroy_id(id) != 0)
		return -errno; /* the id (and its record) stay alive: events are still pending */
	free(rec);
	return 0;
}

JNIEXPORT jint JNICALL ND(destroyQP)(JNIEnv *env, jobject self, jlong cmId)
{
	struct rdma_cm_id *id = JW_PTR(struct rdma_cm_id, cmId);

	(void)env;
	(void)self;
	if (id == NULL || id->qp == NULL)
		return -EINVAL;
	rdma_destroy_qp(id);
	return 0;
}

static jint copy_addr(struct sockaddr *sa, jlong out)
{
	if (sa == NULL || out == 0)
		return -EINVAL;
	memcpy(JW_PTR(void, out), sa, sizeof(struct sockaddr_in));
	return 0;
}

JNIEXPORT jint JNICALL ND(getSrcAddr)(JNIEnv *env, jobject self, jlong cmId, jlong out)
{
	(void)env;
	(void)self;
	if (cmId == 0)
		return -EINVAL;
	return copy_addr(rdma_get_local_addr(JW_PTR(struct rdma_cm_id, cmId)), out);
}

JNIEXPORT jint JNICALL ND(getDstAddr)(JNIEnv *env, jobject self, jlong cmId, jlong out)
{
	(void)env;
	(void)self;
	if (cmId == 0)
		return -EINVAL;
	return copy_addr(rdma_get_peer_addr(JW_PTR(struct rdma_cm_id, cmId)), out);
}

JNIEXPORT jint JNICALL ND(destroyEp)(JNIEnv *env, jobject self, jlong cmId)
{
	struct rdma_cm_id *id = JW_PTR(struct rdma_cm_id, cmId);

	(void)env;
	(void)self;
	if (id == NULL)
		return -EINVAL;
	jw_rec_release(id);
	rdma_destroy_ep(id);
	return 0;
}

JNIEXPORT jlong JNICALL ND(getContext)(JNIEnv *env, jobject self, jlong cmId)
{
	struct rdma_cm_id *id = JW_PTR(struct rdma_cm_id, cmId);

	(void)self;
	if (id == NULL || id->verbs == NULL) {
		jw_throw_io(env, "cm id has no verbs context (address not bound or resolved)", EINVAL);
		return -1;
	}
	return JW_JLONG(id->verbs);
}
