/*
 * siw_peer: the jwarp interop suite's kernel-RDMA peer (rdma_cm + verbs), used inside the
 * scripts/siw-guest guest against the pure-Java iWARP stack (RFC 5040/5041/5044/6581).
 *
 *   siw_peer server -a ADDR -p PORT [options]   listen, accept (or reject) one connection
 *   siw_peer client -a ADDR -p PORT [options]   connect to ADDR:PORT
 *
 * Options:
 *   -s SCRIPT   what to do once connected: "basic" (default), "idle", "none"
 *   -r N        responder_resources (IRD) for rdma_connect/rdma_accept; server default: the event's
 *   -i N        initiator_depth (ORD); server default: the event's
 *   -d HEX      private data to send with rdma_connect/rdma_accept (ULP data, <= 251 bytes)
 *   -j HEX      server: reject the request with this private data instead of accepting
 *   -n BYTES    size of each data area (default 8192)
 *   -W          "basic": wait for the peer's INFO before sending ours (for peers that can post
 *               receive buffers only once connected)
 *   -B          "basic": first exchange one Send of N bytes each way (bulk, verified), see below
 *   -t SECS     give up after SECS (default 60)
 *
 * Every line it prints starts with "siw_peer: " and is key=value, for the Java tests to parse.
 * Exit status: 0 when the script passed (for "idle": the connection ended by disconnect or a
 * completion error), 1 on any failure, 2 on usage errors, 3 on timeout.
 *
 * Script "basic" (the Java side runs the mirror image, see SiwInteropIT):
 *   own buffer = 4 areas of N bytes: [0] read area (pattern 1 on this side, 3 on the Java side),
 *   [1] write area (the peer writes pattern 2 / 4 here), [2] read sink, [3] write source.
 *   1. post receives; Send INFO{rkey, addr, len}
 *   2. wait for the peer's INFO; RDMA Read its read area, verify pattern 3
 *   3. RDMA Write pattern 4 into the peer's write area, then Send WROTE
 *   4. wait for CHECK (the peer wrote pattern 2 before it); verify the own write area
 *   5. Send RESULT{status}; wait for the peer's RESULT; disconnect
 * With -B the buffer has 2 more areas, [4] bulk sink and [5] bulk source (pattern 5 on this side,
 * 6 on the Java side), and a receive of N bytes into [4] is posted before the message receives: the
 * peer's first Send is the bulk one. Step 0 (before INFO): Send [5] and wait for the peer's bulk
 * Send (with -W the other way round), verify pattern 6, print check=send_from_peer.
 * Script "idle": post receives, Send INFO, then report every completion and CM event until the
 * connection dies (used for the TERM cases). Script "none": only connection setup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MSG_LEN 32
#define NUM_RECV 8
#define MAGIC 0x4a574950u /* "JWIP" */

enum msg_type { MSG_INFO = 1, MSG_WROTE = 2, MSG_CHECK = 3, MSG_RESULT = 4 };
enum { WR_SEND = 1, WR_READ = 2, WR_WRITE = 3, WR_BULK_SEND = 5, WR_BULK_RECV = 60, WR_RECV_BASE = 100 };

static struct {
    int server;
    const char *addr;
    const char *port;
    const char *script;
    int resp_res, init_depth; /* -1: default */
    uint8_t pdata[256];
    int pdata_len;
    uint8_t reject_pdata[256];
    int reject_len, reject;
    size_t area;
    int timeout;
    int wait_first;
    int bulk;
} opt = { .script = "basic", .resp_res = -1, .init_depth = -1, .pdata_len = -1, .area = 8192, .timeout = 60 };

static struct rdma_event_channel *ech;
static struct rdma_cm_id *listen_id, *id;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr, *msg_mr;
static uint8_t *buf, *msgs; /* msgs: NUM_RECV receive slots + 1 send slot */
static time_t deadline;
static int disconnected, wc_errors;
static int bulk_got;
static uint32_t bulk_len;

/* received messages, in arrival order */
static uint8_t inbox[64][MSG_LEN];
static int inbox_n, inbox_read;
static int wr_done[8];

static void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("siw_peer: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    fflush(stdout);
    va_end(ap);
}

static void die(const char *what, int err)
{
    out("error=%s errno=%d (%s)", what, err, strerror(err));
    out("result=FAIL");
    exit(1);
}

#define CHECK_RC(call) do { int rc_ = (call); if (rc_) die(#call, rc_ < 0 ? errno : rc_); } while (0)
#define CHECK_PTR(p, call) do { if (!((p) = (call))) die(#call, errno); } while (0)

static void check_deadline(void)
{
    if (time(NULL) > deadline) {
        out("error=timeout after %d s", opt.timeout);
        out("result=TIMEOUT");
        exit(3);
    }
}

static int parse_hex(const char *s, uint8_t *dst, int max)
{
    size_t n = strlen(s);
    if (n % 2 || (int)(n / 2) > max) {
        fprintf(stderr, "siw_peer: bad hex (even length, at most %d bytes): %s\n", max, s);
        exit(2);
    }
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) {
            fprintf(stderr, "siw_peer: bad hex: %s\n", s);
            exit(2);
        }
        dst[i] = (uint8_t)v;
    }
    return (int)(n / 2);
}

static void hex(char *dst, const void *src, int len)
{
    const uint8_t *p = src;
    for (int i = 0; i < len; i++)
        sprintf(dst + 2 * i, "%02x", p[i]);
    dst[2 * len] = 0;
}

static uint8_t pattern(int k, size_t i)
{
    return (uint8_t)(i * 31u + (unsigned)k * 17u + 7u);
}

static void fill(uint8_t *p, int k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(k, i);
}

static long verify(const uint8_t *p, int k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern(k, i))
            return (long)i;
    return -1;
}

static void put32(uint8_t *p, uint32_t v) { v = htonl(v); memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return ntohl(v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)(v >> 32)); put32(p + 4, (uint32_t)v); }
static uint64_t get64(const uint8_t *p) { return ((uint64_t)get32(p) << 32) | get32(p + 4); }

static void print_conn_event(struct rdma_cm_event *ev)
{
    char pd_hex[2 * 256 + 1];
    const struct rdma_conn_param *c = &ev->param.conn;
    int len = c->private_data ? c->private_data_len : 0;
    hex(pd_hex, c->private_data, len);
    out("event=%s status=%d private_data_len=%d private_data=%s responder_resources=%u initiator_depth=%u",
        rdma_event_str(ev->event), ev->status, len, pd_hex, c->responder_resources, c->initiator_depth);
}

/* Waits for the next CM event (blocking with the deadline). */
static struct rdma_cm_event *next_event(void)
{
    struct rdma_cm_event *ev;
    for (;;) {
        struct pollfd pfd = { .fd = ech->fd, .events = POLLIN };
        int r = poll(&pfd, 1, 100);
        if (r < 0 && errno != EINTR)
            die("poll", errno);
        if (r > 0) {
            CHECK_RC(rdma_get_cm_event(ech, &ev));
            return ev;
        }
        check_deadline();
    }
}

static struct rdma_cm_event *expect_event(enum rdma_cm_event_type type)
{
    struct rdma_cm_event *ev = next_event();
    if (ev->event != type) {
        print_conn_event(ev);
        out("error=expected %s, got %s", rdma_event_str(type), rdma_event_str(ev->event));
        out("result=FAIL");
        exit(1);
    }
    return ev;
}

static void post_recv(int slot)
{
    struct ibv_sge sge = { .addr = (uintptr_t)(msgs + slot * MSG_LEN), .length = MSG_LEN, .lkey = msg_mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = WR_RECV_BASE + slot, .sg_list = &sge, .num_sge = 1 }, *bad;
    CHECK_RC(ibv_post_recv(id->qp, &wr, &bad));
}

static void setup_resources(struct ibv_context *verbs)
{
    struct ibv_qp_init_attr qa;
    size_t len = (opt.bulk ? 6 : 4) * opt.area;
    CHECK_PTR(pd, ibv_alloc_pd(verbs));
    CHECK_PTR(cq, ibv_create_cq(verbs, 64, NULL, NULL, 0));
    CHECK_PTR(buf, calloc(1, len));
    CHECK_PTR(msgs, calloc(NUM_RECV + 1, MSG_LEN));
    CHECK_PTR(mr, ibv_reg_mr(pd, buf, len,
                             IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE));
    CHECK_PTR(msg_mr, ibv_reg_mr(pd, msgs, (NUM_RECV + 1) * MSG_LEN, IBV_ACCESS_LOCAL_WRITE));
    fill(buf, 1, opt.area);
    fill(buf + 3 * opt.area, 4, opt.area);
    if (opt.bulk)
        fill(buf + 5 * opt.area, 5, opt.area);
    memset(&qa, 0, sizeof qa);
    qa.send_cq = qa.recv_cq = cq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = 16;
    qa.cap.max_recv_wr = NUM_RECV + 1;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    CHECK_RC(rdma_create_qp(id, pd, &qa));
    if (opt.bulk) {
        struct ibv_sge sge = { .addr = (uintptr_t)(buf + 4 * opt.area), .length = (uint32_t)opt.area, .lkey = mr->lkey };
        struct ibv_recv_wr wr = { .wr_id = WR_BULK_RECV, .sg_list = &sge, .num_sge = 1 }, *bad;
        CHECK_RC(ibv_post_recv(id->qp, &wr, &bad));
    }
    for (int i = 0; i < NUM_RECV; i++)
        post_recv(i);
    out("mr rkey=0x%08x addr=0x%llx area=%zu", mr->rkey, (unsigned long long)(uintptr_t)buf, opt.area);
}

static void fill_conn_param(struct rdma_conn_param *p, int resp_res, int init_depth)
{
    memset(p, 0, sizeof *p);
    p->responder_resources = (uint8_t)resp_res;
    p->initiator_depth = (uint8_t)init_depth;
    p->retry_count = 7;
    p->rnr_retry_count = 7;
    if (opt.pdata_len > 0) {
        p->private_data = opt.pdata;
        p->private_data_len = (uint8_t)opt.pdata_len;
    }
}

/* Polls the CQ and the CM channel once; records completions and messages. */
static void progress(void)
{
    struct ibv_wc wc[8];
    int n = ibv_poll_cq(cq, 8, wc);
    if (n < 0)
        die("ibv_poll_cq", errno);
    for (int i = 0; i < n; i++) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            wc_errors++;
            out("wc wr_id=%llu opcode=%d status=%d status_str=%s vendor_err=0x%x", (unsigned long long)wc[i].wr_id,
                wc[i].opcode, wc[i].status, ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
            continue;
        }
        if (wc[i].wr_id == WR_BULK_RECV) {
            out("wc opcode=RECV status=success byte_len=%u bulk=1", wc[i].byte_len);
            bulk_len = wc[i].byte_len;
            bulk_got = 1;
        } else if (wc[i].wr_id >= WR_RECV_BASE) {
            int slot = (int)(wc[i].wr_id - WR_RECV_BASE);
            uint8_t *m = msgs + slot * MSG_LEN;
            out("wc opcode=RECV status=success byte_len=%u type=%u", wc[i].byte_len, get32(m + 4));
            if (wc[i].byte_len != MSG_LEN || get32(m) != MAGIC) {
                char h[2 * MSG_LEN + 1];
                hex(h, m, MSG_LEN);
                out("error=unexpected message len=%u bytes=%s", wc[i].byte_len, h);
                out("result=FAIL");
                exit(1);
            }
            if (inbox_n < 64)
                memcpy(inbox[inbox_n++], m, MSG_LEN);
            if (!disconnected)
                post_recv(slot);
        } else {
            out("wc wr_id=%llu opcode=%s status=success byte_len=%u", (unsigned long long)wc[i].wr_id,
                wc[i].opcode == IBV_WC_SEND ? "SEND" : wc[i].opcode == IBV_WC_RDMA_READ ? "RDMA_READ"
                : wc[i].opcode == IBV_WC_RDMA_WRITE ? "RDMA_WRITE" : "OTHER", wc[i].byte_len);
            if (wc[i].wr_id < 8)
                wr_done[wc[i].wr_id] = 1;
        }
    }
    struct pollfd pfd = { .fd = ech->fd, .events = POLLIN };
    if (poll(&pfd, 1, 0) > 0) {
        struct rdma_cm_event *ev;
        CHECK_RC(rdma_get_cm_event(ech, &ev));
        print_conn_event(ev);
        if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
            disconnected = 1;
        CHECK_RC(rdma_ack_cm_event(ev));
    }
    if (n == 0)
        usleep(200);
}

static void fail_if_dead(const char *waiting)
{
    if (disconnected || wc_errors) {
        out("error=connection died while waiting for %s (disconnected=%d wc_errors=%d)", waiting, disconnected,
            wc_errors);
        out("result=FAIL");
        exit(1);
    }
}

static void wait_wr(int wr)
{
    while (!wr_done[wr]) {
        fail_if_dead("a work completion");
        check_deadline();
        progress();
    }
    wr_done[wr] = 0;
}

static const uint8_t *wait_msg(uint32_t type)
{
    while (inbox_read == inbox_n) {
        fail_if_dead("a message");
        check_deadline();
        progress();
    }
    const uint8_t *m = inbox[inbox_read++];
    if (get32(m + 4) != type) {
        out("error=expected message type %u, got %u", type, get32(m + 4));
        out("result=FAIL");
        exit(1);
    }
    return m;
}

static void send_msg(uint32_t type, uint32_t status)
{
    uint8_t *m = msgs + NUM_RECV * MSG_LEN;
    memset(m, 0, MSG_LEN);
    put32(m, MAGIC);
    put32(m + 4, type);
    put32(m + 8, mr->rkey);
    put32(m + 12, (uint32_t)opt.area);
    put64(m + 16, (uint64_t)(uintptr_t)buf);
    put32(m + 24, status);
    struct ibv_sge sge = { .addr = (uintptr_t)m, .length = MSG_LEN, .lkey = msg_mr->lkey };
    struct ibv_send_wr wr = { .wr_id = WR_SEND, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                              .send_flags = IBV_SEND_SIGNALED }, *bad;
    CHECK_RC(ibv_post_send(id->qp, &wr, &bad));
    wait_wr(WR_SEND);
}

static void rdma_op(int wr_id, enum ibv_wr_opcode op, uint8_t *local, uint32_t rkey, uint64_t raddr)
{
    struct ibv_sge sge = { .addr = (uintptr_t)local, .length = (uint32_t)opt.area, .lkey = mr->lkey };
    struct ibv_send_wr wr = { .wr_id = (uint64_t)wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
                              .send_flags = IBV_SEND_SIGNALED }, *bad;
    wr.wr.rdma.rkey = rkey;
    wr.wr.rdma.remote_addr = raddr;
    CHECK_RC(ibv_post_send(id->qp, &wr, &bad));
    wait_wr(wr_id);
}

static void send_bulk(void)
{
    struct ibv_sge sge = { .addr = (uintptr_t)(buf + 5 * opt.area), .length = (uint32_t)opt.area, .lkey = mr->lkey };
    struct ibv_send_wr wr = { .wr_id = WR_BULK_SEND, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                              .send_flags = IBV_SEND_SIGNALED }, *bad;
    CHECK_RC(ibv_post_send(id->qp, &wr, &bad));
    wait_wr(WR_BULK_SEND);
}

/* -B: one Send of the area each way; returns 1 when the peer's data or length is wrong. */
static int bulk_exchange(void)
{
    if (!opt.wait_first)
        send_bulk();
    while (!bulk_got) {
        fail_if_dead("the peer's bulk Send");
        check_deadline();
        progress();
    }
    if (opt.wait_first)
        send_bulk();
    long bad = bulk_len == opt.area ? verify(buf + 4 * opt.area, 6, opt.area) : 0;
    out("check=send_from_peer bytes=%u %s first_bad=%ld", bulk_len, bad < 0 ? "ok" : "MISMATCH", bad);
    return bad >= 0;
}

static int script_basic(void)
{
    int failures = opt.bulk ? bulk_exchange() : 0;
    if (!opt.wait_first)
        send_msg(MSG_INFO, 0);
    const uint8_t *info = wait_msg(MSG_INFO);
    if (opt.wait_first)
        send_msg(MSG_INFO, 0);
    uint32_t prkey = get32(info + 8), plen = get32(info + 12);
    uint64_t paddr = get64(info + 16);
    out("peer_info rkey=0x%08x addr=0x%llx area=%u", prkey, (unsigned long long)paddr, plen);
    if (plen != opt.area) {
        out("error=peer area %u != %zu", plen, opt.area);
        return 1;
    }
    rdma_op(WR_READ, IBV_WR_RDMA_READ, buf + 2 * opt.area, prkey, paddr);
    long bad = verify(buf + 2 * opt.area, 3, opt.area);
    out("check=rdma_read_from_peer bytes=%zu %s first_bad=%ld", opt.area, bad < 0 ? "ok" : "MISMATCH", bad);
    failures += bad >= 0;
    rdma_op(WR_WRITE, IBV_WR_RDMA_WRITE, buf + 3 * opt.area, prkey, paddr + opt.area);
    send_msg(MSG_WROTE, 0);
    wait_msg(MSG_CHECK);
    bad = verify(buf + opt.area, 2, opt.area);
    out("check=rdma_write_from_peer bytes=%zu %s first_bad=%ld", opt.area, bad < 0 ? "ok" : "MISMATCH", bad);
    failures += bad >= 0;
    send_msg(MSG_RESULT, (uint32_t)failures);
    const uint8_t *res = wait_msg(MSG_RESULT);
    out("check=peer_result status=%u", get32(res + 24));
    failures += get32(res + 24) != 0;
    return failures;
}

static int script_idle(void)
{
    send_msg(MSG_INFO, 0);
    while (!disconnected && !wc_errors) {
        check_deadline();
        progress();
    }
    /* drain what is left: flushed receives, the DISCONNECTED event */
    time_t until = time(NULL) + 3;
    while (time(NULL) < until && !disconnected)
        progress();
    for (int i = 0; i < 200; i++)
        progress();
    out("idle_end disconnected=%d wc_errors=%d", disconnected, wc_errors);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: siw_peer server|client -a ADDR -p PORT [-s basic|idle|none] [-r IRD] [-i ORD]\n"
                    "                [-d HEX] [-j HEX] [-n BYTES] [-t SECS] [-W] [-B]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct rdma_cm_event *ev;
    struct rdma_conn_param cp;
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
    int c, rc;

    if (argc < 2)
        usage();
    if (!strcmp(argv[1], "server"))
        opt.server = 1;
    else if (strcmp(argv[1], "client"))
        usage();
    optind = 2;
    while ((c = getopt(argc, argv, "a:p:s:r:i:d:j:n:t:WB")) != -1) {
        switch (c) {
        case 'a': opt.addr = optarg; break;
        case 'p': opt.port = optarg; break;
        case 's': opt.script = optarg; break;
        case 'r': opt.resp_res = atoi(optarg); break;
        case 'i': opt.init_depth = atoi(optarg); break;
        case 'd': opt.pdata_len = parse_hex(optarg, opt.pdata, 251); break;
        case 'j': opt.reject_len = parse_hex(optarg, opt.reject_pdata, 251); opt.reject = 1; break;
        case 'n': opt.area = (size_t)atol(optarg); break;
        case 't': opt.timeout = atoi(optarg); break;
        case 'W': opt.wait_first = 1; break;
        case 'B': opt.bulk = 1; break;
        default: usage();
        }
    }
    if (!opt.addr || !opt.port || opt.area == 0 || opt.area > (1u << 24) ||
        (strcmp(opt.script, "basic") && strcmp(opt.script, "idle") && strcmp(opt.script, "none")))
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    deadline = time(NULL) + opt.timeout;
    rc = getaddrinfo(opt.addr, opt.port, &hints, &ai);
    if (rc) {
        out("error=getaddrinfo %s", gai_strerror(rc));
        out("result=FAIL");
        return 1;
    }
    CHECK_PTR(ech, rdma_create_event_channel());
    CHECK_RC(fcntl(ech->fd, F_SETFL, fcntl(ech->fd, F_GETFL) | O_NONBLOCK) < 0 ? -1 : 0);

    if (opt.server) {
        CHECK_RC(rdma_create_id(ech, &listen_id, NULL, RDMA_PS_TCP));
        CHECK_RC(rdma_bind_addr(listen_id, ai->ai_addr));
        CHECK_RC(rdma_listen(listen_id, 1));
        out("listening addr=%s port=%s device=%s", opt.addr, opt.port,
            listen_id->verbs ? ibv_get_device_name(listen_id->verbs->device) : "(any)");
        ev = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST);
        print_conn_event(ev);
        id = ev->id;
        int rr = opt.resp_res >= 0 ? opt.resp_res : ev->param.conn.responder_resources;
        int id_ = opt.init_depth >= 0 ? opt.init_depth : ev->param.conn.initiator_depth;
        CHECK_RC(rdma_ack_cm_event(ev));
        out("device=%s", ibv_get_device_name(id->verbs->device));
        if (opt.reject) {
            CHECK_RC(rdma_reject(id, opt.reject_len ? opt.reject_pdata : NULL, (uint8_t)opt.reject_len));
            out("rejected private_data_len=%d", opt.reject_len);
            usleep(500000);
            out("result=PASS");
            return 0;
        }
        setup_resources(id->verbs);
        fill_conn_param(&cp, rr, id_);
        CHECK_RC(rdma_accept(id, &cp));
        out("accepted responder_resources=%d initiator_depth=%d", rr, id_);
        ev = expect_event(RDMA_CM_EVENT_ESTABLISHED);
        print_conn_event(ev);
        CHECK_RC(rdma_ack_cm_event(ev));
    } else {
        CHECK_RC(rdma_create_id(ech, &id, NULL, RDMA_PS_TCP));
        CHECK_RC(rdma_resolve_addr(id, NULL, ai->ai_addr, 5000));
        ev = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED);
        CHECK_RC(rdma_ack_cm_event(ev));
        CHECK_RC(rdma_resolve_route(id, 5000));
        ev = expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED);
        CHECK_RC(rdma_ack_cm_event(ev));
        out("device=%s", ibv_get_device_name(id->verbs->device));
        setup_resources(id->verbs);
        fill_conn_param(&cp, opt.resp_res >= 0 ? opt.resp_res : 4, opt.init_depth >= 0 ? opt.init_depth : 4);
        CHECK_RC(rdma_connect(id, &cp));
        out("connecting responder_resources=%u initiator_depth=%u", cp.responder_resources, cp.initiator_depth);
        ev = next_event();
        print_conn_event(ev);
        if (ev->event != RDMA_CM_EVENT_ESTABLISHED) {
            int rejected = ev->event == RDMA_CM_EVENT_REJECTED;
            CHECK_RC(rdma_ack_cm_event(ev));
            out("result=%s", rejected ? "REJECTED" : "FAIL");
            return 1;
        }
        CHECK_RC(rdma_ack_cm_event(ev));
    }
    freeaddrinfo(ai);

    int failures = 0;
    if (!strcmp(opt.script, "basic"))
        failures = script_basic();
    else if (!strcmp(opt.script, "idle"))
        failures = script_idle();

    if (!disconnected) {
        rc = rdma_disconnect(id);
        if (rc)
            out("rdma_disconnect rc=%d errno=%d", rc, errno);
        time_t until = time(NULL) + 3;
        while (!disconnected && time(NULL) < until)
            progress();
    }
    rdma_destroy_qp(id);
    CHECK_RC(ibv_destroy_cq(cq));
    CHECK_RC(ibv_dereg_mr(mr));
    CHECK_RC(ibv_dereg_mr(msg_mr));
    CHECK_RC(ibv_dealloc_pd(pd));
    CHECK_RC(rdma_destroy_id(id));
    if (listen_id)
        CHECK_RC(rdma_destroy_id(listen_id));
    rdma_destroy_event_channel(ech);
    free(buf);
    free(msgs);
    out("result=%s failures=%d", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
