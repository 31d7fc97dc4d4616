/* latency.c - an open-loop load at a fixed request rate, for the latency a
 * service's clients see at a steady load below its capacity (bench/latency.sh).
 *
 * Request i is due at start + i / RATE and goes out on an idle connection
 * (one request in flight per connection, as CONNS independent clients; no
 * pipelining, whose batching would be the server's write policy, not its
 * latency). Its latency is the time from when it was due to when its
 * response was complete: a request that waits for an idle connection, or
 * for a stalled server, counts that wait (no coordinated omission, as in
 * wrk2). Times: CLOCK_MONOTONIC. The client spins on its own CPU
 * (epoll_wait with timeout 0) so that sends leave on time; pin it away from
 * the servers.
 *
 * With two ports, each server gets the whole load at once, request i of
 * both due at the same time (sent in alternating order): both see the same
 * client, clock and stalls, so the ratio of their latencies is what one
 * server does differently (bench/latency.sh runs an A/A pair for the floor).
 *
 * Protocols, each a GET of one small value set up before the run:
 *   http      GET PATH, HTTP/1.1 keep-alive (a new connection after a response
 *             with "Connection: close", or when the server closes an idle
 *             one); the response needs Content-Length
 *   memcache  text protocol "get d9k" of a 32-byte value
 *   redis     RESP GET d9k of a 32-byte value
 *
 * usage: latency PROTO PORT[,PORT] RATE SECONDS CONNS [PATH]
 *   RATE requests per second to each server (1-10,000,000); SECONDS of load
 *   (1-3600), of which the first 10% (at least 0.5 s) warm up and are not
 *   counted; CONNS connections to each 127.0.0.1:PORT (1-1024).
 * Prints one line per port:
 *   port P sent N late N p50_us X p99_us X p999_us X max_us X
 * over the requests due after the warm-up; "late" counts requests sent more
 * than 1 ms after they were due (every connection was busy, or the client
 * fell behind: at a rate the server sustains, few). Exit status 1 with a
 * message on stderr when a connection fails, a response cannot be parsed,
 * or a request is still unanswered 2 s after the last one was due.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_CONNS 1024
#define VALUE "0123456789abcdef0123456789abcdef"

enum proto { HTTP, MEMCACHE, REDIS };

struct conn {
    int fd;
    uint64_t due; /* of the request in flight; 0: idle */
    char in[262144]; /* one response: nginx sends 64 KiB files */
    size_t len;
};

struct target {
    int port;
    struct conn *conns;
    int *idle, nidle; /* stack of idle connections */
    uint64_t sent, late, nlat;
    uint64_t *lat; /* ns, one per request due after the warm-up */
};

static struct target tg[2];
static int ntg;
static enum proto proto;
static char req[512];
static size_t req_len;

static void die(const char *what)
{
    fprintf(stderr, "latency: %s\n", what);
    exit(1);
}

static int dial(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        die("cannot connect to 127.0.0.1");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0)
            die("write failed");
        p += w;
        n -= (size_t)w;
    }
}

/* Length of the first complete response in p[0..n), 0 when incomplete, -1
 * when it cannot be parsed. */
static long response_len(const char *p, size_t n, int *closing)
{
    const char *eol = memmem(p, n, "\r\n", 2);
    if (!eol)
        return 0;
    size_t line = (size_t)(eol - p) + 2;
    switch (proto) {
    case HTTP: {
        const char *end = memmem(p, n, "\r\n\r\n", 4);
        if (!end)
            return 0;
        size_t head = (size_t)(end - p) + 4;
        long body = -1;
        for (const char *h = memmem(p, head, "\r\n", 2); h && h + 2 < end; h = memmem(h + 2, head - (size_t)(h + 2 - p), "\r\n", 2))
            if (strncasecmp(h + 2, "content-length:", 15) == 0)
                body = strtol(h + 17, NULL, 10);
            else if (strncasecmp(h + 2, "connection: close", 17) == 0)
                *closing = 1;
        if (strncmp(p, "HTTP/1.1 200", 12) != 0 || body < 0)
            return -1;
        return head + (size_t)body <= n ? (long)(head + (size_t)body) : 0;
    }
    case MEMCACHE:
        if (line == 5 && memcmp(p, "END\r\n", 5) == 0)
            return -1; /* the value is gone: not the request measured */
        if (strncmp(p, "VALUE ", 6) != 0)
            return -1;
        {
            const char *sp = memrchr(p, ' ', line);
            size_t total = line + strtoul(sp + 1, NULL, 10) + 2 + 5;
            return total <= n ? (long)total : 0;
        }
    case REDIS:
        if (p[0] != '$' || p[1] == '-')
            return -1;
        {
            size_t total = line + strtoul(p + 1, NULL, 10) + 2;
            return total <= n ? (long)total : 0;
        }
    }
    return -1;
}

/* One synchronous request and its reply, before the run: sets the value. */
static void setup(int fd, const char *cmd, const char *reply)
{
    char buf[256];
    size_t n = 0, want = strlen(reply);
    send_all(fd, cmd, strlen(cmd));
    while (n < want) {
        ssize_t r = read(fd, buf + n, sizeof(buf) - n);
        if (r <= 0)
            die("setup: no reply");
        n += (size_t)r;
    }
    if (memcmp(buf, reply, want) != 0)
        die("setup: unexpected reply");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double q)
{
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return (double)v[i] / 1000.0;
}

/* Watches connection ci of t in ep, keyed by the target's index << 16 | ci. */
static void watch(int ep, struct target *t, int ci)
{
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)((t - tg) << 16 | ci)};
    epoll_ctl(ep, EPOLL_CTL_ADD, t->conns[ci].fd, &e);
}

/* Connects CONNS connections to t's port, all idle. */
static void open_target(struct target *t, int ep, int nconn, uint64_t total)
{
    t->conns = calloc((size_t)nconn, sizeof(*t->conns));
    t->idle = calloc((size_t)nconn, sizeof(*t->idle));
    t->lat = malloc(total * sizeof(*t->lat));
    if (!t->conns || !t->idle || !t->lat)
        die("out of memory");
    for (int c = 0; c < nconn; c++) {
        t->conns[c].fd = dial(t->port);
        if (c == 0 && proto == MEMCACHE)
            setup(t->conns[c].fd, "set d9k 0 0 32\r\n" VALUE "\r\n", "STORED\r\n");
        if (c == 0 && proto == REDIS)
            setup(t->conns[c].fd, "*3\r\n$3\r\nSET\r\n$3\r\nd9k\r\n$32\r\n" VALUE "\r\n", "+OK\r\n");
        watch(ep, t, c);
        t->idle[t->nidle++] = nconn - 1 - c;
    }
}

/* Sends t's requests that are due, as long as it has an idle connection. */
static void send_due(struct target *t, uint64_t now, uint64_t t0, uint64_t interval, uint64_t total, uint64_t warm_end)
{
    while (t->sent < total && t0 + t->sent * interval <= now && t->nidle) {
        uint64_t due = t0 + t->sent * interval;
        struct conn *c = &t->conns[t->idle[--t->nidle]];
        c->due = due;
        send_all(c->fd, req, req_len);
        if (due >= warm_end && now - due > 1000000)
            t->late++;
        t->sent++;
    }
}

/* Replaces connection ci of t, which the server closed, by a new one. */
static void reconnect(struct target *t, int ci, int ep)
{
    struct conn *c = &t->conns[ci];
    close(c->fd);
    c->fd = dial(t->port);
    watch(ep, t, ci);
}

/* Reads what connection ci of t has; a complete response frees it. */
static void receive(struct target *t, int ci, int ep, uint64_t warm_end)
{
    struct conn *c = &t->conns[ci];
    ssize_t r = read(c->fd, c->in + c->len, sizeof(c->in) - c->len);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r == 0 && !c->due && !c->len) { /* closed while idle (node: keepAliveTimeout) */
        reconnect(t, ci, ep);
        return;
    }
    if (r <= 0)
        die("connection closed by the server with a request in flight");
    c->len += (size_t)r;
    int closing = 0;
    long m = response_len(c->in, c->len, &closing);
    if (m < 0)
        die("a response that cannot be parsed (not 200 / not the value set)");
    if (m == 0 && c->len == sizeof(c->in))
        die("a response over 256 KiB");
    if (m == 0)
        return;
    if (!c->due || (size_t)m != c->len)
        die("a response to no request");
    if (c->due >= warm_end)
        t->lat[t->nlat++] = now_ns() - c->due;
    c->due = 0;
    c->len = 0;
    if (closing) /* the server closes after this response (nginx: keepalive_requests) */
        reconnect(t, ci, ep);
    t->idle[t->nidle++] = ci;
}

int main(int argc, char **argv)
{
    if (argc < 6)
        die("usage: latency http|memcache|redis PORT[,PORT] RATE SECONDS CONNS [PATH]");
    proto = strcmp(argv[1], "http") == 0 ? HTTP : strcmp(argv[1], "memcache") == 0 ? MEMCACHE
                                              : strcmp(argv[1], "redis") == 0       ? REDIS
                                                                                    : (die("unknown protocol"), HTTP);
    char *comma = strchr(argv[2], ',');
    tg[0].port = atoi(argv[2]);
    tg[1].port = comma ? atoi(comma + 1) : 0;
    ntg = comma ? 2 : 1;
    double rate = atof(argv[3]), secs = atof(argv[4]);
    int nconn = atoi(argv[5]);
    for (int t = 0; t < ntg; t++)
        if (tg[t].port <= 0 || tg[t].port > 65535)
            die("PORT out of range");
    if (!(rate >= 1 && rate <= 1e7) || !(secs >= 1 && secs <= 3600) || nconn < 1 || nconn > MAX_CONNS)
        die("RATE, SECONDS or CONNS out of range");
    if (proto == HTTP)
        req_len = (size_t)snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", argc > 6 ? argv[6] : "/");
    else if (proto == MEMCACHE)
        req_len = (size_t)snprintf(req, sizeof(req), "get d9k\r\n");
    else
        req_len = (size_t)snprintf(req, sizeof(req), "*2\r\n$3\r\nGET\r\n$3\r\nd9k\r\n");

    uint64_t total = (uint64_t)(rate * secs);
    int ep = epoll_create1(0);
    for (int t = 0; t < ntg; t++)
        open_target(&tg[t], ep, nconn, total);
    double warm_s = secs * 0.1 < 0.5 ? 0.5 : secs * 0.1;
    uint64_t interval = (uint64_t)(1e9 / rate), t0 = now_ns() + 1000000;
    uint64_t warm_end = t0 + (uint64_t)(warm_s * 1e9);
    uint64_t last_due = t0 + (total - 1) * interval;
    struct epoll_event evs[64];
    for (unsigned turn = 0;; turn++) {
        uint64_t now = now_ns();
        int done = 1;
        for (int k = 0; k < ntg; k++) { /* alternate which server goes first */
            struct target *t = &tg[(k + (int)(turn & 1)) % ntg];
            send_due(t, now, t0, interval, total, warm_end);
            done &= t->sent == total && t->nidle == nconn;
        }
        if (done)
            break;
        if (now > last_due + 2000000000u)
            die("requests unanswered 2 s after the last one was due");
        int n = epoll_wait(ep, evs, 64, 0);
        for (int i = 0; i < n; i++)
            receive(&tg[evs[i].data.u32 >> 16], (int)(evs[i].data.u32 & 0xffff), ep, warm_end);
    }
    for (int k = 0; k < ntg; k++) {
        struct target *t = &tg[k];
        if (!t->nlat)
            die("no request after the warm-up");
        qsort(t->lat, t->nlat, sizeof(*t->lat), cmp_u64);
        printf("port %d sent %llu late %llu p50_us %.1f p99_us %.1f p999_us %.1f max_us %.1f\n", t->port,
               (unsigned long long)t->nlat, (unsigned long long)t->late, pct(t->lat, t->nlat, 0.50),
               pct(t->lat, t->nlat, 0.99), pct(t->lat, t->nlat, 0.999), (double)t->lat[t->nlat - 1] / 1000.0);
    }
    return 0;
}
