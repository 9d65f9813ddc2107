/* Latency over inproc, one process: a REP socket binds, a second thread connects a REQ socket
   and makes roundtrip-count round trips of message-size bytes; prints the mean one-way time.
   The interface and output of libzmq's perf/inproc_lat; built against ferromq and against
   libzmq by ffi/perf/compare.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

static size_t message_size;
static int roundtrip_count;

static void worker (void *ctx)
{
    void *s = zmq_socket (ctx, ZMQ_REP);
    if (!s || zmq_connect (s, "inproc://lat_test") != 0) {
        printf ("error in zmq_socket/zmq_connect: %s\n", zmq_strerror (zmq_errno ()));
        exit (1);
    }
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    for (int i = 0; i != roundtrip_count; i++) {
        if (zmq_recvmsg (s, &msg, 0) < 0 || zmq_sendmsg (s, &msg, 0) < 0) {
            printf ("error in zmq_recvmsg/zmq_sendmsg: %s\n", zmq_strerror (zmq_errno ()));
            exit (1);
        }
    }
    zmq_msg_close (&msg);
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    if (argc != 3) {
        printf ("usage: inproc_lat <message-size> <roundtrip-count>\n");
        return 1;
    }
    message_size = (size_t) atoi (argv[1]);
    roundtrip_count = atoi (argv[2]);
    if (roundtrip_count < 1) {
        printf ("roundtrip-count must be at least 1\n");
        return 1;
    }
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_REQ);
    if (!s || zmq_bind (s, "inproc://lat_test") != 0) {
        printf ("error in zmq_socket/zmq_bind: %s\n", zmq_strerror (zmq_errno ()));
        return 1;
    }
    void *thread = zmq_threadstart (worker, ctx);
    zmq_msg_t msg;
    if (zmq_msg_init_size (&msg, message_size) != 0) {
        printf ("error in zmq_msg_init_size: %s\n", zmq_strerror (zmq_errno ()));
        return 1;
    }
    printf ("message size: %d [B]\n", (int) message_size);
    printf ("roundtrip count: %d\n", roundtrip_count);
    void *watch = zmq_stopwatch_start ();
    for (int i = 0; i != roundtrip_count; i++) {
        if (zmq_sendmsg (s, &msg, 0) < 0 || zmq_recvmsg (s, &msg, 0) < 0
            || zmq_msg_size (&msg) != message_size) {
            printf ("error in a round trip or message of incorrect size\n");
            return 1;
        }
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);
    zmq_threadclose (thread);

    double latency = (double) elapsed / (roundtrip_count * 2);
    printf ("average latency: %.3f [us]\n", latency);

    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
