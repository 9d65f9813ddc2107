/* Round trips through zmq_poll: every answer is seen, whether it comes at once or late.

   A requester sends and then waits in zmq_poll for the answer, as a CZMQ zpoller or a C event
   loop does; ferromq waits awake for up to 20 us first when the set holds sockets alone, then
   sleeps in poll(2) (docs/compatibility.md). The replier answers at once, except every 97th
   answer, which it holds back 2 ms (past the wait awake: the requester must be woken from its
   sleep), and every 89th, which it sends as two messages 1 ms apart (the second arrives after
   the requester saw the first). Every 7th round the requester polls a set with a pipe's read
   end beside the socket, which never waits awake. A lost notification shows as a poll that
   returns 0 after 5 s. Over inproc and tcp, 3,000 round trips each; and first, zmq_poll
   clears ZMQ_FD as ZMQ_EVENTS does (poll_clears_zmq_fd). Built by
   tests/tests/c_poll_answer.rs against ferromq and against real libzmq. */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define ROUNDS 3000

static void pause_ms (long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep (&ts, NULL);
}

/* Polls `s` (and `fd` when it is not -1) for input, up to 5 s; 1 when the socket is readable. */
static int poll_for_input (void *s, int fd)
{
    zmq_pollitem_t items[2] = {{s, 0, ZMQ_POLLIN, 0}, {NULL, fd, ZMQ_POLLIN, 0}};
    int rc = zmq_poll (items, fd == -1 ? 1 : 2, 5000);
    return rc >= 1 && (items[0].revents & ZMQ_POLLIN) && items[1].revents == 0;
}

static void replier (void *s)
{
    char buf[16];
    for (int i = 0; i != ROUNDS; i++) {
        if (!poll_for_input (s, -1) || zmq_recv (s, buf, sizeof buf, ZMQ_DONTWAIT) != 4)
            return;
        if (i % 97 == 96)
            pause_ms (2);
        if (i % 89 == 88) {
            if (zmq_send (s, "half", 4, 0) != 4)
                return;
            pause_ms (1);
        }
        if (zmq_send (s, buf, 4, 0) != 4)
            return;
    }
}

static void round_trips (void *ctx, const char *endpoint)
{
    void *req = zmq_socket (ctx, ZMQ_DEALER);
    void *rep = zmq_socket (ctx, ZMQ_DEALER);
    set_timeouts (req, 5000);
    set_timeouts (rep, 5000);
    char bound[64];
    CHECK (bind_resolved (rep, endpoint, bound, sizeof bound) == 0);
    CHECK (zmq_connect (req, bound) == 0);
    int pipe_fds[2];
    CHECK (pipe (pipe_fds) == 0);
    void *thread = zmq_threadstart (replier, rep);
    int seen = 0;
    for (int i = 0; i != ROUNDS; i++) {
        char out[4] = {(char) i, (char) (i >> 8), 'q', '!'}, in[16];
        CHECK (zmq_send (req, out, 4, 0) == 4);
        int fd = i % 7 == 0 ? pipe_fds[0] : -1;
        if (i % 89 == 88) {
            if (!poll_for_input (req, fd) || zmq_recv (req, in, sizeof in, 0) != 4
                || memcmp (in, "half", 4) != 0)
                break;
        }
        if (!poll_for_input (req, fd) || zmq_recv (req, in, sizeof in, ZMQ_DONTWAIT) != 4
            || memcmp (in, out, 4) != 0)
            break;
        seen++;
    }
    if (seen != ROUNDS)
        fprintf (stderr, "%s: %d of %d answers seen\n", endpoint, seen, ROUNDS);
    CHECK (seen == ROUNDS);
    zmq_threadclose (thread);
    close (pipe_fds[0]);
    close (pipe_fds[1]);
    zmq_close (req);
    zmq_close (rep);
}

/* zmq_poll reads each socket's ZMQ_EVENTS, which clears ZMQ_FD as libzmq's does: a program
   that waits on ZMQ_FD level-triggered and asks zmq_poll with timeout 0 what is ready finds
   the fd clear once it has received what zmq_poll reported, instead of spinning on it. */
static void poll_clears_zmq_fd (void *ctx)
{
    void *a = zmq_socket (ctx, ZMQ_PAIR);
    void *b = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (a, 5000);
    set_timeouts (b, 5000);
    CHECK (zmq_bind (a, "inproc://poll-clears-fd") == 0);
    CHECK (zmq_connect (b, "inproc://poll-clears-fd") == 0);
    int fd = -1;
    size_t len = sizeof fd;
    CHECK (zmq_getsockopt (a, ZMQ_FD, &fd, &len) == 0 && fd >= 0);
    zmq_pollitem_t item = {a, 0, ZMQ_POLLIN, 0};
    char buf[16];
    for (int i = 0; i != 100; i++) {
        CHECK (zmq_poll (&item, 1, 0) == 0);
        CHECK (send_str (b, "level", 0) == 5);
        struct pollfd pfd = {fd, POLLIN, 0};
        CHECK (poll (&pfd, 1, 5000) == 1);
        CHECK (zmq_poll (&item, 1, 0) == 1 && item.revents == ZMQ_POLLIN);
        CHECK (recv_str (a, buf, sizeof buf, ZMQ_DONTWAIT) == 5);
        CHECK (zmq_poll (&item, 1, 0) == 0);
        pfd.revents = 0;
        CHECK (poll (&pfd, 1, 0) == 0);
    }
    zmq_close (a);
    zmq_close (b);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    poll_clears_zmq_fd (ctx);
    round_trips (ctx, "inproc://poll-answer");
    round_trips (ctx, "tcp://127.0.0.1:*");
    zmq_ctx_term (ctx);
    return report ();
}
