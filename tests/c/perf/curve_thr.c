/* CURVE throughput through the C API (issue 16): the comparison bench's CURVE rows. The
   `zmq` crate's bundled libzmq has no CURVE, so ffi/perf/curve.sh builds this program against
   ferromq's libzmq.so and against the system libzmq (Debian's, with libsodium) and runs both
   alternately.

   usage: curve_thr PATTERN SIZE COUNT
     PATTERN: pair | dealer_router (the sender is PAIR / DEALER, the receiver PAIR / ROUTER)
   prints one CSV line: pattern,tcp,size,msgs_per_s,mb_per_s

   One process, two threads: a CURVE server socket bound on tcp://127.0.0.1:*, a CURVE client
   connected to it with fresh keys from zmq_curve_keypair, COUNT messages of SIZE bytes from
   the client's thread to the server's. As libzmq's local_thr does, the clock starts at the
   first message received (after the handshake) and stops at the last; the default HWMs apply,
   so the sender is held to the receiver's pace and every message is boxed and unboxed. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#define PERF_NAME "curve_thr"
#include "perf_util.h"

static void *ctx;
static int router;
static size_t size;
static long count;
static char endpoint[256], server_public[41];

static void *sender (void *arg)
{
    (void) arg;
    char public_[41], secret[41];
    CHECK (zmq_curve_keypair (public_, secret));
    void *s = zmq_socket (ctx, router ? ZMQ_DEALER : ZMQ_PAIR);
    if (!s)
        die ("zmq_socket");
    CHECK (zmq_setsockopt (s, ZMQ_CURVE_SERVERKEY, server_public, 40));
    CHECK (zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, public_, 40));
    CHECK (zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, secret, 40));
    CHECK (zmq_connect (s, endpoint));
    char *body = calloc (size ? size : 1, 1);
    if (!body)
        die ("calloc");
    for (long i = 0; i < count; i++)
        CHECK (zmq_send (s, body, size, 0));
    free (body);
    /* Linger (default: forever) lets the last messages leave before the close. */
    CHECK (zmq_close (s));
    return NULL;
}

int main (int argc, char **argv)
{
    if (argc != 4) {
        fprintf (stderr, "usage: curve_thr pair|dealer_router SIZE COUNT\n");
        return 2;
    }
    router = strcmp (argv[1], "dealer_router") == 0;
    if (!router && strcmp (argv[1], "pair") != 0) {
        fprintf (stderr, "curve_thr: unknown pattern %s\n", argv[1]);
        return 2;
    }
    size = (size_t) atol (argv[2]);
    count = atol (argv[3]);
    if (count < 2) {
        fprintf (stderr, "curve_thr: COUNT must be at least 2\n");
        return 2;
    }
    if (!zmq_has ("curve")) {
        fprintf (stderr, "curve_thr: this libzmq has no CURVE\n");
        return 1;
    }
    ctx = zmq_ctx_new ();
    char secret[41];
    CHECK (zmq_curve_keypair (server_public, secret));
    void *s = zmq_socket (ctx, router ? ZMQ_ROUTER : ZMQ_PAIR);
    if (!s)
        die ("zmq_socket");
    int one = 1;
    CHECK (zmq_setsockopt (s, ZMQ_CURVE_SERVER, &one, sizeof one));
    CHECK (zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, secret, 40));
    CHECK (zmq_bind (s, "tcp://127.0.0.1:*"));
    size_t len = sizeof endpoint;
    CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, endpoint, &len));

    pthread_t t;
    if (pthread_create (&t, NULL, sender, NULL) != 0) {
        fprintf (stderr, "curve_thr: pthread_create failed\n");
        return 1;
    }
    zmq_msg_t msg;
    CHECK (zmq_msg_init (&msg));
    double start = 0;
    for (long i = 0; i < count; i++) {
        if (router)
            CHECK (zmq_msg_recv (&msg, s, 0)); /* the routing id */
        CHECK (zmq_msg_recv (&msg, s, 0));
        if (zmq_msg_size (&msg) != size) {
            fprintf (stderr, "curve_thr: got %zu bytes, not %zu\n", zmq_msg_size (&msg), size);
            return 1;
        }
        if (i == 0)
            start = now_ns () / 1e9;
    }
    double elapsed = now_ns () / 1e9 - start;
    CHECK (zmq_msg_close (&msg));
    pthread_join (t, NULL);
    CHECK (zmq_close (s));
    CHECK (zmq_ctx_term (ctx));
    double rate = (double) (count - 1) / (elapsed > 0 ? elapsed : 1e-9);
    printf ("%s,tcp,%zu,%.0f,%.1f\n", argv[1], size, rate, rate * (double) size / 1e6);
    return 0;
}
