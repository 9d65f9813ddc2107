/* Every errno the socket API sets, where libzmq sets it: bad handles (EFAULT for contexts,
   ENOTSOCK for sockets), EAGAIN, EINTR (a signal during zmq_poll), ETERM (shutdown, a blocked
   call woken by zmq_ctx_term from another thread), EFSM, EHOSTUNREACH, EINVAL (types, options,
   sizes, endpoints), EPROTONOSUPPORT, EADDRINUSE, ENOENT, ENOTSUP, EMFILE, EMTHREAD.
   Prints "ok" and exits 0, or names the failed checks and exits 1.
   Built by tests/tests/c_errors.rs twice, against ferromq and against real libzmq (with
   -DREAL_LIBZMQ, which skips the checks where libzmq reads freed memory), so every
   expectation here is libzmq's own behaviour. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static void test_bad_handles (void)
{
    long not_a_handle[16] = {0};
    CHECK (zmq_socket (NULL, ZMQ_PAIR) == NULL && zmq_errno () == EFAULT);
    CHECK (zmq_socket (not_a_handle, ZMQ_PAIR) == NULL && zmq_errno () == EFAULT);
    CHECK_ERR (zmq_ctx_set (NULL, ZMQ_IO_THREADS, 1), EFAULT);
    CHECK_ERR (zmq_ctx_get (not_a_handle, ZMQ_IO_THREADS), EFAULT);
    CHECK_ERR (zmq_ctx_term (NULL), EFAULT);
    CHECK_ERR (zmq_ctx_shutdown (not_a_handle), EFAULT);

    CHECK_ERR (zmq_close (NULL), ENOTSOCK);
    CHECK_ERR (zmq_close (not_a_handle), ENOTSOCK);
    CHECK_ERR (zmq_bind (not_a_handle, "inproc://x"), ENOTSOCK);
    CHECK_ERR (zmq_send (NULL, "x", 1, 0), ENOTSOCK);
    char buf[4];
    CHECK_ERR (zmq_recv (not_a_handle, buf, sizeof buf, 0), ENOTSOCK);
    int v = 0;
    size_t len = sizeof v;
    CHECK_ERR (zmq_getsockopt (NULL, ZMQ_TYPE, &v, &len), ENOTSOCK);
    zmq_pollitem_t item = {not_a_handle, 0, ZMQ_POLLIN, 0};
    CHECK_ERR (zmq_poll (&item, 1, 0), ENOTSOCK);

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (zmq_close (s) == 0);
#ifndef REAL_LIBZMQ
    CHECK_ERR (zmq_close (s), ENOTSOCK); /* closed twice: refused, not freed twice */
#endif
    CHECK (zmq_ctx_term (ctx) == 0);
#ifndef REAL_LIBZMQ
    CHECK_ERR (zmq_ctx_term (ctx), EFAULT);
#endif
}

static void test_einval (void)
{
    void *ctx = zmq_ctx_new ();
    CHECK (zmq_socket (ctx, 99) == NULL && zmq_errno () == EINVAL);
    CHECK (zmq_socket (ctx, -1) == NULL && zmq_errno () == EINVAL);
    CHECK_ERR (zmq_ctx_set (ctx, ZMQ_MAX_SOCKETS, 0), EINVAL);
    CHECK_ERR (zmq_ctx_set (ctx, 12345, 1), EINVAL);
    CHECK_ERR (zmq_ctx_get (ctx, 12345), EINVAL);

    void *s = zmq_socket (ctx, ZMQ_DEALER);
    int v = 1;
    CHECK_ERR (zmq_setsockopt (s, 12345, &v, sizeof v), EINVAL);
    CHECK_ERR (zmq_setsockopt (s, ZMQ_SNDHWM, &v, 2), EINVAL);
    v = -5;
    CHECK_ERR (zmq_setsockopt (s, ZMQ_SNDHWM, &v, sizeof v), EINVAL);
    v = 1;
    CHECK_ERR (zmq_setsockopt (s, ZMQ_ROUTER_MANDATORY, &v, sizeof v), EINVAL);
    long long big = 0;
    size_t len = sizeof big; /* 8 bytes for an int option */
    CHECK_ERR (zmq_getsockopt (s, ZMQ_SNDHWM, &big, &len), EINVAL);
    char small[2];
    len = sizeof small;
    CHECK (zmq_bind (s, "inproc://a-rather-long-endpoint-name") == 0);
    CHECK_ERR (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, small, &len), EINVAL);

    CHECK_ERR (zmq_bind (s, "tcp://127.0.0.1:notaport"), EINVAL);
    CHECK_ERR (zmq_bind (s, "no-scheme"), EINVAL);
    CHECK_ERR (zmq_connect (s, "tcp://127.0.0.1"), EINVAL);
    CHECK_ERR (zmq_bind (s, "bogus://x"), EPROTONOSUPPORT);
    CHECK_ERR (zmq_connect (s, "bogus://x"), EPROTONOSUPPORT);
    CHECK_ERR (zmq_unbind (s, "tcp://127.0.0.1:1"), ENOENT);
    CHECK_ERR (zmq_disconnect (s, "tcp://127.0.0.1:1"), ENOENT);
    zmq_close (s);
    CHECK (zmq_ctx_term (ctx) == 0);
}

/* Validation order and endpoint rules of libzmq 4.3: z85 checks the size before any pointer;
   ipc paths longer than sun_path give ENAMETOOLONG, an empty abstract name EINVAL, both at bind
   and at connect; zmq_connect checks a tcp address's syntax (a space in the host is EINVAL);
   unbind looks up the resolved endpoint, so a wildcard as bound is ENOENT; a connect sets
   ZMQ_LAST_ENDPOINT to its endpoint as given. */
static void test_validation (void)
{
    char text[16];
    unsigned char bin[16];
    CHECK (zmq_z85_encode (NULL, NULL, 3) == NULL && zmq_errno () == EINVAL);
    CHECK (zmq_z85_encode (text, NULL, 5) == NULL && zmq_errno () == EINVAL);
    CHECK (zmq_z85_decode (NULL, "Hell") == NULL && zmq_errno () == EINVAL);
    CHECK (zmq_z85_decode (NULL, "Hell~") == NULL && zmq_errno () == EINVAL);
    CHECK (zmq_z85_decode (bin, "") == NULL && zmq_errno () == EINVAL);

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PULL);
    /* sun_path holds 108 bytes with its NUL: a 108-byte path is too long, 107 fits. */
    char path[128];
    snprintf (path, sizeof path, "ipc:///tmp/ferromq-errors-%08d-", (int) getpid ());
    size_t prefix = strlen ("ipc://");
    while (strlen (path) - prefix < 108)
        strcat (path, "x");
    CHECK_ERR (zmq_bind (s, path), ENAMETOOLONG);
    CHECK_ERR (zmq_connect (s, path), ENAMETOOLONG);
    path[strlen (path) - 1] = 0;
    CHECK (zmq_bind (s, path) == 0);
    CHECK (zmq_unbind (s, path) == 0);
    char abstract[128];
    memcpy (abstract, "ipc://@", 7);
    memset (abstract + 7, 'y', 107);
    abstract[7 + 107] = 0;
    CHECK_ERR (zmq_bind (s, abstract), ENAMETOOLONG);
    CHECK_ERR (zmq_bind (s, "ipc://@"), EINVAL);
    CHECK_ERR (zmq_connect (s, "ipc://@"), EINVAL);

    CHECK_ERR (zmq_connect (s, "tcp://local host:5555"), EINVAL);
    CHECK_ERR (zmq_connect (s, "tcp://127.0.0.1 :5555"), EINVAL);
    CHECK_ERR (zmq_connect (s, "tcp://-host:5555"), EINVAL);
    CHECK_ERR (zmq_connect (s, "tcp://127.0.0.1:*"), EINVAL);
    CHECK_ERR (zmq_bind (s, "tcp://local host:5555"), ENODEV);

    CHECK (zmq_bind (s, "tcp://*:*") == 0);
    CHECK_ERR (zmq_unbind (s, "tcp://*:*"), ENOENT);
    CHECK (zmq_bind (s, "tcp://127.0.0.1:*") == 0);
    CHECK_ERR (zmq_unbind (s, "tcp://127.0.0.1:*"), ENOENT);
    char ep[256];
    size_t len = sizeof ep;
    CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, ep, &len) == 0);
    CHECK (zmq_unbind (s, ep) == 0);
    /* A name resolves to the bound address, as libzmq resolves it. */
    CHECK (zmq_bind (s, "tcp://127.0.0.1:*") == 0);
    len = sizeof ep;
    CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, ep, &len) == 0);
    char by_name[256];
    snprintf (by_name, sizeof by_name, "tcp://localhost:%s", strrchr (ep, ':') + 1);
    CHECK (zmq_unbind (s, by_name) == 0);
    CHECK_ERR (zmq_unbind (s, ep), ENOENT);
    CHECK (zmq_bind (s, "ipc://*") == 0);
    CHECK_ERR (zmq_unbind (s, "ipc://*"), ENOENT);
    len = sizeof ep;
    CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, ep, &len) == 0);
    CHECK (zmq_unbind (s, ep) == 0);
    /* A connect sets ZMQ_LAST_ENDPOINT too, to the endpoint as given. */
    const char *targets[] = {"tcp://127.0.0.1:1", "ipc:///nonexistent/errors.ipc",
                             "inproc://errors-never-bound"};
    for (int i = 0; i < 3; i++) {
        CHECK (zmq_connect (s, targets[i]) == 0);
        len = sizeof ep;
        CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, ep, &len) == 0);
        CHECK (strcmp (ep, targets[i]) == 0 && len == strlen (targets[i]) + 1);
    }
    zmq_close (s);
    CHECK (zmq_ctx_term (ctx) == 0);
}

static void test_addr_in_use (void)
{
    void *ctx = zmq_ctx_new ();
    void *a = zmq_socket (ctx, ZMQ_PULL);
    void *b = zmq_socket (ctx, ZMQ_PULL);
    char ep[256];
    CHECK (bind_resolved (a, "tcp://127.0.0.1:*", ep, sizeof ep) == 0);
    CHECK_ERR (zmq_bind (b, ep), EADDRINUSE);
    CHECK (zmq_bind (a, "inproc://taken") == 0);
    CHECK_ERR (zmq_bind (b, "inproc://taken"), EADDRINUSE);
    CHECK (zmq_unbind (a, ep) == 0);
    zmq_close (a);
    zmq_close (b);
    CHECK (zmq_ctx_term (ctx) == 0);
}

static void test_eagain_efsm_ehostunreach_enotsup (void)
{
    void *ctx = zmq_ctx_new ();
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    char buf[8];
    CHECK_ERR (zmq_recv (pull, buf, sizeof buf, ZMQ_DONTWAIT), EAGAIN);
    int timeout = 20;
    zmq_setsockopt (pull, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    CHECK_ERR (zmq_recv (pull, buf, sizeof buf, 0), EAGAIN);
    CHECK_ERR (zmq_send (pull, "x", 1, 0), ENOTSUP);

    void *push = zmq_socket (ctx, ZMQ_PUSH);
    CHECK_ERR (zmq_send (push, "x", 1, ZMQ_DONTWAIT), EAGAIN); /* no peer */
    zmq_msg_t msg;
    zmq_msg_init_size (&msg, 3);
    memcpy (zmq_msg_data (&msg), "abc", 3);
    CHECK_ERR (zmq_msg_send (&msg, push, ZMQ_DONTWAIT), EAGAIN);
    CHECK (zmq_msg_size (&msg) == 3); /* a failed send leaves the message intact */
    CHECK (memcmp (zmq_msg_data (&msg), "abc", 3) == 0);
    zmq_msg_close (&msg);
#ifndef REAL_LIBZMQ
    /* A closed message: libzmq asserts (aborts) in zmq_msg_size, ferromq says EFAULT. */
    CHECK_ERR (zmq_msg_send (&msg, push, 0), EFAULT);
#endif

    void *req = zmq_socket (ctx, ZMQ_REQ);
    void *rep = zmq_socket (ctx, ZMQ_REP);
    CHECK (zmq_bind (rep, "inproc://efsm") == 0);
    CHECK (zmq_connect (req, "inproc://efsm") == 0);
    CHECK_ERR (zmq_recv (req, buf, sizeof buf, 0), EFSM); /* REQ must send first */
    CHECK_ERR (zmq_send (rep, "x", 1, 0), EFSM);          /* REP must receive first */
    zmq_msg_t long_msg; /* a long message refused by the pattern comes back intact too */
    zmq_msg_init_size (&long_msg, 100);
    memset (zmq_msg_data (&long_msg), 'L', 100);
    CHECK_ERR (zmq_msg_send (&long_msg, rep, 0), EFSM);
    CHECK (zmq_msg_size (&long_msg) == 100);
    CHECK (((char *) zmq_msg_data (&long_msg))[99] == 'L');
    zmq_msg_close (&long_msg);
    CHECK (zmq_send (req, "q", 1, 0) == 1);
    CHECK_ERR (zmq_send (req, "q", 1, 0), EFSM); /* no second request before the reply */

    void *router = zmq_socket (ctx, ZMQ_ROUTER);
    int on = 1;
    CHECK (zmq_setsockopt (router, ZMQ_ROUTER_MANDATORY, &on, sizeof on) == 0);
    CHECK_ERR (zmq_send (router, "nobody", 6, ZMQ_SNDMORE), EHOSTUNREACH);

    CHECK_ERR (zmq_socket_monitor (push, "tcp://127.0.0.1:5555", ZMQ_EVENT_ALL),
               EPROTONOSUPPORT);
    zmq_close (pull);
    zmq_close (push);
    zmq_close (req);
    zmq_close (rep);
    zmq_close (router);
    CHECK (zmq_ctx_term (ctx) == 0);
}

static void on_alarm (int sig)
{
    (void) sig;
}

static void test_eintr (void)
{
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: poll(2) returns EINTR */
    sigemptyset (&sa.sa_mask);
    CHECK (sigaction (SIGALRM, &sa, NULL) == 0);
    void *ctx = zmq_ctx_new ();
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    zmq_pollitem_t item = {pull, 0, ZMQ_POLLIN, 0};
    alarm (1);
    CHECK_ERR (zmq_poll (&item, 1, 10000), EINTR);
    alarm (0);
    zmq_close (pull);
    CHECK (zmq_ctx_term (ctx) == 0);
}

static void test_emfile_and_emthread (void)
{
    void *ctx = zmq_ctx_new ();
    CHECK (zmq_ctx_set (ctx, ZMQ_MAX_SOCKETS, 2) == 0);
    void *a = zmq_socket (ctx, ZMQ_PAIR);
    void *b = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (a && b);
    CHECK (zmq_socket (ctx, ZMQ_PAIR) == NULL && zmq_errno () == EMFILE);
    zmq_close (b);
#ifndef REAL_LIBZMQ
    /* libzmq frees the slot later, in its reaper thread; ferromq at once. */
    b = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (b != NULL);
    zmq_close (b);
#endif
    zmq_close (a);
    CHECK (zmq_ctx_term (ctx) == 0);

    /* No I/O thread: inproc works, tcp cannot. */
    ctx = zmq_ctx_new ();
    CHECK (zmq_ctx_set (ctx, ZMQ_IO_THREADS, 0) == 0);
    a = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (zmq_bind (a, "inproc://no-io") == 0);
    CHECK_ERR (zmq_bind (a, "tcp://127.0.0.1:*"), EMTHREAD);
    zmq_close (a);
    CHECK (zmq_ctx_term (ctx) == 0);
}

static void blocked_receiver (void *arg)
{
    void *s = arg;
    char buf[8];
    int rc = zmq_recv (s, buf, sizeof buf, 0);
    CHECK (rc == -1 && zmq_errno () == ETERM);
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    CHECK_ERR (zmq_poll (&item, 1, -1), ETERM);
    CHECK_ERR (zmq_send (s, "x", 1, 0), ETERM);
    zmq_close (s);
}

static void test_eterm (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PAIR);
    void *thread = zmq_threadstart (blocked_receiver, s);
    struct timespec delay = {0, 50 * 1000 * 1000};
    nanosleep (&delay, NULL);
    /* Blocks until the receiver, woken with ETERM, closes its socket. */
    CHECK (zmq_ctx_term (ctx) == 0);
    zmq_threadclose (thread);

    ctx = zmq_ctx_new ();
    s = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (zmq_ctx_shutdown (ctx) == 0);
    CHECK (zmq_socket (ctx, ZMQ_PAIR) == NULL && zmq_errno () == ETERM);
    CHECK_ERR (zmq_bind (s, "inproc://after-shutdown"), ETERM);
    zmq_close (s);
    CHECK (zmq_ctx_term (ctx) == 0);
}

int main (void)
{
    test_bad_handles ();
    test_einval ();
    test_validation ();
    test_addr_in_use ();
    test_eagain_efsm_ehostunreach_enotsup ();
    test_eintr ();
    test_emfile_and_emthread ();
    test_eterm ();
    return report ();
}
