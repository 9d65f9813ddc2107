/* Two sockets whose types cannot talk (PUSH to PUSH, PUB to REP) over the NULL mechanism, as
   libzmq 4.3 reports it on the monitor: each side sees its connection made (ACCEPTED,
   CONNECTED) and then DISCONNECTED, with no HANDSHAKE_FAILED_* event (libzmq's NULL mechanism
   refuses the peer's READY without reporting it) and no HANDSHAKE_SUCCEEDED; and the
   connecting side does not try again (a protocol error ends its endpoint).
   Prints "ok", or names the failed checks and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <unistd.h>

#include "testutil.h"

/* The events `mon` reports within `ms`, as a bit set; stops early once `until` was seen. */
static int events_within (void *mon, int ms, int until)
{
    int seen = 0;
    set_timeouts (mon, ms);
    while (!(seen & until)) {
        uint32_t value;
        int event = read_event (mon, &value, NULL, 0);
        if (event < 0)
            break;
        seen |= event;
    }
    return seen;
}

static void mismatch (int server_type, int client_type, const char *name)
{
    void *ctx = zmq_ctx_new ();
    void *server = zmq_socket (ctx, server_type);
    void *client = zmq_socket (ctx, client_type);
    int ivl = 50;
    CHECK (zmq_setsockopt (client, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) == 0);
    CHECK (zmq_socket_monitor (server, "inproc://mismatch-s", ZMQ_EVENT_ALL) == 0);
    CHECK (zmq_socket_monitor (client, "inproc://mismatch-c", ZMQ_EVENT_ALL) == 0);
    void *ms = zmq_socket (ctx, ZMQ_PAIR);
    void *mc = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (zmq_connect (ms, "inproc://mismatch-s") == 0);
    CHECK (zmq_connect (mc, "inproc://mismatch-c") == 0);
    char ep[256];
    CHECK (bind_resolved (server, "tcp://127.0.0.1:*", ep, sizeof ep) == 0);
    CHECK (zmq_connect (client, ep) == 0);

    const int failed = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                       | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
    int s = events_within (ms, 2000, ZMQ_EVENT_DISCONNECTED);
    int c = events_within (mc, 2000, ZMQ_EVENT_DISCONNECTED);
    /* Whatever comes after the disconnection, a retry included. */
    s |= events_within (ms, 300, 0);
    c |= events_within (mc, 300, 0);
    CHECK ((s & ZMQ_EVENT_ACCEPTED) && (s & ZMQ_EVENT_DISCONNECTED));
    CHECK ((c & ZMQ_EVENT_CONNECTED) && (c & ZMQ_EVENT_DISCONNECTED));
    CHECK ((s & failed) == 0);
    CHECK ((c & failed) == 0);
    CHECK ((c & ZMQ_EVENT_CONNECT_RETRIED) == 0);
    if ((s & failed) || (c & failed) || (c & ZMQ_EVENT_CONNECT_RETRIED))
        fprintf (stderr, "  %s: server events 0x%x, client events 0x%x\n", name, s, c);

    zmq_socket_monitor (server, NULL, 0);
    zmq_socket_monitor (client, NULL, 0);
    int linger = 0;
    zmq_setsockopt (client, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close (ms);
    zmq_close (mc);
    zmq_close (server);
    zmq_close (client);
    CHECK (zmq_ctx_term (ctx) == 0);
}

int main (void)
{
    mismatch (ZMQ_PUSH, ZMQ_PUSH, "PUSH to PUSH");
    mismatch (ZMQ_REP, ZMQ_PUB, "PUB to REP");
    return report ();
}
