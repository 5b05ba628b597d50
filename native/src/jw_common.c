/* jwarp libdisni: error helpers and the per-cm_id side record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jw_common.h"

pthread_mutex_t jw_cm_lock = PTHREAD_MUTEX_INITIALIZER;

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

void jw_throw_io(JNIEnv *env, const char *what, int err)
{
	char buf[256];
	char ebuf[128];
	const char *es;

	es = strerror_r(err, ebuf, sizeof(ebuf));
	snprintf(buf, sizeof(buf), "%s: %s (errno %d)", what, es, err);
	jw_throw_msg(env, "java/io/IOException", buf);
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
