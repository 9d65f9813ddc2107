/* Cost per message against the number of peers on one socket, through the C API (issue 15):
   the cases of benches/benches/scale.rs, as a C program that ffi/perf/scale.sh builds twice,
   against ferromq's libzmq.so and against real libzmq, so a C caller's view of the scaling is
   measured the way the Rust bench measures the Rust API's.

   usage: scale TRANSPORT PEERS BUDGET_MS [GROUP]
   prints one CSV line per case: case,transport,peers,ns_per_msg. GROUP (pull, router or pub)
   runs one group of cases only, for profiling one of them. GROUP poll runs the PULL fan-in
   the way a classic libzmq program reads (zmq_poll, or ZMQ_EVENTS, before each zmq_recv):
   C-only cases with no twin in the Rust bench, so only when asked for.

   A server socket has PEERS peers and only one of them (PUB: a chosen set) takes part, so an
   implementation whose cost per message does not depend on the peer count prints a flat line.
   Every socket has HWM 0 (nothing dropped or waited for) and 16-byte bodies. Each figure is the
   median over batches of about 1,000 messages run for BUDGET_MS after one warm-up batch. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define PERF_NAME "scale"
#include "perf_util.h"

#define BODY_LEN 16
static const char BODY[BODY_LEN + 1] = "0123456789abcdef";

static const char *transport;
static int peers;
static double budget_ns;

static void *make (void *ctx, int type)
{
    void *s = zmq_socket (ctx, type);
    if (!s)
        die ("zmq_socket");
    int zero = 0;
    CHECK (zmq_setsockopt (s, ZMQ_SNDHWM, &zero, sizeof zero));
    CHECK (zmq_setsockopt (s, ZMQ_RCVHWM, &zero, sizeof zero));
    CHECK (zmq_setsockopt (s, ZMQ_LINGER, &zero, sizeof zero));
    return s;
}

/* A context that allows every socket of the run (libzmq's default is 1,023). */
static void *context (void)
{
    void *ctx = zmq_ctx_new ();
    if (!ctx)
        die ("zmq_ctx_new");
    CHECK (zmq_ctx_set (ctx, ZMQ_MAX_SOCKETS, peers + 16));
    return ctx;
}

/* Binds the server socket; `ep` receives what its peers connect to. */
static void bind_server (void *s, const char *tag, char *ep, size_t len)
{
    if (strcmp (transport, "inproc") == 0) {
        snprintf (ep, len, "inproc://scale-%s-%d-%d", tag, peers, (int) getpid ());
        CHECK (zmq_bind (s, ep));
    } else {
        CHECK (zmq_bind (s, "tcp://127.0.0.1:*"));
        CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, ep, &len));
    }
}

/* Receives one frame, checking its length and whether more follow. */
static void expect (void *s, size_t len, int more)
{
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    CHECK (zmq_msg_recv (&msg, s, 0));
    if (zmq_msg_size (&msg) != len || zmq_msg_more (&msg) != more) {
        fprintf (stderr, "scale: unexpected frame (%zu bytes, more %d)\n", zmq_msg_size (&msg),
                 zmq_msg_more (&msg));
        exit (1);
    }
    zmq_msg_close (&msg);
}

static void drain (void *s, int count)
{
    for (int i = 0; i < count; i++)
        expect (s, BODY_LEN, 0);
}

/* Messages per batch: about 1,000, fewer where one message costs `deliveries` copies. */
static int batch_size (int deliveries)
{
    int b = 20000 / (deliveries > 1 ? deliveries : 1);
    return b < 2 ? 2 : b > 1000 ? 1000 : b;
}

/* Peers connect 100 at a time, each group complete before the next (libzmq's listen backlog
   is 100), the way the Rust bench does. */
#define CHUNK 100

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Runs `batch` once to warm up, then until the budget is spent (at least 3, at most 1,000
   times); prints the median ns per message. `batch` returns the timed ns of `count` messages. */
static void measure (const char *name, int count, double (*batch) (void *), void *state)
{
    static double samples[1000];
    int n = 0;
    batch (state);
    double start = now_ns ();
    while (n < 3 || (now_ns () - start < budget_ns && n < 1000))
        samples[n++] = batch (state) / count;
    qsort (samples, (size_t) n, sizeof samples[0], cmp_double);
    printf ("%s,%s,%d,%.1f\n", name, transport, peers, samples[n / 2]);
    fflush (stdout);
}

/* --- PULL with PEERS PUSH peers; one PUSH sends, the PULL receives (both timed) --- */

struct fan_in
{
    void *server, *active;
    int count;
};

static double pull_batch (void *p)
{
    struct fan_in *f = p;
    double start = now_ns ();
    for (int i = 0; i < f->count; i++)
        CHECK (zmq_send (f->active, BODY, BODY_LEN, 0));
    drain (f->server, f->count);
    return now_ns () - start;
}

/* The same fan-in read as a poll loop does: before each message, zmq_poll on the PULL (the
   message is already there, so the poll returns from its first pass), or its ZMQ_EVENTS. */
static double pull_poll_batch (void *p)
{
    struct fan_in *f = p;
    double start = now_ns ();
    for (int i = 0; i < f->count; i++)
        CHECK (zmq_send (f->active, BODY, BODY_LEN, 0));
    for (int i = 0; i < f->count; i++) {
        zmq_pollitem_t item = {f->server, 0, ZMQ_POLLIN, 0};
        if (zmq_poll (&item, 1, -1) != 1 || !(item.revents & ZMQ_POLLIN))
            die ("zmq_poll: PULL not readable");
        expect (f->server, BODY_LEN, 0);
    }
    return now_ns () - start;
}

static double pull_events_batch (void *p)
{
    struct fan_in *f = p;
    double start = now_ns ();
    for (int i = 0; i < f->count; i++)
        CHECK (zmq_send (f->active, BODY, BODY_LEN, 0));
    for (int i = 0; i < f->count; i++) {
        int events = 0;
        size_t len = sizeof events;
        CHECK (zmq_getsockopt (f->server, ZMQ_EVENTS, &events, &len));
        if (!(events & ZMQ_POLLIN))
            die ("ZMQ_EVENTS: PULL not readable");
        expect (f->server, BODY_LEN, 0);
    }
    return now_ns () - start;
}

static void pull_fan_in (int plain, int polled)
{
    void *ctx = context ();
    void *pull = make (ctx, ZMQ_PULL);
    char ep[256];
    bind_server (pull, "pull", ep, sizeof ep);
    void **pushes = calloc ((size_t) peers, sizeof *pushes);
    for (int first = 0; first < peers; first += CHUNK) {
        int last = first + CHUNK < peers ? first + CHUNK : peers;
        for (int i = first; i < last; i++) {
            pushes[i] = make (ctx, ZMQ_PUSH);
            CHECK (zmq_connect (pushes[i], ep));
            CHECK (zmq_send (pushes[i], BODY, BODY_LEN, 0));
        }
        drain (pull, last - first); /* every hello arrived: the chunk is connected */
    }
    struct fan_in f = {pull, pushes[peers / 2], batch_size (1)};
    if (plain)
        measure ("pull-fan-in", f.count, pull_batch, &f);
    if (polled) {
        measure ("pull-poll", f.count, pull_poll_batch, &f);
        measure ("pull-events", f.count, pull_events_batch, &f);
    }
    for (int i = 0; i < peers; i++)
        zmq_close (pushes[i]);
    free (pushes);
    zmq_close (pull);
    zmq_ctx_term (ctx);
}

/* --- ROUTER with PEERS DEALER peers: one DEALER sends (fan-in), then the ROUTER sends to
   peers drawn from a fixed pseudo-random sequence (routing send, sends timed) --- */

#define ID_LEN 10

struct router
{
    void *router;
    void **dealers;
    int *per_peer, *targets;
    int count;
    uint64_t rng;
};

static void id_of (int i, char id[ID_LEN + 1])
{
    snprintf (id, ID_LEN + 1, "peer-%05u", (unsigned) i % 100000u); /* PEERS < 100,000 */
}

static double router_in_batch (void *p)
{
    struct router *r = p;
    void *active = r->dealers[peers / 2];
    double start = now_ns ();
    for (int i = 0; i < r->count; i++)
        CHECK (zmq_send (active, BODY, BODY_LEN, 0));
    for (int i = 0; i < r->count; i++) {
        expect (r->router, ID_LEN, 1);
        expect (r->router, BODY_LEN, 0);
    }
    return now_ns () - start;
}

static uint64_t next_random (uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double router_send_batch (void *p)
{
    struct router *r = p;
    memset (r->per_peer, 0, (size_t) peers * sizeof *r->per_peer);
    for (int i = 0; i < r->count; i++)
        r->targets[i] = (int) (next_random (&r->rng) % (uint64_t) peers);
    char id[ID_LEN + 1];
    double start = now_ns ();
    for (int i = 0; i < r->count; i++) {
        id_of (r->targets[i], id);
        CHECK (zmq_send (r->router, id, ID_LEN, ZMQ_SNDMORE)); /* ROUTER_MANDATORY is set */
        CHECK (zmq_send (r->router, BODY, BODY_LEN, 0));
    }
    double elapsed = now_ns () - start;
    for (int i = 0; i < r->count; i++)
        r->per_peer[r->targets[i]]++;
    for (int i = 0; i < peers; i++)
        drain (r->dealers[i], r->per_peer[i]); /* each got exactly what was routed to it */
    return elapsed;
}

static void router_cases (void)
{
    void *ctx = context ();
    struct router r = {0};
    r.router = make (ctx, ZMQ_ROUTER);
    int one = 1;
    CHECK (zmq_setsockopt (r.router, ZMQ_ROUTER_MANDATORY, &one, sizeof one));
    char ep[256];
    bind_server (r.router, "router", ep, sizeof ep);
    r.dealers = calloc ((size_t) peers, sizeof *r.dealers);
    for (int first = 0; first < peers; first += CHUNK) {
        int last = first + CHUNK < peers ? first + CHUNK : peers;
        for (int i = first; i < last; i++) {
            char id[ID_LEN + 1];
            id_of (i, id);
            r.dealers[i] = make (ctx, ZMQ_DEALER);
            CHECK (zmq_setsockopt (r.dealers[i], ZMQ_ROUTING_ID, id, ID_LEN));
            CHECK (zmq_connect (r.dealers[i], ep));
            CHECK (zmq_send (r.dealers[i], BODY, BODY_LEN, 0));
        }
        for (int i = first; i < last; i++) {
            expect (r.router, ID_LEN, 1);
            expect (r.router, BODY_LEN, 0);
        }
    }
    r.count = batch_size (1);
    r.per_peer = calloc ((size_t) peers, sizeof *r.per_peer);
    r.targets = calloc ((size_t) r.count, sizeof *r.targets);
    r.rng = 0x5EED000000000001ull ^ (uint64_t) peers;
    measure ("router-fan-in", r.count, router_in_batch, &r);
    measure ("router-send", r.count, router_send_batch, &r);
    for (int i = 0; i < peers; i++)
        zmq_close (r.dealers[i]);
    free (r.dealers);
    free (r.per_peer);
    free (r.targets);
    zmq_close (r.router);
    zmq_ctx_term (ctx);
}

/* --- PUB with PEERS SUB peers, SUB i subscribed to "t<i>" and to "a"; messages for nobody,
   for SUB 0, and for everyone (sends timed; the receivers drained untimed) --- */

struct pub
{
    void *publisher;
    void **subs;
    char msg[BODY_LEN];
    int receivers, count;
};

static void topic (int i, char out[BODY_LEN])
{
    char t[16];
    snprintf (t, sizeof t, "t%05u", (unsigned) i % 100000u);
    memset (out, '.', BODY_LEN);
    memcpy (out, t, strlen (t));
}

static double pub_batch (void *p)
{
    struct pub *b = p;
    double start = now_ns ();
    for (int i = 0; i < b->count; i++)
        CHECK (zmq_send (b->publisher, b->msg, BODY_LEN, 0));
    double elapsed = now_ns () - start;
    for (int i = 0; i < b->receivers; i++)
        drain (b->subs[i], b->count);
    return elapsed;
}

static int readable (void *s, long timeout_ms)
{
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    CHECK (zmq_poll (&item, 1, timeout_ms));
    return (item.revents & ZMQ_POLLIN) != 0;
}

/* Waits until the PUB holds SUB i's subscription: a message on "t<i>" reaches it. */
static void subscribed (void *publisher, void *sub, int i)
{
    char probe[BODY_LEN];
    topic (i, probe);
    double deadline = now_ns () + 10e9;
    for (;;) {
        CHECK (zmq_send (publisher, probe, BODY_LEN, 0));
        if (readable (sub, 5))
            break;
        if (now_ns () > deadline) {
            fprintf (stderr, "scale: subscription %d never arrived\n", i);
            exit (1);
        }
    }
    while (readable (sub, 1))
        drain (sub, 1);
}

static void pub_cases (void)
{
    void *ctx = context ();
    struct pub b = {0};
    b.publisher = make (ctx, ZMQ_PUB);
    char ep[256];
    bind_server (b.publisher, "pub", ep, sizeof ep);
    b.subs = calloc ((size_t) peers, sizeof *b.subs);
    for (int first = 0; first < peers; first += CHUNK) {
        int last = first + CHUNK < peers ? first + CHUNK : peers;
        for (int i = first; i < last; i++) {
            char t[BODY_LEN];
            topic (i, t);
            b.subs[i] = make (ctx, ZMQ_SUB);
            CHECK (zmq_setsockopt (b.subs[i], ZMQ_SUBSCRIBE, t, 6));
            CHECK (zmq_setsockopt (b.subs[i], ZMQ_SUBSCRIBE, "a", 1));
            CHECK (zmq_connect (b.subs[i], ep));
        }
        for (int i = first; i < last; i++)
            subscribed (b.publisher, b.subs[i], i);
    }
    memset (b.msg, '.', BODY_LEN);
    b.msg[0] = 'x';
    b.receivers = 0;
    b.count = batch_size (0);
    measure ("pub-none", b.count, pub_batch, &b);
    topic (0, b.msg);
    b.receivers = 1;
    b.count = batch_size (1);
    measure ("pub-one", b.count, pub_batch, &b);
    memset (b.msg, '.', BODY_LEN);
    b.msg[0] = 'a';
    b.receivers = peers;
    b.count = batch_size (peers);
    measure ("pub-all", b.count, pub_batch, &b);
    for (int i = 0; i < peers; i++)
        zmq_close (b.subs[i]);
    free (b.subs);
    zmq_close (b.publisher);
    zmq_ctx_term (ctx);
}

int main (int argc, char *argv[])
{
    if (argc != 4 && argc != 5) {
        fprintf (stderr, "usage: scale inproc|tcp PEERS BUDGET_MS [pull|router|pub|poll]\n");
        return 1;
    }
    transport = argv[1];
    peers = atoi (argv[2]);
    budget_ns = atof (argv[3]) * 1e6;
    if (peers < 1 || peers >= 100000 || (strcmp (transport, "inproc") != 0 && strcmp (transport, "tcp") != 0)) {
        fprintf (stderr, "scale: bad arguments\n");
        return 1;
    }
    const char *group = argc == 5 ? argv[4] : "";
    if (!*group || strcmp (group, "pull") == 0 || strcmp (group, "poll") == 0)
        pull_fan_in (strcmp (group, "poll") != 0, strcmp (group, "poll") == 0);
    if (!*group || strcmp (group, "router") == 0)
        router_cases ();
    if (!*group || strcmp (group, "pub") == 0)
        pub_cases ();
    return 0;
}
