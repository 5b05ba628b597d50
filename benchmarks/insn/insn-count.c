/*
 * insn-count: a qemu TCG plugin (qemu 7.x, plugin API version 1) that counts the guest
 * instructions every vCPU executes, split into user space (virtual address below the x86-64
 * canonical hole) and kernel, and writes the running totals whenever a marker program runs.
 *
 * The marker is a static program whose entry sits at MARKER_VADDR (benchmarks/insn/marker.S);
 * nothing else in the guest executes code there. Each time a translation block that starts at
 * that address executes, one line goes to the output file:
 *
 *     mark SEQ user U kernel K ns T
 *
 * U and K are the totals since the guest booted, summed over all vCPUs; T is the host's
 * CLOCK_MONOTONIC in nanoseconds (for scale only: the plugin slows the guest down). A script brackets the
 * part it measures with two markers and subtracts; two run lengths cancel the constant costs
 * (process start, connection setup, the markers' own fork and exec).
 *
 * Used by scripts/bench-insn (issue 28: instructions per operation, perftest against jwarp).
 * Built by that script: gcc -shared -fPIC -O2 -o insn-count.so insn-count.c
 * Loaded with: -plugin /path/insn-count.so,out=/path/file[,inline=on][,tbs=/path/file][,debug=on]
 * inline=on adds each block's count with an inline add instead of a callback (several times
 * faster), exact only when one host thread runs every vCPU (-accel tcg,thread=single).
 * tbs=FILE (needs inline=on) also counts user-space instructions per translation block start
 * address, and at each marker writes the blocks whose count moved since the previous marker:
 *
 *     mark SEQ
 *     VADDR COUNT        (hex address, instructions since the previous marker)
 *
 * so that a script can say which code (which process mapping, which function) a window's user
 * instructions ran in. Addresses are virtual, of whichever process ran them; the script maps them
 * through the measured processes' /proc/PID/maps.
 *
 * Only the few plugin API entry points used here are declared, from their documented
 * signatures; qemu resolves them in its own binary when it loads the plugin.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_cb_flags { CB_NO_REGS = 0 };

typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb)(unsigned int vcpu_index, void *userdata);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *userdata);

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb cb,
                                                 enum qemu_plugin_cb_flags flags, void *userdata);
enum qemu_plugin_op { INLINE_ADD_U64 = 0 };
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                                    void *ptr, uint64_t imm);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MARKER_VADDR 0x13370000ULL
#define MAX_VCPUS 64
#define KERNEL_BIT 1u

/* one cache line per vCPU: each vCPU thread adds to its own line only */
struct counts {
    uint64_t n[2]; /* [0] user, [1] kernel */
    char pad[64 - 2 * sizeof(uint64_t)];
};
static struct counts per_vcpu[MAX_VCPUS] __attribute__((aligned(64)));
static FILE *out;
static uint64_t marks;
static int debug;
static int inline_counts;

/* per block start address, user space only: an open-addressing table that never moves, so an
 * inline add can point into it; written only from the one vCPU thread (tbs needs inline=on) */
#define TB_BITS 22
#define TB_SLOTS (1u << TB_BITS)
struct tb_slot {
    uint64_t va;   /* 0 = free (no user code runs at address 0) */
    uint64_t n;    /* instructions run in blocks starting at va */
    uint64_t last; /* n at the previous marker */
};
static struct tb_slot *tb_table;
static uint64_t tb_used;
static struct tb_slot tb_overflow; /* blocks that found the table too full (va stays 0) */
static FILE *tb_out;

static struct tb_slot *tb_slot_of(uint64_t va)
{
    uint64_t i = (va * 0x9E3779B97F4A7C15ULL) >> (64 - TB_BITS);
    for (;;) {
        struct tb_slot *s = &tb_table[i];
        if (s->va == va) {
            return s;
        }
        if (s->va == 0) {
            if (tb_used >= TB_SLOTS / 4 * 3) {
                return &tb_overflow;
            }
            tb_used++;
            s->va = va;
            return s;
        }
        i = (i + 1) & (TB_SLOTS - 1);
    }
}

static void tb_dump(uint64_t seq)
{
    fprintf(tb_out, "mark %" PRIu64 "\n", seq);
    for (uint64_t i = 0; i < TB_SLOTS; i++) {
        struct tb_slot *s = &tb_table[i];
        if (s->n != s->last) {
            fprintf(tb_out, "%" PRIx64 " %" PRIu64 "\n", s->va, s->n - s->last);
            s->last = s->n;
        }
    }
    if (tb_overflow.n != tb_overflow.last) {
        fprintf(tb_out, "0 %" PRIu64 "\n", tb_overflow.n - tb_overflow.last);
        tb_overflow.last = tb_overflow.n;
    }
    fflush(tb_out);
}

static void sum(uint64_t *user, uint64_t *kernel)
{
    *user = 0;
    *kernel = 0;
    for (int i = 0; i < MAX_VCPUS; i++) {
        *user += __atomic_load_n(&per_vcpu[i].n[0], __ATOMIC_RELAXED);
        *kernel += __atomic_load_n(&per_vcpu[i].n[1], __ATOMIC_RELAXED);
    }
}

static void on_tb(unsigned int vcpu, void *udata)
{
    uintptr_t u = (uintptr_t) udata;
    struct counts *c = &per_vcpu[vcpu % MAX_VCPUS];
    /* a plain add: only this vCPU's thread writes its line */
    __atomic_store_n(&c->n[u & KERNEL_BIT], c->n[u & KERNEL_BIT] + (u >> 1), __ATOMIC_RELAXED);
}

static void on_marker(unsigned int vcpu, void *udata)
{
    (void) vcpu;
    (void) udata;
    uint64_t user, kernel;
    sum(&user, &kernel);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    uint64_t seq = __atomic_add_fetch(&marks, 1, __ATOMIC_SEQ_CST);
    fprintf(out, "mark %" PRIu64 " user %" PRIu64 " kernel %" PRIu64 " ns %" PRIu64 "\n", seq, user, kernel, ns);
    fflush(out);
    if (tb_out != NULL) {
        tb_dump(seq);
    }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void) id;
    uint64_t va = qemu_plugin_tb_vaddr(tb);
    uintptr_t n = qemu_plugin_tb_n_insns(tb);
    uintptr_t kernel = va >= 0xffff800000000000ULL ? KERNEL_BIT : 0;
    if (inline_counts) {
        /* one host thread runs every vCPU (-accel tcg,thread=single): a plain add is exact */
        qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &per_vcpu[0].n[kernel], n);
        if (tb_out != NULL && !kernel) {
            qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &tb_slot_of(va)->n, n);
        }
    } else {
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb, CB_NO_REGS, (void *) ((n << 1) | kernel));
    }
    if (debug && va >= MARKER_VADDR - 0x10000 && va < MARKER_VADDR + 0x10000) {
        fprintf(stderr, "insn-count: translating a block at 0x%" PRIx64 " (%zu instructions)\n", va, (size_t) n);
    }
    if (va == MARKER_VADDR) {
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_marker, CB_NO_REGS, NULL);
    }
}

static void on_exit_(qemu_plugin_id_t id, void *udata)
{
    (void) id;
    (void) udata;
    uint64_t user, kernel;
    sum(&user, &kernel);
    fprintf(out, "exit user %" PRIu64 " kernel %" PRIu64 "\n", user, kernel);
    fclose(out);
    if (tb_out != NULL) {
        fprintf(tb_out, "exit blocks %" PRIu64 " overflow %" PRIu64 "\n", tb_used, tb_overflow.n);
        fclose(tb_out);
    }
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void) info;
    const char *path = NULL, *tb_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            path = argv[i] + 4;
        } else if (strncmp(argv[i], "tbs=", 4) == 0) {
            tb_path = argv[i] + 4;
        } else if (strcmp(argv[i], "inline=on") == 0) {
            inline_counts = 1;
        } else if (strcmp(argv[i], "debug=on") == 0) {
            debug = 1;
        }
    }
    if (path == NULL) {
        fprintf(stderr, "insn-count: needs out=FILE\n");
        return -1;
    }
    out = fopen(path, "w");
    if (out == NULL) {
        perror("insn-count: out");
        return -1;
    }
    if (tb_path != NULL) {
        if (!inline_counts) {
            fprintf(stderr, "insn-count: tbs= needs inline=on (one vCPU thread writes the table)\n");
            return -1;
        }
        tb_table = calloc(TB_SLOTS, sizeof *tb_table);
        tb_out = fopen(tb_path, "w");
        if (tb_table == NULL || tb_out == NULL) {
            perror("insn-count: tbs");
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
    return 0;
}
