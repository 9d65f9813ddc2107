/* What a connection costs to make, through the C API: a fresh socket connects to a bound
   server, sends one message, gets it back and closes, again and again. Programs that open a
   connection per job (a REQ client per request, a worker per task) pay this cycle each time;
   the throughput and latency tools never see it. ffi/perf/setup.sh builds it against
   ferromq's libzmq.so and against real libzmq and runs both alternately.

   usage: setup TRANSPORT CYCLES [PATTERN]
   TRANSPORT tcp or ipc; PATTERN dealer (DEALER to ROUTER, the default) or req (REQ to REP).
   Prints one CSV line: pattern,transport,median_ns,p10_ns,p90_ns, over CYCLES cycles after
   ten warm-up ones. A cycle is zmq_socket, zmq_connect (ZMTP greeting and handshake), one
   round trip of a 1-byte message and zmq_close with linger 0. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#define PERF_NAME "setup"
#include "perf_util.h"

static int by_value (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* The server's side of one round trip: echo what came, envelope included. */
static void echo (void *server)
{
    int more = 1;
    while (more) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        CHECK (zmq_msg_recv (&part, server, 0));
        more = zmq_msg_more (&part);
        CHECK (zmq_msg_send (&part, server, more ? ZMQ_SNDMORE : 0));
    }
}

static double one_cycle (void *ctx, void *server, const char *endpoint, int client_type)
{
    double start = now_ns ();
    void *client = zmq_socket (ctx, client_type);
    if (!client)
        die ("zmq_socket");
    int linger = 0;
    CHECK (zmq_setsockopt (client, ZMQ_LINGER, &linger, sizeof linger));
    CHECK (zmq_connect (client, endpoint));
    CHECK (zmq_send (client, "x", 1, 0));
    echo (server);
    char buf[4];
    CHECK (zmq_recv (client, buf, sizeof buf, 0));
    CHECK (zmq_close (client));
    return now_ns () - start;
}

int main (int argc, char **argv)
{
    if (argc < 3) {
        fprintf (stderr, "usage: setup tcp|ipc CYCLES [dealer|req]\n");
        return 2;
    }
    const char *transport = argv[1];
    int cycles = atoi (argv[2]);
    const char *pattern = argc > 3 ? argv[3] : "dealer";
    int req = strcmp (pattern, "req") == 0;
    if (cycles < 1 || (!req && strcmp (pattern, "dealer") != 0)) {
        fprintf (stderr, "setup: bad CYCLES or PATTERN\n");
        return 2;
    }
    char bind_at[128];
    if (strcmp (transport, "ipc") == 0)
        snprintf (bind_at, sizeof bind_at, "ipc:///tmp/ferromq-setup-%d.ipc", (int) getpid ());
    else
        snprintf (bind_at, sizeof bind_at, "tcp://127.0.0.1:*");

    void *ctx = zmq_ctx_new ();
    void *server = zmq_socket (ctx, req ? ZMQ_REP : ZMQ_ROUTER);
    if (!server)
        die ("zmq_socket");
    CHECK (zmq_bind (server, bind_at));
    char endpoint[256];
    size_t len = sizeof endpoint;
    CHECK (zmq_getsockopt (server, ZMQ_LAST_ENDPOINT, endpoint, &len));

    int client_type = req ? ZMQ_REQ : ZMQ_DEALER;
    for (int i = 0; i < 10; i++)
        one_cycle (ctx, server, endpoint, client_type);
    double *t = malloc (sizeof *t * (size_t) cycles);
    if (!t)
        return 1;
    for (int i = 0; i < cycles; i++)
        t[i] = one_cycle (ctx, server, endpoint, client_type);
    qsort (t, (size_t) cycles, sizeof *t, by_value);
    printf ("%s,%s,%.0f,%.0f,%.0f\n", pattern, transport, t[cycles / 2], t[cycles / 10],
            t[cycles * 9 / 10]);
    free (t);
    CHECK (zmq_close (server));
    CHECK (zmq_ctx_term (ctx));
    return 0;
}
