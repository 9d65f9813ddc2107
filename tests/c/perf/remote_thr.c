/* Throughput, sending side: a PUSH socket connects and sends message-count messages of
   message-size bytes, each from zmq_msg_init_size and never filled (as libzmq's
   perf/remote_thr does, so neither library measures memset). */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

int main (int argc, char *argv[])
{
    if (argc != 4) {
        printf ("usage: remote_thr <connect-to> <message-size> <message-count>\n");
        return 1;
    }
    const char *connect_to = argv[1];
    size_t message_size = (size_t) atoi (argv[2]);
    int message_count = atoi (argv[3]);

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    if (!s || zmq_connect (s, connect_to) != 0) {
        printf ("error in zmq_socket/zmq_connect: %s\n", zmq_strerror (zmq_errno ()));
        return -1;
    }
    for (int i = 0; i != message_count; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init_size (&msg, message_size) != 0
            || zmq_sendmsg (s, &msg, 0) < 0) {
            printf ("error in zmq_sendmsg: %s\n", zmq_strerror (zmq_errno ()));
            return -1;
        }
        zmq_msg_close (&msg);
    }
    /* Default linger: close and term wait until every message is on the wire. */
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
