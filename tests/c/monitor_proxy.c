/* zmq_socket_monitor's two-frame events (LISTENING, ACCEPTED, HANDSHAKE_SUCCEEDED,
   DISCONNECTED, MONITOR_STOPPED) read from an inproc PAIR, zmq_proxy between a ROUTER and a
   DEALER ended by zmq_ctx_shutdown (-1, ETERM), and zmq_proxy_steerable ended by TERMINATE
   (0). Prints "ok" and exits 0, or names the failed checks and exits 1.
   Built by tests/tests/c_monitor_proxy.rs against ferromq and against real libzmq. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#include "testutil.h"

#define TIMEOUT_MS 5000

/* Reads events until `wanted` arrives; returns 1 if it did. */
static int wait_event (void *mon, int wanted, char *endpoint, size_t size)
{
    uint32_t value;
    for (;;) {
        int e = read_event (mon, &value, endpoint, size);
        if (e < 0)
            return 0;
        if (e == wanted)
            return 1;
    }
}

static void test_monitor (void)
{
    void *ctx = zmq_ctx_new ();
    void *server = zmq_socket (ctx, ZMQ_REP);
    set_timeouts (server, TIMEOUT_MS);
    CHECK (zmq_socket_monitor (server, "inproc://monitor-server", ZMQ_EVENT_ALL) == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (mon, TIMEOUT_MS);
    CHECK (zmq_connect (mon, "inproc://monitor-server") == 0);

    char bound[256], endpoint[256];
    CHECK (bind_resolved (server, "tcp://127.0.0.1:*", bound, sizeof bound) == 0);
    uint32_t value = 0;
    CHECK (read_event (mon, &value, endpoint, sizeof endpoint) == ZMQ_EVENT_LISTENING);
    CHECK (strcmp (endpoint, bound) == 0);

    void *client = zmq_socket (ctx, ZMQ_REQ);
    set_timeouts (client, TIMEOUT_MS);
    CHECK (zmq_connect (client, bound) == 0);
    CHECK (send_str (client, "hi", 0) == 2);
    char buf[16];
    CHECK (recv_str (server, buf, sizeof buf, 0) == 2);
    CHECK (wait_event (mon, ZMQ_EVENT_ACCEPTED, endpoint, sizeof endpoint));
    CHECK (wait_event (mon, ZMQ_EVENT_HANDSHAKE_SUCCEEDED, endpoint, sizeof endpoint));
    CHECK (strcmp (endpoint, bound) == 0);

    zmq_close (client);
    CHECK (wait_event (mon, ZMQ_EVENT_DISCONNECTED, endpoint, sizeof endpoint));
    CHECK (zmq_socket_monitor (server, NULL, 0) == 0);
    CHECK (wait_event (mon, ZMQ_EVENT_MONITOR_STOPPED, endpoint, sizeof endpoint));

    zmq_close (mon);
    zmq_close (server);
    CHECK (zmq_ctx_term (ctx) == 0);
}

struct proxy_args
{
    void *frontend, *backend, *capture, *control;
    int rc, err;
};

static void run_proxy (void *arg)
{
    struct proxy_args *p = (struct proxy_args *) arg;
    p->rc = p->control ? zmq_proxy_steerable (p->frontend, p->backend,
                                              p->capture, p->control)
                       : zmq_proxy (p->frontend, p->backend, p->capture);
    p->err = zmq_errno ();
}

static void test_proxy (void)
{
    void *ctx = zmq_ctx_new ();
    void *frontend = zmq_socket (ctx, ZMQ_ROUTER);
    void *backend = zmq_socket (ctx, ZMQ_DEALER);
    void *capture = zmq_socket (ctx, ZMQ_PUSH);
    void *tap = zmq_socket (ctx, ZMQ_PULL);
    CHECK (zmq_bind (frontend, "inproc://proxy-front") == 0);
    CHECK (zmq_bind (backend, "inproc://proxy-back") == 0);
    CHECK (zmq_bind (tap, "inproc://proxy-capture") == 0);
    CHECK (zmq_connect (capture, "inproc://proxy-capture") == 0);
    void *client = zmq_socket (ctx, ZMQ_REQ);
    void *worker = zmq_socket (ctx, ZMQ_REP);
    set_timeouts (client, TIMEOUT_MS);
    set_timeouts (worker, TIMEOUT_MS);
    set_timeouts (tap, TIMEOUT_MS);
    CHECK (zmq_connect (client, "inproc://proxy-front") == 0);
    CHECK (zmq_connect (worker, "inproc://proxy-back") == 0);

    struct proxy_args args = {frontend, backend, capture, NULL, 0, 0};
    void *thread = zmq_threadstart (run_proxy, &args);
    char buf[32];
    for (int i = 0; i < 3; i++) {
        CHECK (send_str (client, "request", 0) == 7);
        CHECK (recv_str (worker, buf, sizeof buf, 0) == 7);
        CHECK (send_str (worker, "reply", 0) == 5);
        CHECK (recv_str (client, buf, sizeof buf, 0) == 5);
        CHECK (strcmp (buf, "reply") == 0);
    }
    /* The capture socket saw the request's three frames (routing id, empty, body). */
    char id[16];
    CHECK (zmq_recv (tap, id, sizeof id, 0) > 0 && rcvmore (tap));
    CHECK (zmq_recv (tap, buf, sizeof buf, 0) == 0 && rcvmore (tap));
    CHECK (recv_str (tap, buf, sizeof buf, 0) == 7);

    zmq_close (client);
    zmq_close (worker);
    zmq_close (tap);
    CHECK (zmq_ctx_shutdown (ctx) == 0);
    zmq_threadclose (thread);
    CHECK (args.rc == -1 && args.err == ETERM);
    zmq_close (frontend);
    zmq_close (backend);
    zmq_close (capture);
    CHECK (zmq_ctx_term (ctx) == 0);
}

static void test_proxy_steerable (void)
{
    void *ctx = zmq_ctx_new ();
    void *frontend = zmq_socket (ctx, ZMQ_PULL);
    void *backend = zmq_socket (ctx, ZMQ_PUSH);
    void *control = zmq_socket (ctx, ZMQ_PAIR);
    void *capture = zmq_socket (ctx, ZMQ_PUSH);
    void *tap = zmq_socket (ctx, ZMQ_PULL);
    set_timeouts (tap, TIMEOUT_MS);
    CHECK (zmq_bind (tap, "inproc://steer-capture") == 0);
    CHECK (zmq_connect (capture, "inproc://steer-capture") == 0);
    CHECK (zmq_bind (frontend, "inproc://steer-in") == 0);
    CHECK (zmq_bind (backend, "inproc://steer-out") == 0);
    CHECK (zmq_bind (control, "inproc://steer-control") == 0);
    void *producer = zmq_socket (ctx, ZMQ_PUSH);
    void *consumer = zmq_socket (ctx, ZMQ_PULL);
    void *commander = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (consumer, TIMEOUT_MS);
    CHECK (zmq_connect (producer, "inproc://steer-in") == 0);
    CHECK (zmq_connect (consumer, "inproc://steer-out") == 0);
    CHECK (zmq_connect (commander, "inproc://steer-control") == 0);

    struct proxy_args args = {frontend, backend, capture, control, 0, 0};
    void *thread = zmq_threadstart (run_proxy, &args);
    CHECK (send_str (producer, "through", ZMQ_SNDMORE) == 7);
    CHECK (send_str (producer, "tail", 0) == 4);
    char buf[16];
    CHECK (recv_str (consumer, buf, sizeof buf, 0) == 7 && rcvmore (consumer));
    CHECK (recv_str (consumer, buf, sizeof buf, 0) == 4 && !rcvmore (consumer));
    CHECK (recv_str (tap, buf, sizeof buf, 0) == 7 && rcvmore (tap));
    CHECK (recv_str (tap, buf, sizeof buf, 0) == 4);
    CHECK (send_str (commander, "TERMINATE", 0) == 9);
    zmq_threadclose (thread);
    CHECK (args.rc == 0);

    zmq_close (producer);
    zmq_close (consumer);
    zmq_close (commander);
    zmq_close (capture);
    zmq_close (tap);
    zmq_close (frontend);
    zmq_close (backend);
    zmq_close (control);
    CHECK (zmq_ctx_term (ctx) == 0);
}

/* With no argument every test runs; else only the named ones (monitor, proxy, steerable). */
static int wanted (int argc, char **argv, const char *name)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp (argv[i], name) == 0)
            return 1;
    return 0;
}

int main (int argc, char **argv)
{
    if (wanted (argc, argv, "monitor"))
        test_monitor ();
    if (wanted (argc, argv, "proxy"))
        test_proxy ();
    if (wanted (argc, argv, "steerable"))
        test_proxy_steerable ();
    return report ();
}
