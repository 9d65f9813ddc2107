/* zmq_close from another thread while a thread is blocked in zmq_recv or zmq_poll on the
   socket (issue 14). Misuse in libzmq too, which aborts on an assertion or frees the socket
   under the blocked call; ferromq refuses the close with EBUSY, leaves the socket usable, and
   closes it once the blocked call has returned.
   Built by tests/tests/c_close_busy.rs twice, against ferromq and against real libzmq (with
   -DREAL_LIBZMQ, which skips the concurrent close libzmq does not survive): both must print
   "ok". */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "testutil.h"

static int result;

static void blocked_receiver (void *s)
{
    char buf[8];
    result = zmq_recv (s, buf, sizeof buf, 0);
}

static void blocked_poller (void *s)
{
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    result = zmq_poll (&item, 1, -1);
}

/* Blocks a thread in `call` on a PULL, tries to close the PULL meanwhile, then wakes the
   thread with a message and closes the PULL for real. */
static void close_while_blocked (void *ctx,
                                 void (*call) (void *),
                                 const char *endpoint,
                                 int expected)
{
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    int linger = 0;
    CHECK (zmq_setsockopt (pull, ZMQ_LINGER, &linger, sizeof linger) == 0);
    CHECK (zmq_bind (pull, endpoint) == 0);
    result = -2;
    void *thread = zmq_threadstart (call, pull);
    struct timespec delay = {0, 300 * 1000 * 1000};
    nanosleep (&delay, NULL);
#ifndef REAL_LIBZMQ
    CHECK_ERR (zmq_close (pull), EBUSY);
    /* Still open: a second attempt is EBUSY again, not ENOTSOCK. */
    CHECK_ERR (zmq_close (pull), EBUSY);
#endif
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    set_timeouts (push, 5000);
    CHECK (zmq_connect (push, endpoint) == 0);
    CHECK (send_str (push, "wake", 0) == 4);
    zmq_threadclose (thread);
    CHECK (result == expected);
    CHECK (zmq_close (pull) == 0);
    CHECK_ERR (zmq_close (pull), ENOTSOCK);
    CHECK (zmq_close (push) == 0);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    close_while_blocked (ctx, blocked_receiver, "inproc://close-busy-recv", 4);
    close_while_blocked (ctx, blocked_poller, "inproc://close-busy-poll", 1);
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
