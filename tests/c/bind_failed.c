/* What the monitor reports when a bind fails, as libzmq 4.3 reports it: where the listening
   socket was made and bind or listen refused (a tcp port in use, an ipc path in a directory
   that does not exist), ZMQ_EVENT_CLOSED with its descriptor (the endpoint libzmq's listener
   knew by then: none for tcp, the ipc address for ipc) and then ZMQ_EVENT_BIND_FAILED with the
   errno; where no socket was made (a host that is no interface and no address, a port that
   is no number), the latter alone; a string that is no `transport://address` or names an
   unknown transport fails before any listener, with no event. BIND_FAILED names the address
   without its `tcp://` or `ipc://`, as libzmq does.
   Prints "ok", or names the failed checks and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <unistd.h>

#include "testutil.h"

static void expect (void *mon, int event, const char *endpoint, long value)
{
    uint32_t got_value = 0;
    char got_endpoint[256];
    int got = read_event (mon, &got_value, got_endpoint, sizeof got_endpoint);
    CHECK (got == event);
    CHECK (strcmp (got_endpoint, endpoint) == 0);
    if (value >= 0)
        CHECK (got_value == (uint32_t) value);
    if (got != event || strcmp (got_endpoint, endpoint) != 0)
        fprintf (stderr, "  wanted %d '%s', got %d '%s'\n", event, endpoint, got, got_endpoint);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    void *taken = zmq_socket (ctx, ZMQ_PULL);
    char ep[256];
    CHECK (bind_resolved (taken, "tcp://127.0.0.1:*", ep, sizeof ep) == 0);

    void *s = zmq_socket (ctx, ZMQ_PULL);
    CHECK (zmq_socket_monitor (s, "inproc://bind-failed-mon",
                               ZMQ_EVENT_CLOSED | ZMQ_EVENT_BIND_FAILED | ZMQ_EVENT_LISTENING)
           == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (mon, 2000);
    CHECK (zmq_connect (mon, "inproc://bind-failed-mon") == 0);

    /* The port is taken: the socket was made, bind refused. */
    CHECK_ERR (zmq_bind (s, ep), EADDRINUSE);
    expect (mon, ZMQ_EVENT_CLOSED, "", -1);
    expect (mon, ZMQ_EVENT_BIND_FAILED, ep + strlen ("tcp://"), EADDRINUSE);

    /* No such interface: nothing was made. */
    CHECK_ERR (zmq_bind (s, "tcp://no-such-nic0:*"), ENODEV);
    expect (mon, ZMQ_EVENT_BIND_FAILED, "no-such-nic0:*", ENODEV);

    /* An address libzmq's resolver refuses: BIND_FAILED with EINVAL, no socket made. */
    CHECK_ERR (zmq_bind (s, "tcp://127.0.0.1:notaport"), EINVAL);
    expect (mon, ZMQ_EVENT_BIND_FAILED, "127.0.0.1:notaport", EINVAL);
    /* No `://`, or an unknown transport: refused before any listener, no event. */
    CHECK_ERR (zmq_bind (s, "no-scheme"), EINVAL);
    CHECK_ERR (zmq_bind (s, "bogus://x"), EPROTONOSUPPORT);

    /* An ipc path in a directory that does not exist. */
    char ipc[128];
    snprintf (ipc, sizeof ipc, "ipc:///nonexistent-%d/x.ipc", (int) getpid ());
    CHECK_ERR (zmq_bind (s, ipc), ENOENT);
    expect (mon, ZMQ_EVENT_CLOSED, ipc, -1);
    expect (mon, ZMQ_EVENT_BIND_FAILED, ipc + strlen ("ipc://"), ENOENT);

    /* A bind that works after them reports LISTENING, and nothing came in between. */
    CHECK (bind_resolved (s, "tcp://127.0.0.1:*", ep, sizeof ep) == 0);
    expect (mon, ZMQ_EVENT_LISTENING, ep, -1);

    zmq_socket_monitor (s, NULL, 0);
    zmq_close (mon);
    zmq_close (s);
    zmq_close (taken);
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
