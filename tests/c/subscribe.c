/* Subscriptions reach a new publisher without the SUB's next API call (issue 13, defect 2).
   libzmq sends a connecting SUB's subscriptions from its own threads, so "connect, subscribe,
   sleep, publish once, receive" delivers over tcp, ipc and inproc, and an XPUB blocked in a
   receive sees the subscription of a SUB that makes no further call. */
#define _GNU_SOURCE
#include "testutil.h"

#include <time.h>
#include <unistd.h>

static void sleep_ms (int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    nanosleep (&ts, NULL);
}

/* PUB binds, SUB connects and subscribes, nobody calls anything for a while, one publish. */
static void subscribe_sleep_publish (void *ctx, const char *endpoint)
{
    void *pub = zmq_socket (ctx, ZMQ_PUB);
    void *sub = zmq_socket (ctx, ZMQ_SUB);
    set_timeouts (pub, 2000);
    set_timeouts (sub, 2000);
    char resolved[256];
    CHECK (bind_resolved (pub, endpoint, resolved, sizeof resolved) == 0);
    CHECK (zmq_connect (sub, resolved) == 0);
    CHECK (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "news", 4) == 0);
    sleep_ms (300);
    CHECK (send_str (pub, "news: one", 0) == 9);
    char buf[64];
    int n = recv_str (sub, buf, sizeof buf, 0);
    if (n != 9)
        fprintf (stderr, "%s: the one message published after the sleep was lost\n",
                 endpoint);
    CHECK (n == 9 && strcmp (buf, "news: one") == 0);
    zmq_close (sub);
    zmq_close (pub);
}

/* An XPUB blocked in recv sees a subscription from a SUB that only connected and subscribed.
   Over inproc the SUB connects before the XPUB binds. */
static void xpub_sees_subscription (void *ctx, const char *endpoint, int connect_first)
{
    void *xpub = zmq_socket (ctx, ZMQ_XPUB);
    void *sub = zmq_socket (ctx, ZMQ_SUB);
    set_timeouts (xpub, 2000);
    set_timeouts (sub, 2000);
    char resolved[256];
    if (connect_first) {
        CHECK (zmq_connect (sub, endpoint) == 0);
        CHECK (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "A", 1) == 0);
        CHECK (zmq_bind (xpub, endpoint) == 0);
    } else {
        CHECK (bind_resolved (xpub, endpoint, resolved, sizeof resolved) == 0);
        CHECK (zmq_connect (sub, resolved) == 0);
        CHECK (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "A", 1) == 0);
    }
    char buf[16];
    int n = zmq_recv (xpub, buf, sizeof buf, 0);
    if (n != 2)
        fprintf (stderr, "%s: the XPUB never saw the subscription\n", endpoint);
    CHECK (n == 2 && buf[0] == 1 && buf[1] == 'A');
    zmq_close (sub);
    zmq_close (xpub);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    char ipc[128];
    snprintf (ipc, sizeof ipc, "ipc:///tmp/ferromq-subscribe-%d.ipc", (int) getpid ());
    subscribe_sleep_publish (ctx, "tcp://127.0.0.1:*");
    subscribe_sleep_publish (ctx, ipc);
    subscribe_sleep_publish (ctx, "inproc://subscribe-sleep-publish");
    xpub_sees_subscription (ctx, "tcp://127.0.0.1:*", 0);
    snprintf (ipc, sizeof ipc, "ipc:///tmp/ferromq-subscribe-x-%d.ipc", (int) getpid ());
    xpub_sees_subscription (ctx, ipc, 0);
    xpub_sees_subscription (ctx, "inproc://xpub-sees-subscription", 1);
    zmq_ctx_term (ctx);
    return report ();
}
