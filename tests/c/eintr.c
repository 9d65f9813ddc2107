/* A signal interrupts blocking calls with EINTR (issue 13, defect 4), as in libzmq: a SIGALRM
   handler installed without SA_RESTART ends a blocking zmq_recv, zmq_send, zmq_poll and
   zmq_ctx_term with -1/EINTR, so Ctrl-C and alarms can stop a program blocked in ZeroMQ. */
#define _GNU_SOURCE
#include "testutil.h"

#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms = 0;

static void on_alarm (int sig)
{
    (void) sig;
    alarms++;
}

/* One SIGALRM in `ms` milliseconds. */
static void alarm_in (int ms)
{
    struct itimerval t;
    memset (&t, 0, sizeof t);
    t.it_value.tv_sec = ms / 1000;
    t.it_value.tv_usec = (ms % 1000) * 1000;
    setitimer (ITIMER_REAL, &t, NULL);
}

/* A REQ waiting for its answer over `endpoint`: a signal ends its zmq_recv and its
   zmq_poll with EINTR (two alarms), and the answers that come afterwards still arrive. */
static void answer_interrupted (void *ctx, const char *endpoint)
{
    char buf[16];
    char resolved[256];
    void *rep = zmq_socket (ctx, ZMQ_REP);
    void *req = zmq_socket (ctx, ZMQ_REQ);
    CHECK (bind_resolved (rep, endpoint, resolved, sizeof resolved) == 0);
    CHECK (zmq_connect (req, resolved) == 0);
    set_timeouts (rep, 2000);
    set_timeouts (req, 2000);
    /* One round trip first, so that a tcp or ipc connection is up before the waits. */
    CHECK (send_str (req, "hello", 0) == 5);
    CHECK (recv_str (rep, buf, sizeof buf, 0) == 5);
    CHECK (send_str (rep, "hi", 0) == 2);
    CHECK (recv_str (req, buf, sizeof buf, 0) == 2);
    set_timeouts (req, -1);
    int before = alarms;
    CHECK (send_str (req, "question", 0) == 8);
    CHECK (recv_str (rep, buf, sizeof buf, 0) == 8);
    alarm_in (100);
    CHECK_ERR (zmq_recv (req, buf, sizeof buf, 0), EINTR);
    CHECK (alarms == before + 1);
    /* The answer that comes later is still received. */
    CHECK (send_str (rep, "answer", 0) == 6);
    set_timeouts (req, 2000);
    CHECK (recv_str (req, buf, sizeof buf, 0) == 6);
    /* So is a zmq_poll that waits for the next answer (it waits awake first too). */
    CHECK (send_str (req, "again", 0) == 5);
    CHECK (recv_str (rep, buf, sizeof buf, 0) == 5);
    zmq_pollitem_t answer[] = {{req, 0, ZMQ_POLLIN, 0}};
    alarm_in (100);
    CHECK_ERR (zmq_poll (answer, 1, -1), EINTR);
    CHECK (alarms == before + 2);
    CHECK (send_str (rep, "answer", 0) == 6);
    CHECK (zmq_poll (answer, 1, 2000) == 1 && answer[0].revents == ZMQ_POLLIN);
    CHECK (recv_str (req, buf, sizeof buf, 0) == 6);
    zmq_close (req);
    zmq_close (rep);
}

int main (void)
{
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset (&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART */
    sigaction (SIGALRM, &sa, NULL);

    void *ctx = zmq_ctx_new ();
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    int linger = 0;
    zmq_setsockopt (push, ZMQ_LINGER, &linger, sizeof linger);
    char resolved[256];
    CHECK (bind_resolved (pull, "tcp://127.0.0.1:*", resolved, sizeof resolved) == 0);

    /* recv with nothing to receive and no timeout */
    char buf[16];
    alarm_in (100);
    CHECK_ERR (zmq_recv (pull, buf, sizeof buf, 0), EINTR);
    CHECK (alarms == 1);

    /* send on a PUSH with no peer blocks until a peer appears */
    alarm_in (100);
    CHECK_ERR (zmq_send (push, "x", 1, 0), EINTR);
    CHECK (alarms == 2);

    /* poll forever on a socket with nothing to read */
    zmq_pollitem_t items[] = {{pull, 0, ZMQ_POLLIN, 0}};
    alarm_in (100);
    CHECK_ERR (zmq_poll (items, 1, -1), EINTR);
    CHECK (alarms == 3);

    /* The sockets still work afterwards. */
    CHECK (zmq_connect (push, resolved) == 0);
    CHECK (send_str (push, "after", 0) == 5);
    set_timeouts (pull, 2000);
    CHECK (recv_str (pull, buf, sizeof buf, 0) == 5);

    /* A receive that waits for an answer (a REQ that sent; ferromq waits awake for a while
       first, then sleeps, on tcp and ipc polling the connection it borrowed from its I/O
       thread) is interrupted too, over each transport. */
    answer_interrupted (ctx, "inproc://eintr-answer");
    answer_interrupted (ctx, "tcp://127.0.0.1:*");
    answer_interrupted (ctx, "ipc://*");
    CHECK (alarms == 9);

    zmq_close (push);

    /* zmq_ctx_term waits for pull, still open: a signal ends the wait with EINTR and the
       context stays shut down (pull's calls and a new socket fail with ETERM); once pull is
       closed, a second term completes. */
    alarm_in (100);
    CHECK_ERR (zmq_ctx_term (ctx), EINTR);
    CHECK (alarms == 10);
    CHECK_ERR (zmq_recv (pull, buf, sizeof buf, 0), ETERM);
    CHECK (zmq_socket (ctx, ZMQ_PAIR) == NULL && zmq_errno () == ETERM);
    zmq_close (pull);
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
