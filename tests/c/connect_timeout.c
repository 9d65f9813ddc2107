/* ZMQ_CONNECT_TIMEOUT as libzmq 4.3's tcp connecter applies it: a connect that has not
   completed within that many ms is abandoned and retried after the reconnect interval,
   reported on the monitor as CONNECT_DELAYED (the EINPROGRESS step), CLOSED (the attempt's
   socket) then CONNECT_RETRIED (with the interval, libzmq's RECONNECT_IVL plus a jitter below
   RECONNECT_IVL), again and again, never CONNECTED. A refused connect reports the same
   CLOSED then CONNECT_RETRIED, over tcp and over ipc.
   The peer is a listener whose accept queue is full (backlog 0, never accepted, one plain
   connection filling it): the kernel drops further SYNs, so without the option the connect
   would hang for the OS's own timeout (minutes). The first retry cannot come before the
   timeout ran out, so the time from zmq_connect to it is at least the timeout.
   Prints "ok", or names the failed checks and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

enum
{
    TIMEOUT_MS = 100,
    IVL_MS = 100
};

static long now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* A refused connect (`ep`'s listener is closed, or no ipc socket file): CLOSED (the
   attempt's socket), then CONNECT_RETRIED; `mon_ep` is the monitor's inproc endpoint. */
static void check_refused (void *ctx, const char *ep, const char *mon_ep)
{
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    set_timeouts (push, 0);
    int ivl = IVL_MS;
    CHECK (zmq_setsockopt (push, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) == 0);
    CHECK (zmq_socket_monitor (push, mon_ep,
                               ZMQ_EVENT_CLOSED | ZMQ_EVENT_CONNECT_RETRIED
                                 | ZMQ_EVENT_CONNECTED)
           == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (mon, 10000);
    CHECK (zmq_connect (mon, mon_ep) == 0);
    CHECK (zmq_connect (push, ep) == 0);
    for (int round = 0; round < 2; round++) {
        uint32_t value = 0;
        CHECK (read_event (mon, &value, NULL, 0) == ZMQ_EVENT_CLOSED);
        CHECK (read_event (mon, &value, NULL, 0) == ZMQ_EVENT_CONNECT_RETRIED);
    }
    zmq_socket_monitor (push, NULL, 0);
    zmq_close (mon);
    zmq_close (push);
}

/* The waits between refused attempts, as libzmq's connecter computes them: RECONNECT_IVL
   doubled after each failure up to RECONNECT_IVL_MAX, plus a jitter below RECONNECT_IVL that
   CONNECT_RETRIED includes (so that not every wait is the bare interval). */
static void check_backoff (void *ctx, const char *ep)
{
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    set_timeouts (push, 0);
    int ivl = 20, max = 80;
    CHECK (zmq_setsockopt (push, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) == 0);
    CHECK (zmq_setsockopt (push, ZMQ_RECONNECT_IVL_MAX, &max, sizeof max) == 0);
    CHECK (zmq_socket_monitor (push, "inproc://connect-backoff", ZMQ_EVENT_CONNECT_RETRIED) == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (mon, 10000);
    CHECK (zmq_connect (mon, "inproc://connect-backoff") == 0);
    CHECK (zmq_connect (push, ep) == 0);
    int bare = 0;
    unsigned want = (unsigned) ivl;
    for (int i = 0; i < 6; i++) {
        uint32_t value = 0;
        CHECK (read_event (mon, &value, NULL, 0) == ZMQ_EVENT_CONNECT_RETRIED);
        CHECK (value >= want && value < want + (unsigned) ivl);
        if (value == want)
            bare++;
        want = want * 2 < (unsigned) max ? want * 2 : (unsigned) max;
    }
    CHECK (bare < 6);
    zmq_socket_monitor (push, NULL, 0);
    zmq_close (mon);
    zmq_close (push);
}

int main (void)
{
    /* The full listener. */
    int listener = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset (&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    CHECK (bind (listener, (struct sockaddr *) &addr, sizeof addr) == 0);
    CHECK (listen (listener, 0) == 0);
    CHECK (getsockname (listener, (struct sockaddr *) &addr, &len) == 0);
    int filler = socket (AF_INET, SOCK_STREAM, 0);
    CHECK (connect (filler, (struct sockaddr *) &addr, sizeof addr) == 0);
    char ep[64];
    snprintf (ep, sizeof ep, "tcp://127.0.0.1:%d", ntohs (addr.sin_port));

    void *ctx = zmq_ctx_new ();
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    set_timeouts (push, 0);
    int timeout = TIMEOUT_MS, ivl = IVL_MS;
    CHECK (zmq_setsockopt (push, ZMQ_CONNECT_TIMEOUT, &timeout, sizeof timeout) == 0);
    CHECK (zmq_setsockopt (push, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) == 0);
    CHECK (zmq_socket_monitor (push, "inproc://connect-timeout-mon",
                               ZMQ_EVENT_CONNECT_DELAYED | ZMQ_EVENT_CLOSED
                                 | ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CONNECTED)
           == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (mon, 10000);
    CHECK (zmq_connect (mon, "inproc://connect-timeout-mon") == 0);
    long start = now_ms ();
    CHECK (zmq_connect (push, ep) == 0);
    for (int round = 0; round < 3; round++) {
        uint32_t value = 0;
        CHECK (read_event (mon, &value, NULL, 0) == ZMQ_EVENT_CONNECT_DELAYED);
        CHECK (read_event (mon, &value, NULL, 0) == ZMQ_EVENT_CLOSED);
        CHECK (read_event (mon, &value, NULL, 0) == ZMQ_EVENT_CONNECT_RETRIED);
        CHECK (value >= IVL_MS && value < 2 * IVL_MS);
        if (round == 0)
            CHECK (now_ms () - start >= TIMEOUT_MS);
    }
    zmq_socket_monitor (push, NULL, 0);
    zmq_close (mon);
    zmq_close (push);
    close (filler);
    close (listener);
    check_refused (ctx, ep, "inproc://connect-refused-tcp");
    check_backoff (ctx, ep);
    char ipc[64];
    snprintf (ipc, sizeof ipc, "ipc:///tmp/ferromq-refused-%d.ipc", (int) getpid ());
    check_refused (ctx, ipc, "inproc://connect-refused-ipc");
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
