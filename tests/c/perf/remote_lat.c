/* Latency, measuring side: a REQ socket connects, sends roundtrip-count messages of
   message-size bytes and waits for each echo; prints the one-way latency (half the mean
   round trip), as libzmq's perf/remote_lat. */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

int main (int argc, char *argv[])
{
    if (argc != 4) {
        printf ("usage: remote_lat <connect-to> <message-size> <roundtrip-count>\n");
        return 1;
    }
    const char *connect_to = argv[1];
    size_t message_size = (size_t) atoi (argv[2]);
    int roundtrip_count = atoi (argv[3]);

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_REQ);
    if (!s || zmq_connect (s, connect_to) != 0) {
        printf ("error in zmq_socket/zmq_connect: %s\n", zmq_strerror (zmq_errno ()));
        return -1;
    }
    zmq_msg_t msg;
    if (zmq_msg_init_size (&msg, message_size) != 0) {
        printf ("error in zmq_msg_init_size: %s\n", zmq_strerror (zmq_errno ()));
        return -1;
    }
    void *watch = zmq_stopwatch_start ();
    for (int i = 0; i != roundtrip_count; i++) {
        if (zmq_sendmsg (s, &msg, 0) < 0 || zmq_recvmsg (s, &msg, 0) < 0) {
            printf ("error in zmq_sendmsg/zmq_recvmsg: %s\n", zmq_strerror (zmq_errno ()));
            return -1;
        }
        if (zmq_msg_size (&msg) != message_size) {
            printf ("message of incorrect size received\n");
            return -1;
        }
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);

    double latency = (double) elapsed / (roundtrip_count * 2);
    printf ("message size: %d [B]\n", (int) message_size);
    printf ("roundtrip count: %d\n", roundtrip_count);
    printf ("average latency: %.3f [us]\n", latency);

    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
