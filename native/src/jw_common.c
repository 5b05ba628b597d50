/* jwarp libdisni: error helpers and the per-cm_id side record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jw_common.h"

pthread_mutex_t jw_cm_lock = PTHREAD_MUTEX_INITIALIZER;
__thread struct jw_qp_req jw_qp_req;
__thread struct ibv_qp_cap jw_qp_granted;
__thread uint32_t jw_qp_granted_num;

void jw_throw_msg(JNIEnv *env, const char *cls, const char *msg)
{
	jclass c;

	if ((*env)->ExceptionCheck(env))
		return;
	c = (*env)->FindClass(env, cls);
	if (c == NULL)
		return; /* FindClass already raised NoClassDefFoundError */
	(*env)->ThrowNew(env, c, msg);
	(*env)->DeleteLocalRef(env, c);
}

/*
 * Throws org.jwarp.disni.NativeErrnoException(message, err), an IOException that carries the
 * errno as a number. Only if that class cannot be found (the library used without jwarp's
 * classes) does it fall back to a plain java.io.IOException with the same message.
 */
void jw_throw_io(JNIEnv *env, const char *what, int err)
{
	char buf[256];
	char ebuf[128];
	const char *es;
	jclass c;
	jmethodID ctor;
	jstring msg;
	jobject ex;

	if ((*env)->ExceptionCheck(env))
		return;
	es = strerror_r(err, ebuf, sizeof(ebuf));
	snprintf(buf, sizeof(buf), "%s: %s (errno %d)", what, es, err);
	c = (*env)->FindClass(env, JW_ERRNO_EXCEPTION);
	if (c == NULL) {
		(*env)->ExceptionClear(env);
		jw_throw_msg(env, "java/io/IOException", buf);
		return;
	}
	ctor = (*env)->GetMethodID(env, c, "<init>", "(Ljava/lang/String;I)V");
	if (ctor == NULL) {
		(*env)->ExceptionClear(env);
		(*env)->DeleteLocalRef(env, c);
		jw_throw_msg(env, "java/io/IOException", buf);
		return;
	}
	msg = (*env)->NewStringUTF(env, buf);
	if (msg == NULL) {
		(*env)->DeleteLocalRef(env, c); /* OutOfMemoryError is pending */
		return;
	}
	ex = (*env)->NewObject(env, c, ctor, msg, (jint)err);
	if (ex != NULL) {
		if ((*env)->Throw(env, (jthrowable)ex) != 0 && !(*env)->ExceptionCheck(env))
			jw_throw_msg(env, "java/io/IOException", buf);
		(*env)->DeleteLocalRef(env, ex);
	} /* else: the constructor's exception (e.g. OutOfMemoryError) is pending */
	(*env)->DeleteLocalRef(env, msg);
	(*env)->DeleteLocalRef(env, c);
}

struct jw_cm_rec *jw_rec_attach(struct rdma_cm_id *id)
{
	struct jw_cm_rec *rec = calloc(1, sizeof(*rec));

	if (rec == NULL)
		return NULL;
	rec->owner = id;
	rec->event = -1;
	id->context = rec;
	return rec;
}

void jw_rec_release(struct rdma_cm_id *id)
{
	struct jw_cm_rec *rec;

	pthread_mutex_lock(&jw_cm_lock);
	rec = id->context;
	if (rec != NULL && rec->owner == id) {
		id->context = NULL;
		free(rec);
	}
	pthread_mutex_unlock(&jw_cm_lock);
}
