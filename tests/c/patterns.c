/* The classic ZeroMQ guide patterns written against the C API, over inproc, tcp and ipc:
   hello-world REQ/REP, PUB/SUB with topics, a PUSH/PULL ventilator-workers-sink pipeline ended
   by zmq_ctx_shutdown (ETERM in blocked workers), a ROUTER/DEALER broker driven by zmq_poll,
   zmq_poll over two sockets and a pipe fd, ZMQ_FD/ZMQ_EVENTS used edge-triggered with poll(2),
   and zmq_msg_gets metadata. Usage: patterns IPC_DIR. Prints "ok" and exits 0, or names the
   failed checks and exits 1. Built against ferromq by tests/tests/c_patterns.rs. */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <unistd.h>

#include "testutil.h"

#define TIMEOUT_MS 5000

static const char *ipc_dir;

/* Picks the endpoint for a transport: inproc names, tcp port 0, ipc paths in the test dir. */
static void endpoint_for (const char *transport, const char *name, char *out,
                          size_t size)
{
    if (strcmp (transport, "tcp") == 0)
        snprintf (out, size, "tcp://127.0.0.1:*");
    else if (strcmp (transport, "ipc") == 0)
        snprintf (out, size, "ipc://%s/%s.sock", ipc_dir, name);
    else
        snprintf (out, size, "inproc://%s", name);
}

static void *socket_with_timeouts (void *ctx, int type)
{
    void *s = zmq_socket (ctx, type);
    CHECK (s != NULL);
    set_timeouts (s, TIMEOUT_MS);
    return s;
}

static void test_req_rep (const char *transport)
{
    void *ctx = zmq_ctx_new ();
    void *rep = socket_with_timeouts (ctx, ZMQ_REP);
    void *req = socket_with_timeouts (ctx, ZMQ_REQ);
    char ep[256], bound[256];
    endpoint_for (transport, "reqrep", ep, sizeof ep);
    CHECK (bind_resolved (rep, ep, bound, sizeof bound) == 0);
    CHECK (zmq_connect (req, bound) == 0);
    char buf[64];
    for (int i = 0; i < 3; i++) {
        CHECK (send_str (req, "Hello", 0) == 5);
        zmq_msg_t msg;
        zmq_msg_init (&msg);
        CHECK (zmq_msg_recv (&msg, rep, 0) == 5);
        CHECK (memcmp (zmq_msg_data (&msg), "Hello", 5) == 0);
        /* tcp and ipc messages carry the peer's READY properties; inproc ones none, as in
           libzmq (tests/c/srcfd.c holds both libraries to it). */
        errno = 0;
        const char *kind = zmq_msg_gets (&msg, "Socket-Type");
        if (strcmp (transport, "inproc") == 0)
            CHECK (kind == NULL && errno == EINVAL);
        else
            CHECK (kind != NULL && strcmp (kind, "REQ") == 0);
        zmq_msg_close (&msg);
        CHECK (send_str (rep, "World", 0) == 5);
        CHECK (recv_str (req, buf, sizeof buf, 0) == 5);
        CHECK (strcmp (buf, "World") == 0);
    }
    zmq_close (req);
    zmq_close (rep);
    CHECK (zmq_ctx_term (ctx) == 0);
}

/* Publishes `topic` until `sub` sees something (subscriptions travel asynchronously). */
static void sync_subscriber (void *pub, void *sub)
{
    zmq_pollitem_t item = {sub, 0, ZMQ_POLLIN, 0};
    for (int i = 0; i < 500; i++) {
        send_str (pub, "A sync", 0);
        if (zmq_poll (&item, 1, 10) == 1)
            return;
    }
    CHECK (!"subscriber never synchronised");
}

/* Receives until a non-sync message arrives, into `buf`. */
static int recv_after_sync (void *sub, char *buf, size_t size)
{
    for (;;) {
        int n = recv_str (sub, buf, size, 0);
        if (n < 0 || strcmp (buf, "A sync") != 0)
            return n;
    }
}

static void test_pub_sub (const char *transport)
{
    void *ctx = zmq_ctx_new ();
    void *pub = socket_with_timeouts (ctx, ZMQ_PUB);
    void *only_a = socket_with_timeouts (ctx, ZMQ_SUB);
    void *all = socket_with_timeouts (ctx, ZMQ_SUB);
    char ep[256], bound[256];
    endpoint_for (transport, "pubsub", ep, sizeof ep);
    CHECK (bind_resolved (pub, ep, bound, sizeof bound) == 0);
    CHECK (zmq_setsockopt (only_a, ZMQ_SUBSCRIBE, "A", 1) == 0);
    CHECK (zmq_setsockopt (all, ZMQ_SUBSCRIBE, "", 0) == 0);
    CHECK (zmq_connect (only_a, bound) == 0);
    CHECK (zmq_connect (all, bound) == 0);
    sync_subscriber (pub, only_a);
    sync_subscriber (pub, all);

    CHECK (send_str (pub, "B filtered", 0) == 10);
    CHECK (send_str (pub, "A data", ZMQ_SNDMORE) == 6);
    CHECK (send_str (pub, "second part", 0) == 11);
    CHECK (send_str (pub, "A end", 0) == 5);

    char buf[64];
    CHECK (recv_after_sync (only_a, buf, sizeof buf) == 6);
    CHECK (strcmp (buf, "A data") == 0);
    CHECK (rcvmore (only_a) == 1);
    CHECK (recv_str (only_a, buf, sizeof buf, 0) == 11);
    CHECK (recv_str (only_a, buf, sizeof buf, 0) == 5);
    CHECK (strcmp (buf, "A end") == 0);

    CHECK (recv_after_sync (all, buf, sizeof buf) == 10);
    CHECK (strcmp (buf, "B filtered") == 0);
    CHECK (recv_str (all, buf, sizeof buf, 0) == 6);
    CHECK (recv_str (all, buf, sizeof buf, 0) == 11);
    CHECK (recv_str (all, buf, sizeof buf, 0) == 5);

    CHECK (zmq_setsockopt (only_a, ZMQ_UNSUBSCRIBE, "A", 1) == 0);
    zmq_close (pub);
    zmq_close (only_a);
    zmq_close (all);
    CHECK (zmq_ctx_term (ctx) == 0);
}

#define TASKS 200
#define WORKERS 2

struct worker_args
{
    void *ctx;
    const char *tasks;
    const char *results;
    void *connected; /* zmq_atomic_counter: workers whose sockets are connected */
    int ended_with_eterm;
};

/* A pipeline worker: doubles each task until its context is shut down. */
static void pipeline_worker (void *arg)
{
    struct worker_args *w = (struct worker_args *) arg;
    void *in = zmq_socket (w->ctx, ZMQ_PULL);
    void *out = zmq_socket (w->ctx, ZMQ_PUSH);
    zmq_connect (in, w->tasks);
    zmq_connect (out, w->results);
    zmq_atomic_counter_inc (w->connected);
    for (;;) {
        int task = 0;
        if (zmq_recv (in, &task, sizeof task, 0) != (int) sizeof task) {
            w->ended_with_eterm = zmq_errno () == ETERM;
            break;
        }
        int result = task * 2;
        if (zmq_send (out, &result, sizeof result, 0) != (int) sizeof result)
            break;
    }
    zmq_close (in);
    zmq_close (out);
}

static void test_pipeline (const char *transport)
{
    void *ctx = zmq_ctx_new ();
    void *ventilator = zmq_socket (ctx, ZMQ_PUSH);
    void *sink = zmq_socket (ctx, ZMQ_PULL);
    set_timeouts (sink, TIMEOUT_MS);
    char ep[256], tasks[256], results[256];
    endpoint_for (transport, "tasks", ep, sizeof ep);
    CHECK (bind_resolved (ventilator, ep, tasks, sizeof tasks) == 0);
    endpoint_for (transport, "results", ep, sizeof ep);
    CHECK (bind_resolved (sink, ep, results, sizeof results) == 0);

    struct worker_args args[WORKERS];
    void *threads[WORKERS];
    void *connected = zmq_atomic_counter_new ();
    for (int i = 0; i < WORKERS; i++) {
        args[i] = (struct worker_args){ctx, tasks, results, connected, 0};
        threads[i] = zmq_threadstart (pipeline_worker, &args[i]);
    }
    /* Every worker must have its sockets before the context shuts down: a worker that only
       starts afterwards gets ETERM from zmq_socket, not from the zmq_recv this test checks. */
    while (zmq_atomic_counter_value (connected) < WORKERS)
        zmq_poll (NULL, 0, 1);
    long expected = 0;
    for (int i = 1; i <= TASKS; i++) {
        CHECK (zmq_send (ventilator, &i, sizeof i, 0) == (int) sizeof i);
        expected += 2 * i;
    }
    long sum = 0;
    for (int i = 0; i < TASKS; i++) {
        int result = 0;
        if (zmq_recv (sink, &result, sizeof result, 0) != (int) sizeof result) {
            CHECK (!"sink lost a result");
            break;
        }
        sum += result;
    }
    CHECK (sum == expected);
    zmq_close (ventilator);
    zmq_close (sink);
    /* Workers are blocked in zmq_recv: shutting the context down wakes them with ETERM. */
    CHECK (zmq_ctx_shutdown (ctx) == 0);
    for (int i = 0; i < WORKERS; i++) {
        zmq_threadclose (threads[i]);
        CHECK (args[i].ended_with_eterm);
    }
    zmq_atomic_counter_destroy (&connected);
    CHECK (zmq_ctx_term (ctx) == 0);
}

#define CLIENTS 2
#define REQUESTS 5

struct broker_peer
{
    void *ctx;
    const char *endpoint;
    int id;
    int ok;
};

static void broker_client (void *arg)
{
    struct broker_peer *p = (struct broker_peer *) arg;
    void *req = zmq_socket (p->ctx, ZMQ_REQ);
    set_timeouts (req, TIMEOUT_MS);
    zmq_connect (req, p->endpoint);
    int ok = 1;
    for (int i = 0; i < REQUESTS; i++) {
        char request[32], reply[64], expected[64];
        snprintf (request, sizeof request, "c%d-r%d", p->id, i);
        snprintf (expected, sizeof expected, "done %s", request);
        if (send_str (req, request, 0) < 0
            || recv_str (req, reply, sizeof reply, 0) < 0
            || strcmp (reply, expected) != 0)
            ok = 0;
    }
    p->ok = ok;
    zmq_close (req);
}

static void broker_worker (void *arg)
{
    struct broker_peer *p = (struct broker_peer *) arg;
    void *rep = zmq_socket (p->ctx, ZMQ_REP);
    zmq_connect (rep, p->endpoint);
    for (;;) {
        char request[64], reply[80];
        if (recv_str (rep, request, sizeof request, 0) < 0)
            break; /* ETERM */
        snprintf (reply, sizeof reply, "done %s", request);
        if (send_str (rep, reply, 0) < 0)
            break;
    }
    zmq_close (rep);
}

/* Moves one whole multipart message from `from` to `to`. */
static void forward (void *from, void *to)
{
    for (;;) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        CHECK (zmq_msg_recv (&part, from, 0) >= 0);
        int more = zmq_msg_more (&part);
        CHECK (zmq_msg_send (&part, to, more ? ZMQ_SNDMORE : 0) >= 0);
        zmq_msg_close (&part);
        if (!more)
            return;
    }
}

static void test_broker (const char *transport)
{
    void *ctx = zmq_ctx_new ();
    void *frontend = socket_with_timeouts (ctx, ZMQ_ROUTER);
    void *backend = socket_with_timeouts (ctx, ZMQ_DEALER);
    char ep[256], front[256], back[256];
    endpoint_for (transport, "front", ep, sizeof ep);
    CHECK (bind_resolved (frontend, ep, front, sizeof front) == 0);
    endpoint_for (transport, "back", ep, sizeof ep);
    CHECK (bind_resolved (backend, ep, back, sizeof back) == 0);

    struct broker_peer workers[2], clients[CLIENTS];
    void *worker_threads[2], *client_threads[CLIENTS];
    for (int i = 0; i < 2; i++) {
        workers[i] = (struct broker_peer){ctx, back, i, 0};
        worker_threads[i] = zmq_threadstart (broker_worker, &workers[i]);
    }
    for (int i = 0; i < CLIENTS; i++) {
        clients[i] = (struct broker_peer){ctx, front, i, 0};
        client_threads[i] = zmq_threadstart (broker_client, &clients[i]);
    }
    zmq_pollitem_t items[] = {{frontend, 0, ZMQ_POLLIN, 0},
                              {backend, 0, ZMQ_POLLIN, 0}};
    int replies = 0, idle = 0;
    while (replies < CLIENTS * REQUESTS && idle < TIMEOUT_MS / 100) {
        int n = zmq_poll (items, 2, 100);
        CHECK (n >= 0);
        if (n == 0)
            idle++;
        if (items[0].revents & ZMQ_POLLIN)
            forward (frontend, backend);
        if (items[1].revents & ZMQ_POLLIN) {
            forward (backend, frontend);
            replies++;
        }
    }
    CHECK (replies == CLIENTS * REQUESTS);
    for (int i = 0; i < CLIENTS; i++) {
        zmq_threadclose (client_threads[i]);
        CHECK (clients[i].ok);
    }
    zmq_close (frontend);
    zmq_close (backend);
    CHECK (zmq_ctx_shutdown (ctx) == 0);
    for (int i = 0; i < 2; i++)
        zmq_threadclose (worker_threads[i]);
    CHECK (zmq_ctx_term (ctx) == 0);
}

static void test_poll_sockets_and_fd (void)
{
    void *ctx = zmq_ctx_new ();
    void *a = socket_with_timeouts (ctx, ZMQ_PAIR);
    void *b = socket_with_timeouts (ctx, ZMQ_PAIR);
    void *pull = socket_with_timeouts (ctx, ZMQ_PULL);
    void *push = socket_with_timeouts (ctx, ZMQ_PUSH);
    CHECK (zmq_bind (a, "inproc://poll-pair") == 0);
    CHECK (zmq_connect (b, "inproc://poll-pair") == 0);
    CHECK (zmq_bind (pull, "inproc://poll-pull") == 0);
    CHECK (zmq_connect (push, "inproc://poll-pull") == 0);
    int fds[2];
    CHECK (pipe (fds) == 0);

    zmq_pollitem_t items[] = {{a, 0, ZMQ_POLLIN, 0},
                              {pull, 0, ZMQ_POLLIN, 0},
                              {NULL, fds[0], ZMQ_POLLIN, 0}};
    CHECK (zmq_poll (items, 3, 20) == 0);
    CHECK (items[0].revents == 0 && items[1].revents == 0
           && items[2].revents == 0);

    CHECK (write (fds[1], "x", 1) == 1);
    CHECK (zmq_poll (items, 3, TIMEOUT_MS) == 1);
    CHECK (items[2].revents == ZMQ_POLLIN);

    CHECK (send_str (push, "job", 0) == 3);
    CHECK (send_str (b, "ping", 0) == 4);
    CHECK (zmq_poll (items, 3, TIMEOUT_MS) == 3);
    CHECK (items[0].revents == ZMQ_POLLIN && items[1].revents == ZMQ_POLLIN);

    char buf[16];
    CHECK (recv_str (a, buf, sizeof buf, 0) == 4);
    CHECK (recv_str (pull, buf, sizeof buf, 0) == 3);
    CHECK (read (fds[0], buf, 1) == 1);
    CHECK (zmq_poll (items, 3, 0) == 0);

    /* POLLOUT on a connected PAIR is ready at once. */
    zmq_pollitem_t out = {b, 0, ZMQ_POLLOUT, 0};
    CHECK (zmq_poll (&out, 1, 0) == 1 && out.revents == ZMQ_POLLOUT);

    /* ZMQ_FD + ZMQ_EVENTS, edge-triggered: wait on the fd only after EVENTS said "nothing". */
    int fd = -1;
    size_t len = sizeof fd;
    CHECK (zmq_getsockopt (a, ZMQ_FD, &fd, &len) == 0 && fd >= 0);
    int events = 0;
    len = sizeof events;
    CHECK (zmq_getsockopt (a, ZMQ_EVENTS, &events, &len) == 0);
    CHECK ((events & ZMQ_POLLIN) == 0);
    CHECK (send_str (b, "edge", 0) == 4);
    struct pollfd pfd = {fd, POLLIN, 0};
    CHECK (poll (&pfd, 1, TIMEOUT_MS) == 1);
    len = sizeof events;
    CHECK (zmq_getsockopt (a, ZMQ_EVENTS, &events, &len) == 0);
    CHECK (events & ZMQ_POLLIN);
    CHECK (recv_str (a, buf, sizeof buf, ZMQ_DONTWAIT) == 4);
    len = sizeof events;
    CHECK (zmq_getsockopt (a, ZMQ_EVENTS, &events, &len) == 0);
    CHECK ((events & ZMQ_POLLIN) == 0);

    close (fds[0]);
    close (fds[1]);
    zmq_close (a);
    zmq_close (b);
    zmq_close (pull);
    zmq_close (push);
    CHECK (zmq_ctx_term (ctx) == 0);
}

static void test_routing_id_metadata (void)
{
    void *ctx = zmq_ctx_new ();
    void *router = socket_with_timeouts (ctx, ZMQ_ROUTER);
    void *dealer = socket_with_timeouts (ctx, ZMQ_DEALER);
    char bound[256];
    CHECK (bind_resolved (router, "tcp://127.0.0.1:*", bound, sizeof bound) == 0);
    CHECK (zmq_setsockopt (dealer, ZMQ_ROUTING_ID, "client-7", 8) == 0);
    CHECK (zmq_connect (dealer, bound) == 0);
    CHECK (send_str (dealer, "hi", 0) == 2);
    char id[32];
    CHECK (zmq_recv (router, id, sizeof id, 0) == 8);
    CHECK (memcmp (id, "client-7", 8) == 0);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    CHECK (zmq_msg_recv (&msg, router, 0) == 2);
    const char *kind = zmq_msg_gets (&msg, "Socket-Type");
    CHECK (kind != NULL && strcmp (kind, "DEALER") == 0);
    /* The READY property is "Identity"; libzmq's one alias runs from "Identity" to
       "Routing-Id", not back, so "Routing-Id" finds nothing (as on libzmq 4.3.4). */
    const char *rid = zmq_msg_gets (&msg, "Identity");
    CHECK (rid != NULL && strcmp (rid, "client-7") == 0);
    CHECK (zmq_msg_gets (&msg, "Routing-Id") == NULL && zmq_errno () == EINVAL);
    CHECK (zmq_msg_gets (&msg, "X-Not-There") == NULL && zmq_errno () == EINVAL);
    zmq_msg_close (&msg);
    zmq_close (router);
    zmq_close (dealer);
    CHECK (zmq_ctx_term (ctx) == 0);
}

int main (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "usage: patterns IPC_DIR\n");
        return 2;
    }
    ipc_dir = argv[1];
    const char *transports[] = {"inproc", "tcp", "ipc"};
    for (int t = 0; t < 3; t++) {
        test_req_rep (transports[t]);
        test_pub_sub (transports[t]);
        test_pipeline (transports[t]);
        test_broker (transports[t]);
    }
    test_poll_sockets_and_fd ();
    test_routing_id_metadata ();
    return report ();
}
