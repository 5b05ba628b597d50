/*
 * jwarp libdisni: shared helpers for the JNI entry points.
 *
 * Every handle that crosses the JNI boundary is the raw C pointer carried in a jlong.
 * Errors of calls declared "throws IOException" on the Java side are raised as
 * org.jwarp.disni.NativeErrnoException (an IOException) carrying the call name, strerror(errno)
 * and the errno value as an int field.
 */
#ifndef JW_COMMON_H
#define JW_COMMON_H

#include <jni.h>
#include <stdint.h>
#include <pthread.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Version the Java side (NativeDispatcher.JVERBS_VERSION) insists on. */
#define JW_DISNI_JNI_VERSION 32
/* Version of our own extension (org.jwarp.disni.natives.JwarpNative). */
#define JW_EXT_VERSION 10

/* IOException subclass with the errno as an int (org.jwarp.disni.NativeErrnoException). */
#define JW_ERRNO_EXCEPTION "org/jwarp/disni/NativeErrnoException"

/* Private data a CM event can carry (rdma_conn_param.private_data_len is a u8). */
#define JW_MAX_PRIVATE_DATA 255

/* A plain C function other callers than the JVM's JNI may bind by name (the library is built with
 * -fvisibility=hidden). */
#define JW_API __attribute__((visibility("default")))

/* The blocking wait of a CQ on its own completion channel in one call (jw_events.c). */
JW_API int jw_cq_await(struct ibv_cq *cq, struct ibv_comp_channel *channel, int wakeFd, int n, struct ibv_wc *wcs,
		       int64_t timeoutNanos, uint32_t *unacked);

#define JW_PTR(type, j) ((type *)(uintptr_t)(j))
#define JW_JLONG(p) ((jlong)(uintptr_t)(p))

/*
 * Side record kept per rdma_cm_id (in id->context): the data of the last CM event for that
 * id, copied out of the event before it is acknowledged, so the Java side can read the
 * status, the peer's private data and the IRD/ORD the kernel reported.
 */
struct jw_cm_rec {
	struct rdma_cm_id *owner;   /* the id this record belongs to (children inherit context) */
	uint32_t seq;               /* number of events recorded for this id */
	int32_t event;              /* enum rdma_cm_event_type, -1 before the first event */
	int32_t status;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t private_data_len;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint32_t qp_num;
	uint8_t private_data[JW_MAX_PRIVATE_DATA];
};

extern pthread_mutex_t jw_cm_lock;

/*
 * QP creation beyond DiSNI's _createQP signature (which carries no SGE counts): the calling
 * thread sets the SGEs it wants right before _createQP, and reads back what rdma_create_qp
 * granted right after it (JwarpNative.qpRequest / qpGranted). Per thread, so concurrent QP
 * creations on other threads do not mix.
 */
struct jw_qp_req {
	int set;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	struct ibv_srq *srq;        /* attach to this SRQ (JwarpNative.qpRequestSrq), or NULL */
};
extern __thread struct jw_qp_req jw_qp_req;
extern __thread struct ibv_qp_cap jw_qp_granted;
extern __thread uint32_t jw_qp_granted_num;

/* Throws NativeErrnoException "<what>: <strerror(err)> (errno <err>)" with errno field err. */
void jw_throw_io(JNIEnv *env, const char *what, int err);
/* Throws java.io.IOException with a plain message. */
void jw_throw_msg(JNIEnv *env, const char *cls, const char *msg);

/* Allocates and attaches a fresh record to id (replacing an inherited one). NULL on ENOMEM. */
struct jw_cm_rec *jw_rec_attach(struct rdma_cm_id *id);
/* Detaches and frees the record owned by id, if any. */
void jw_rec_release(struct rdma_cm_id *id);

#endif
