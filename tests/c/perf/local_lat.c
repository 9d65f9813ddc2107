/* Latency, echoing side: a REP socket binds and sends back roundtrip-count messages of
   message-size bytes (libzmq's perf/local_lat). */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

int main (int argc, char *argv[])
{
    if (argc != 4) {
        printf ("usage: local_lat <bind-to> <message-size> <roundtrip-count>\n");
        return 1;
    }
    const char *bind_to = argv[1];
    size_t message_size = (size_t) atoi (argv[2]);
    int roundtrip_count = atoi (argv[3]);

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_REP);
    if (!s || zmq_bind (s, bind_to) != 0) {
        printf ("error in zmq_socket/zmq_bind: %s\n", zmq_strerror (zmq_errno ()));
        return -1;
    }
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    for (int i = 0; i != roundtrip_count; i++) {
        if (zmq_recvmsg (s, &msg, 0) < 0 || zmq_msg_size (&msg) != message_size) {
            printf ("error in zmq_recvmsg or message of incorrect size\n");
            return -1;
        }
        if (zmq_sendmsg (s, &msg, 0) < 0) {
            printf ("error in zmq_sendmsg: %s\n", zmq_strerror (zmq_errno ()));
            return -1;
        }
    }
    zmq_msg_close (&msg);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
