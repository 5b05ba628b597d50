/*
 * perftest-mark: an LD_PRELOAD library for perftest's latency tools in event mode (-e), so that
 * scripts/bench-insn's instruction windows hold perftest's measured loop and nothing else.
 *
 * perftest calibrates its cycle counter against gettimeofday() in a busy loop when it prints its
 * report, after the loop: hundreds of millions of instructions whose count follows the emulation
 * speed. With PERFTEST_MARK=client this library runs the insn-count marker (code at 0x13370000,
 * benchmarks/insn/insn-count.c) at the process's first ibv_get_cq_event() (the loop's first wait)
 * and at its first gettimeofday() (the report's calibration, after the loop). With
 * PERFTEST_MARK=server it runs no marker, and its first gettimeofday() first sleeps
 * PERFTEST_MARK_HOLD_MS (default 2000) so that the server's calibration starts after the client's
 * closing mark (the server leaves its loop slightly before the client does). Either role acts on
 * gettimeofday() only after its first ibv_get_cq_event(); a client that never calls it closes
 * its window when it exits. With PERFTEST_MARK_MAPS=FILE each role copies its /proc/self/maps to
 * FILE once its window is over (the client after its closing mark, the server after its hold), so
 * that scripts/bench-insn can say which library a window's user instructions ran in.
 *
 * Built by scripts/bench-insn: gcc -shared -fPIC -O2 -o perftest-mark.so perftest-mark.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>

struct ibv_comp_channel;
struct ibv_cq;

#define MARKER_VADDR 0x13370000UL

static int role; /* 1 client, 2 server, 0 off */
static int started, ended;
static void (*mark_fn)(void);

__attribute__((constructor)) static void init(void)
{
    const char *r = getenv("PERFTEST_MARK");
    if (r == NULL) {
        return;
    }
    role = strcmp(r, "client") == 0 ? 1 : strcmp(r, "server") == 0 ? 2 : 0;
    if (role != 1) {
        return;
    }
    void *p = mmap((void *) MARKER_VADDR, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *) MARKER_VADDR) {
        abort(); /* no marks would be worse than no run */
    }
    *(unsigned char *) p = 0xC3; /* ret */
    mprotect(p, 4096, PROT_READ | PROT_EXEC);
    mark_fn = (void (*)(void)) p;
}

/* PERFTEST_MARK_MAPS: a copy of this process's mappings, taken outside the window */
static void copy_maps(void)
{
    const char *path = getenv("PERFTEST_MARK_MAPS");
    if (path == NULL) {
        return;
    }
    int in = open("/proc/self/maps", O_RDONLY);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) {
        abort(); /* asked for and missing: the attribution would be silently wrong */
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0) {
        if (write(out, buf, (size_t) n) != n) {
            abort();
        }
    }
    if (n < 0 || close(in) != 0 || close(out) != 0) {
        abort();
    }
}

/* a client that left its loop without calling gettimeofday still closes its window */
__attribute__((destructor)) static void fini(void)
{
    if (role == 1 && started && !ended) {
        ended = 1;
        mark_fn();
        copy_maps();
    }
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
    static int (*real)(struct ibv_comp_channel *, struct ibv_cq **, void **);
    if (real == NULL) {
        real = (int (*)(struct ibv_comp_channel *, struct ibv_cq **, void **)) dlsym(RTLD_NEXT, "ibv_get_cq_event");
    }
    if (role != 0 && !started) {
        started = 1;
        if (role == 1) {
            mark_fn();
        }
    }
    return real(channel, cq, cq_context);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    static int (*real)(struct timeval *restrict, void *restrict);
    if (real == NULL) {
        real = (int (*)(struct timeval *restrict, void *restrict)) dlsym(RTLD_NEXT, "gettimeofday");
    }
    if (!ended && started) { /* a call before the loop's first wait is not the report's */
        ended = 1;
        if (role == 1) {
            mark_fn();
        } else if (role == 2) {
            const char *h = getenv("PERFTEST_MARK_HOLD_MS");
            long ms = h ? atol(h) : 2000;
            struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
            nanosleep(&ts, NULL);
        }
        copy_maps();
    }
    return real(tv, tz);
}
