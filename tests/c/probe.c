/* ZMQ_PROBE_ROUTER: a new peer gets one empty message at attach, sent by the library without
   the application (issue 13, defect 2's "what libzmq does at attach"). A ROUTER learns a
   connecting DEALER's or ROUTER's routing id before either sends anything, over tcp, ipc and
   inproc. */
#include "testutil.h"

#include <unistd.h>

static void probe_reaches_router (void *ctx, int connector_type, const char *endpoint)
{
    void *router = zmq_socket (ctx, ZMQ_ROUTER);
    void *peer = zmq_socket (ctx, connector_type);
    set_timeouts (router, 2000);
    set_timeouts (peer, 2000);
    int on = 1;
    CHECK (zmq_setsockopt (peer, ZMQ_PROBE_ROUTER, &on, sizeof on) == 0);
    CHECK (zmq_setsockopt (peer, ZMQ_ROUTING_ID, "prober", 6) == 0);
    char resolved[256];
    CHECK (bind_resolved (router, endpoint, resolved, sizeof resolved) == 0);
    CHECK (zmq_connect (peer, resolved) == 0);
    char buf[64];
    int n = recv_str (router, buf, sizeof buf, 0);
    if (n != 6)
        fprintf (stderr, "%s: no probe from a type-%d peer\n", endpoint, connector_type);
    CHECK (n == 6 && memcmp (buf, "prober", 6) == 0);
    CHECK (rcvmore (router));
    CHECK (recv_str (router, buf, sizeof buf, 0) == 0);
    CHECK (!rcvmore (router));
    zmq_close (peer);
    zmq_close (router);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    const char *endpoints[] = {"tcp://127.0.0.1:*", "ipc:///tmp/ferromq-probe-*", "inproc://probe"};
    for (int i = 0; i < 3; i++) {
        char ep[128];
        snprintf (ep, sizeof ep, "%s", endpoints[i]);
        if (i == 1)
            snprintf (ep, sizeof ep, "ipc:///tmp/ferromq-probe-%d", (int) getpid ());
        probe_reaches_router (ctx, ZMQ_DEALER, ep);
        if (i == 2)
            snprintf (ep, sizeof ep, "inproc://probe-router");
        if (i == 1)
            snprintf (ep, sizeof ep, "ipc:///tmp/ferromq-probe-r-%d", (int) getpid ());
        probe_reaches_router (ctx, ZMQ_ROUTER, ep);
    }
    zmq_ctx_term (ctx);
    return report ();
}
