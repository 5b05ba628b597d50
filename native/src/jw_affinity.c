/* jwarp libdisni: com.ibm.disni.util.NativeAffinity (CPU mask of the calling thread). */
#include <sched.h>
#include <string.h>
#include <jni.h>

#define NA(name) Java_com_ibm_disni_util_NativeAffinity__1##name

JNIEXPORT void JNICALL NA(setAffinity)(JNIEnv *env, jclass cls, jlong mask)
{
	cpu_set_t set;
	int cpu;

	(void)env;
	(void)cls;
	CPU_ZERO(&set);
	for (cpu = 0; cpu < 64; cpu++)
		if (((unsigned long long)mask >> cpu) & 1ULL)
			CPU_SET(cpu, &set);
	/* An empty or impossible mask leaves the thread where it is (the Java side is void). */
	if (CPU_COUNT(&set) > 0)
		(void)sched_setaffinity(0, sizeof(set), &set);
}

JNIEXPORT jlong JNICALL NA(getAffinity)(JNIEnv *env, jclass cls)
{
	cpu_set_t set;
	unsigned long long mask = 0;
	int cpu;

	(void)env;
	(void)cls;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (cpu = 0; cpu < 64; cpu++)
		if (CPU_ISSET(cpu, &set))
			mask |= 1ULL << cpu;
	return (jlong)mask;
}
