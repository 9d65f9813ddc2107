/* zmq_proxy_steerable with one socket as frontend and backend, which libzmq allows: a REP
   socket proxied onto itself echoes each request to the REQ that sent it,
   until TERMINATE on the control socket (rc 0). Also zmq_proxy (s, s, NULL) ended by
   zmq_ctx_shutdown (-1, ETERM).
   Prints "ok", or names the failed checks and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

struct proxy_args
{
    void *socket;
    void *control;
    int rc;
    int err;
};

static void run_proxy (void *arg)
{
    struct proxy_args *p = (struct proxy_args *) arg;
    p->rc = p->control
              ? zmq_proxy_steerable (p->socket, p->socket, NULL, p->control)
              : zmq_proxy (p->socket, p->socket, NULL);
    p->err = zmq_errno ();
}

/* Single-part requests only: the proxy moves a message part by part, and a REP cannot send
   before it has received the whole request (EFSM, in libzmq as here). */
static void echo_round_trips (void *req)
{
    char buf[32];
    CHECK (send_str (req, "one", 0) == 3);
    CHECK (recv_str (req, buf, sizeof buf, 0) == 3 && strcmp (buf, "one") == 0);
    CHECK (send_str (req, "second", 0) == 6);
    CHECK (recv_str (req, buf, sizeof buf, 0) == 6 && strcmp (buf, "second") == 0);
    CHECK (rcvmore (req) == 0);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    void *rep = zmq_socket (ctx, ZMQ_REP);
    char ep[256];
    CHECK (bind_resolved (rep, "tcp://127.0.0.1:*", ep, sizeof ep) == 0);
    void *control_in = zmq_socket (ctx, ZMQ_PAIR);
    void *control_out = zmq_socket (ctx, ZMQ_PAIR);
    CHECK (zmq_bind (control_in, "inproc://single-control") == 0);
    CHECK (zmq_connect (control_out, "inproc://single-control") == 0);
    struct proxy_args args = {rep, control_in, 99, 0};
    void *thread = zmq_threadstart (run_proxy, &args);

    void *req = zmq_socket (ctx, ZMQ_REQ);
    set_timeouts (req, 5000);
    CHECK (zmq_connect (req, ep) == 0);
    echo_round_trips (req);
    CHECK (send_str (control_out, "TERMINATE", 0) == 9);
    zmq_threadclose (thread);
    CHECK (args.rc == 0);

    /* zmq_proxy on the same socket, ended by shutting the context down. */
    struct proxy_args plain = {rep, NULL, 99, 0};
    thread = zmq_threadstart (run_proxy, &plain);
    zmq_close (req);
    req = zmq_socket (ctx, ZMQ_REQ);
    set_timeouts (req, 5000);
    CHECK (zmq_connect (req, ep) == 0);
    echo_round_trips (req);
    CHECK (zmq_ctx_shutdown (ctx) == 0);
    zmq_threadclose (thread);
    CHECK (plain.rc == -1 && plain.err == ETERM);

    zmq_close (req);
    zmq_close (rep);
    zmq_close (control_in);
    zmq_close (control_out);
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
